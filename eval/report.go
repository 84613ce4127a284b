package eval

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// Report is an execution-accuracy eval's outcome: totals per strategy and
// model, each question's pass rate, every miss with its run, and the
// questions left out.
type Report struct {
	// Questions is how many tasks were asked, each Repeat times with each
	// strategy and model.
	Questions, Repeat int
	Rows              []Totals
	// PassRates hold each question's rate in each of Rows, in their order.
	PassRates []PassRates
	// Misses are the runs not scored correct, model errors included, in
	// task, strategy, model and repeat order.
	Misses  []Score
	Skipped []Skip
}

// Totals are one strategy and model's totals over a question set.
type Totals struct {
	Strategy, Model string
	// Scored runs, and those correct; model errors are not scored.
	Scored, Correct int
	// Reasons counts the outcomes by reason, model errors included.
	Reasons                   map[string]int
	Calls, In, Out, SQLErrors int
	Cost                      float64
	// CostKnown is false when any run's price was unknown.
	CostKnown bool
	// Unlogged counts scored runs missing from the run log, whose calls,
	// tokens and cost are unknown.
	Unlogged int
}

// PassRates are one question's rates, one per strategy and model.
type PassRates struct {
	Task  string
	Rates []Rate
}

// Rate is how many of a question's scored runs were correct.
type Rate struct{ Correct, Scored int }

func (r Rate) String() string {
	if r.Scored == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.Correct, r.Scored)
}

// Accuracy is the share of scored runs that were correct, 0 for none.
func (t Totals) Accuracy() float64 {
	if t.Scored == 0 {
		return 0
	}
	return float64(t.Correct) / float64(t.Scored)
}

// Interval is the accuracy's 95% Wilson score interval.
func (t Totals) Interval() (lo, hi float64) { return Wilson(t.Correct, t.Scored) }

// TokensPerRun is the mean input and output tokens of a scored run.
func (t Totals) TokensPerRun() float64 {
	if t.Scored == 0 {
		return 0
	}
	return float64(t.In+t.Out) / float64(t.Scored)
}

func (t Totals) accuracyText() string {
	if t.Scored == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*t.Accuracy())
}

func (t Totals) intervalText() string {
	if t.Scored == 0 {
		return "-"
	}
	lo, hi := t.Interval()
	return fmt.Sprintf("%.1f–%.1f%%", 100*lo, 100*hi)
}

func (t Totals) tokensText() string {
	if t.Scored == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", t.TokensPerRun())
}

func (t Totals) costKnown() bool { return t.CostKnown && t.Unlogged == 0 }

func (t Totals) costText() string {
	if !t.costKnown() {
		return "unknown"
	}
	return dollars(t.Cost)
}

// costPerCorrectText is what one correct answer cost: every scored run's
// cost over the correct ones.
func (t Totals) costPerCorrectText() string {
	switch {
	case !t.costKnown():
		return "unknown"
	case t.Correct == 0:
		return "-"
	}
	return dollars(t.Cost / float64(t.Correct))
}

// dollars prints an amount with at least three significant digits.
func dollars(v float64) string {
	d := 4
	for v > 0 && d < 9 && v*pow10(d) < 100 {
		d++
	}
	return "$" + strconv.FormatFloat(v, 'f', d, 64)
}

func pow10(n int) float64 {
	p := 1.0
	for range n {
		p *= 10
	}
	return p
}

func (t Totals) label() string { return t.Strategy + " · " + t.Model }

// mdCell keeps a value inside its markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// WriteMarkdown writes the report as markdown: the totals, why runs
// missed, each question's pass rate, the misses with their runs, and the
// questions skipped.
func WriteMarkdown(w io.Writer, rep Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Execution accuracy\n\n%s\n\n", rep.intro())
	b.WriteString("| strategy | model | runs | correct | accuracy | 95% interval | input tokens | output tokens | tokens per run | cost | cost per correct | model calls | SQL errors |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range rep.Rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %d | %d | %s | %s | %s | %d | %d |\n",
			mdCell(c.Strategy), mdCell(c.Model), c.Scored, c.Correct, c.accuracyText(), c.intervalText(), c.In, c.Out,
			c.tokensText(), c.costText(), c.costPerCorrectText(), c.Calls, c.SQLErrors)
	}
	for _, c := range rep.Rows {
		if c.Unlogged > 0 {
			fmt.Fprintf(&b, "\n%s: %d scored runs are not in the run log, so their tokens and cost are not counted.\n", mdCell(c.label()), c.Unlogged)
		}
	}
	b.WriteString("\n## Why runs missed\n\n| strategy | model |")
	for _, r := range MissReasons {
		b.WriteString(" " + r + " |")
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", len(MissReasons)) + "\n")
	for _, c := range rep.Rows {
		fmt.Fprintf(&b, "| %s | %s |", mdCell(c.Strategy), mdCell(c.Model))
		for _, r := range MissReasons {
			fmt.Fprintf(&b, " %d |", c.Reasons[r])
		}
		b.WriteString("\n")
	}
	if rep.modelErrors() {
		b.WriteString("\nA model_error run is not scored: the endpoint failed, and the next eval asks it again.\n")
	}
	b.WriteString("\n## Pass rate per question\n\n| question |")
	for _, c := range rep.Rows {
		b.WriteString(" " + mdCell(c.label()) + " |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(rep.Rows)) + "\n")
	for _, q := range rep.PassRates {
		fmt.Fprintf(&b, "| %s |", mdCell(q.Task))
		for _, r := range q.Rates {
			b.WriteString(" " + r.String() + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Misses\n\n")
	if len(rep.Misses) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("Each run not scored correct; `okf runs show <run>` shows it step by step.\n\n")
		b.WriteString("| question | strategy | model | repeat | reason | stop | run | note |\n| --- | --- | --- | ---: | --- | --- | --- | --- |\n")
		for _, m := range rep.Misses {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", mdCell(m.Task), mdCell(m.Strategy), mdCell(m.Model), m.Repeat,
				reasonText(m.Reason), m.Stop, mdCell(m.Run), mdCell(m.Note))
		}
	}
	if len(rep.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n| question | why |\n| --- | --- |\n")
		for _, s := range rep.Skipped {
			fmt.Fprintf(&b, "| %s | %s |\n", mdCell(s.Question), mdCell(s.Reason))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// intro says what was asked, and how accuracy is counted.
func (rep Report) intro() string {
	asked := fmt.Sprintf("%d questions", rep.Questions)
	if rep.Repeat > 1 {
		asked += fmt.Sprintf(", each asked %d times with each strategy and model", rep.Repeat)
	}
	return asked + ". Accuracy is over the scored runs, with its 95% Wilson interval; a run the model endpoint failed is not scored."
}

func (rep Report) modelErrors() bool {
	for _, c := range rep.Rows {
		if c.Reasons[ModelError] > 0 {
			return true
		}
	}
	return false
}

// reasonText is a miss's reason, or what a line from before reasons were
// recorded says.
func reasonText(r string) string {
	if r == "" {
		return "wrong (no reason recorded)"
	}
	return r
}

//go:embed report.html.tmpl
var reportHTMLText string

var reportHTML = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"accuracy":       Totals.accuracyText,
		"interval":       Totals.intervalText,
		"tokens":         Totals.tokensText,
		"cost":           Totals.costText,
		"costPerCorrect": Totals.costPerCorrectText,
		"label":          Totals.label,
		"reason":         reasonText,
	}).Parse(reportHTMLText))
}}

// The bar charts' layout, in pixels: a row a strategy and model, its
// label on the left, then the bar, then its value.
const (
	chartWidth = 620
	barHeight  = 22
	barGap     = 6
	labelWidth = 200
	// valueWidth is left right of the longest bar, for its value.
	valueWidth = 170
	barSpan    = chartWidth - labelWidth - valueWidth
)

// reasonColour colours a reason in the chart of misses; a switch, not a
// map, so that nothing is built when the package is loaded.
func reasonColour(reason string) string {
	switch reason {
	case Correct:
		return "#4a9a5b"
	case WrongValues:
		return "#c0504d"
	case MissingRows:
		return "#e07b39"
	case ExtraRows:
		return "#e8a33d"
	case MissingColumns:
		return "#8e5ea2"
	case ExtraColumns:
		return "#b07cc6"
	case EmptyResult:
		return "#7f7f7f"
	case SQLError:
		return "#a0522d"
	case NoAnswer:
		return "#bbbbbb"
	case GoldError:
		return "#5b7fa6"
	}
	return "#333333" // ModelError
}

type chart struct {
	Title         string
	Width, Height int
	Bars          []bar
	// Legend names the colours of a stacked chart.
	Legend []swatch
}

type swatch struct{ Name, Colour string }

type bar struct {
	Label    string
	Y        int
	Height   int
	TextY    int
	Segments []segment
	// Whisker, when set, draws an interval across the bar.
	Whisker *whisker
	TextX   float64
	Value   string
}

type segment struct {
	X, Width float64
	Colour   string
	Title    string
}

type whisker struct {
	X1, X2       float64
	Y, Top, Foot int
}

func newChart(title string, n int) chart {
	return chart{Title: title, Width: chartWidth, Height: n*(barHeight+barGap) + 4}
}

func barAt(i int, label string) bar {
	y := i*(barHeight+barGap) + 2
	return bar{Label: label, Y: y, Height: barHeight, TextY: y + barHeight - 6}
}

// valueChart draws one bar a row, the longest for the highest value;
// value gives a row's value and the text shown beside its bar.
func valueChart(title string, rows []Totals, value func(Totals) (float64, string)) chart {
	c := newChart(title, len(rows))
	most := 0.0
	for _, r := range rows {
		v, _ := value(r)
		most = max(most, v)
	}
	for i, r := range rows {
		v, text := value(r)
		length := 0.0
		if most > 0 {
			length = v / most * barSpan
		}
		b := barAt(i, r.label())
		b.Segments = []segment{{X: labelWidth, Width: length, Colour: "#4a7fb5"}}
		b.TextX, b.Value = labelWidth+length+6, text
		c.Bars = append(c.Bars, b)
	}
	return c
}

// accuracyChart draws accuracy on a fixed scale of 0 to 100%, with its
// interval as a whisker, so that overlapping intervals show.
func accuracyChart(rows []Totals) chart {
	c := newChart("Accuracy, with its 95% interval", len(rows))
	for i, r := range rows {
		b := barAt(i, r.label())
		b.Segments = []segment{{X: labelWidth, Width: r.Accuracy() * barSpan, Colour: "#4a7fb5"}}
		b.TextX, b.Value = labelWidth+barSpan+6, r.accuracyText()
		if r.Scored > 0 {
			lo, hi := r.Interval()
			mid := b.Y + barHeight/2
			b.Whisker = &whisker{X1: labelWidth + lo*barSpan, X2: labelWidth + hi*barSpan, Y: mid, Top: mid - 6, Foot: mid + 6}
			b.Value += " (" + r.intervalText() + ")"
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// reasonChart stacks each row's outcomes by reason, over all its runs.
func reasonChart(rows []Totals) chart {
	c := newChart("Outcomes by reason", len(rows))
	reasons := append([]string{Correct}, MissReasons...)
	used := map[string]bool{}
	for i, r := range rows {
		b := barAt(i, r.label())
		total := 0
		for _, name := range reasons {
			total += r.Reasons[name]
		}
		x := float64(labelWidth)
		for _, name := range reasons {
			n := r.Reasons[name]
			if n == 0 {
				continue
			}
			used[name] = true
			w := float64(n) / float64(total) * barSpan
			b.Segments = append(b.Segments, segment{X: x, Width: w, Colour: reasonColour(name), Title: fmt.Sprintf("%s: %d", name, n)})
			x += w
		}
		b.TextX, b.Value = labelWidth+barSpan+6, fmt.Sprintf("%d runs", total)
		c.Bars = append(c.Bars, b)
	}
	for _, name := range reasons {
		if used[name] {
			c.Legend = append(c.Legend, swatch{name, reasonColour(name)})
		}
	}
	return c
}

// WriteHTML writes the report as one self-contained page (no script, no
// network): the totals, charts of accuracy with its interval, outcomes by
// reason, tokens, cost per correct answer and model calls per strategy and
// model, drawn as inline SVG, then the pass rates, misses and skipped
// questions.
func WriteHTML(w io.Writer, rep Report) error {
	rows := rep.Rows
	charts := []chart{
		accuracyChart(rows),
		reasonChart(rows),
		valueChart("Tokens per run (input + output)", rows, func(r Totals) (float64, string) { return r.TokensPerRun(), r.tokensText() }),
		valueChart("Cost per correct answer", rows, func(r Totals) (float64, string) {
			if !r.costKnown() || r.Correct == 0 {
				return 0, r.costPerCorrectText()
			}
			return r.Cost / float64(r.Correct), r.costPerCorrectText()
		}),
		valueChart("Model calls per run", rows, func(r Totals) (float64, string) {
			if r.Scored == 0 {
				return 0, "-"
			}
			v := float64(r.Calls) / float64(r.Scored)
			return v, fmt.Sprintf("%.1f", v)
		}),
	}
	return reportHTML.Get().Execute(w, struct {
		Intro   string
		Report  Report
		Reasons []string
		Charts  []chart
	}{rep.intro(), rep, MissReasons, charts})
}
