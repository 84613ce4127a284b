package trace

import (
	"fmt"
	"slices"
	"strings"
)

// CostText prints a cost, or "unknown".
func CostText(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *c)
}

// Summary is the one-line account of a run: calls, tokens, cost, SQL.
func (r *Record) Summary() string {
	errors := "errors"
	if r.SQLErrors == 1 {
		errors = "error"
	}
	return fmt.Sprintf("%s · %d model calls · %d tool calls · %d in (%d cached) / %d out (%d reasoning) tokens · %s · %d SQL (%d %s) · %.1fs model + %.1fs waiting",
		r.StopReason, r.LLMCalls, r.toolTotal(), r.Usage.Input, r.Usage.Cached, r.Usage.Output, r.Usage.Reasoning,
		CostText(r.Cost), r.SQLAttempts, r.SQLErrors, errors, r.ModelSeconds, r.WaitSeconds)
}

func (r *Record) toolTotal() int {
	n := 0
	for _, c := range r.ToolCalls {
		n += c
	}
	return n
}

// List renders runs[from:] as tab-separated rows, newest last, numbered
// as Find reads them.
func List(runs []Record, from int) string {
	var b strings.Builder
	b.WriteString("#\tid\tstarted\tdatabase\tstrategy\tmodel\tstop\tcalls\ttokens in/out\tcost\tquestion\n")
	for i := from; i < len(runs); i++ {
		r := &runs[i]
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d/%d\t%s\t%s\n", i+1, r.ID, r.StartedAt.UTC().Format("2006-01-02 15:04"),
			r.Database, r.Strategy, r.Model, r.StopReason, r.LLMCalls, r.Usage.Input, r.Usage.Output, CostText(r.Cost), oneLine(r.Question, 60))
	}
	return b.String()
}

// strategyText is the run's strategy, and for auto the one it chose.
func (r *Record) strategyText() string {
	if r.AutoStrategy != "" {
		return r.Strategy + " (" + r.AutoStrategy + ")"
	}
	return r.Strategy
}

// Show renders one run step by step.
func Show(r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s  %s\n", r.ID, r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(&b, "question: %s\n", r.Question)
	if r.TaskID != "" {
		fmt.Fprintf(&b, "task:     %s\n", r.TaskID)
	}
	fmt.Fprintf(&b, "database: %s   strategy: %s   model: %s\n\n", r.Database, r.strategyText(), r.Model)
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "step %d  (%d in: %d cached, %d written to the cache, %d uncached; %d out tokens, %dms",
			s.N, s.Usage.Input, s.Usage.Cached, s.Usage.CacheWrite, s.Usage.Input-s.Usage.Cached-s.Usage.CacheWrite, s.Usage.Output, s.ModelMS)
		if s.WaitMS > 0 {
			fmt.Fprintf(&b, ", waited %dms over %d retries", s.WaitMS, s.Retries)
		}
		b.WriteString(")\n")
		if s.Text != "" {
			fmt.Fprintf(&b, "  says: %s\n", oneLine(s.Text, 100))
		}
		if s.Nudged {
			b.WriteString("  (answered in text; nudged to use the tools)\n")
		}
		if s.Truncated {
			b.WriteString("  (cut at the output token limit: its tool calls were not run; asked to go on more briefly)\n")
		}
		for _, c := range s.Calls {
			mark := ""
			if c.Error {
				mark = "  -> error"
			}
			fmt.Fprintf(&b, "  %s %s%s\n", c.Tool, oneLine(c.Arguments, 100), mark)
			fmt.Fprintf(&b, "    %s\n", oneLine(c.Result, 100))
		}
	}
	fmt.Fprintf(&b, "\nconcepts read: %s\n", strings.Join(r.ConceptsRead, ", "))
	fmt.Fprintf(&b, "%s\n", r.Summary())
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Error)
	}
	if r.RequestID != "" {
		fmt.Fprintf(&b, "request id of the failed call: %s\n", r.RequestID)
	}
	if r.Answer != nil {
		fmt.Fprintf(&b, "\nanswer: %s\n", r.Answer.Text)
		if r.Answer.SQL != "" {
			fmt.Fprintf(&b, "\n%s\n", r.Answer.SQL)
		}
	}
	return b.String()
}

// Compare renders runs side by side, one column per run.
func Compare(runs []*Record) string {
	rows := [][]string{{"id"}, {"question"}, {"database"}, {"strategy"}, {"model"}, {"stop"},
		{"model calls"}, {"tool calls"}, {"concepts read"}, {"SQL attempts"}, {"SQL errors"},
		{"input tokens"}, {"cached tokens"}, {"output tokens"}, {"reasoning tokens"}, {"cost"},
		{"model time"}, {"waiting"}, {"answer SQL"}}
	for _, r := range runs {
		sql := "-"
		if r.Answer != nil && r.Answer.SQL != "" {
			sql = oneLine(r.Answer.SQL, 40)
		}
		vals := []string{r.ID, oneLine(r.Question, 40), r.Database, r.strategyText(), r.Model, r.StopReason,
			fmt.Sprint(r.LLMCalls), fmt.Sprint(r.toolTotal()), fmt.Sprint(len(r.ConceptsRead)), fmt.Sprint(r.SQLAttempts), fmt.Sprint(r.SQLErrors),
			fmt.Sprint(r.Usage.Input), fmt.Sprint(r.Usage.Cached), fmt.Sprint(r.Usage.Output), fmt.Sprint(r.Usage.Reasoning), CostText(r.Cost),
			fmt.Sprintf("%.1fs", r.ModelSeconds), fmt.Sprintf("%.1fs", r.WaitSeconds), sql}
		for i := range rows {
			rows[i] = append(rows[i], vals[i])
		}
	}
	widths := make([]int, len(runs)+1)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, c := range row {
			pad := widths[i] - len([]rune(c))
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Concepts adds refs to a list in first-seen order.
func Concepts(list []string, refs ...string) []string {
	for _, ref := range refs {
		if !slices.Contains(list, ref) {
			list = append(list, ref)
		}
	}
	return list
}
