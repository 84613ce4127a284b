package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/trace"
)

// evalRowCap is how many rows eval fetches of each result, gold or
// predicted, so results compare whole.
const evalRowCap = 100000

// evalResult is one scored run, a line of <runs>/eval-results.jsonl.
type evalResult struct {
	Task     string `json:"task"`
	Database string `json:"database"`
	Strategy string `json:"strategy"`
	Model    string `json:"model"`
	Run      string `json:"run"`
	Correct  bool   `json:"correct"`
	Stop     string `json:"stop_reason"`
	// Note says why a run scored 0 beyond a wrong result.
	Note string `json:"note,omitempty"`
}

func (r evalResult) key() string { return r.Task + "\x00" + r.Strategy + "\x00" + r.Model }

func newEvalRunCmd(e *env) *cobra.Command {
	var (
		f           agentFlags
		questions   string
		strategies  []string
		models      []string
		concurrency int
		report      string
		htmlReport  string
	)
	c := &cobra.Command{
		Use:   "run --questions <jsonl>",
		Short: "Run the agent over a question set and score execution accuracy",
		Long: `Run asks every question of a set with each --strategy and --model, runs the
gold SQL and the submitted SQL through the guard, and scores execution
accuracy: LiveSQLBench tasks compare as its evaluator does (numbers rounded
to conditions.decimal places, dates normalised, order only when
conditions.order, duplicates dropped when conditions.distinct, and both
queries run again with their ROUND calls removed first), BIRD questions as
sets of rows.

Every run goes to the run log; every score to <runs>/eval-results.jsonl,
and a question already scored with a strategy and model is skipped, so an
interrupted run resumes where it stopped. The report (markdown) gives, per
strategy and model: accuracy, stop reasons, model calls, tokens, cost and
SQL errors.

Each question's database is --db if given, else its selected_database
(db_id for BIRD) looked up in okf.yaml.`,
		Example: `  okf eval run --questions ../shared/data/bird/questions.jsonl --db superhero --strategies context,engine
  okf eval run --questions lite_7db_train.jsonl --models mini,haiku --concurrency 4 --report eval.md`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if questions == "" {
				return usageError("--questions is required")
			}
			if htmlReport != "" && report == "" {
				return usageError("--html needs --report")
			}
			if concurrency < 1 {
				return usageError("--concurrency must be at least 1")
			}
			all, err := eval.LoadTasks(questions)
			if err != nil {
				return usageError("%v", err)
			}
			var tasks []eval.Task
			for _, t := range all {
				if !t.Management {
					tasks = append(tasks, t)
				}
			}
			if skipped := len(all) - len(tasks); skipped > 0 {
				fmt.Fprintf(e.stderr, "eval: skipping %d management tasks (they change the database; a read-only agent cannot do them)\n", skipped)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			r, err := newEvalRunner(ctx, e, &f, strategies, models)
			if err != nil {
				return err
			}
			defer r.close()
			if err := r.run(ctx, tasks, concurrency); err != nil {
				return err
			}
			rows, err := r.rows(tasks)
			if err != nil {
				return err
			}
			if report == "" {
				return writeMarkdown(e.stdout, len(tasks), rows)
			}
			if err := writeReport(report, len(tasks), rows, writeMarkdown); err != nil {
				return err
			}
			if htmlReport != "" {
				return writeReport(htmlReport, len(tasks), rows, writeHTML)
			}
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&questions, "questions", "", "the question set (JSON lines, LiveSQLBench or BIRD shape)")
	c.Flags().StringSliceVar(&strategies, "strategies", nil, "strategies to compare (comma-separated; default: --strategy)")
	c.Flags().StringSliceVar(&models, "models", nil, "models to compare (comma-separated; default: --model)")
	c.Flags().IntVar(&concurrency, "concurrency", 1, "questions asked at once (1 keeps a script provider's replies in order)")
	c.Flags().StringVar(&report, "report", "", "write the markdown report to this file instead of stdout")
	c.Flags().StringVar(&htmlReport, "html", "", "also write the report as a self-contained HTML page with charts (needs --report)")
	return c
}

type evalRunner struct {
	e          *env
	base       *agentSession
	strategies []agent.Strategy
	models     []llm.Client
	dbs        map[string]*agentSession

	mu      sync.Mutex
	done    map[string]evalResult
	results *os.File
}

func newEvalRunner(ctx context.Context, e *env, f *agentFlags, strategies, models []string) (*evalRunner, error) {
	cfg, err := loadAgentConfig(f.configPath)
	if err != nil {
		return nil, err
	}
	base := &agentSession{cfg: cfg, flags: f}
	r := &evalRunner{e: e, base: base, dbs: map[string]*agentSession{}, done: map[string]evalResult{}}
	if len(strategies) == 0 {
		strategies = []string{f.strategy}
	}
	for _, s := range strategies {
		if err := base.setStrategy(s); err != nil {
			return nil, err
		}
		r.strategies = append(r.strategies, base.strategy)
	}
	if len(models) == 0 {
		models = []string{f.model}
	}
	for _, m := range models {
		if err := base.setModel(m); err != nil {
			return nil, err
		}
		r.models = append(r.models, base.model)
	}
	dir := base.runsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runs folder: %w", err)
	}
	path := filepath.Join(dir, "eval-results.jsonl")
	if data, err := os.ReadFile(path); err == nil {
		for n, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var res evalResult
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
			}
			r.done[res.key()] = res
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	r.results, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return r, nil
}

func (r *evalRunner) close() {
	for _, s := range r.dbs {
		s.close()
	}
	r.results.Close()
}

// session opens (once) the database a task runs on, with a row cap high
// enough to compare whole results.
func (r *evalRunner) session(ctx context.Context, name string) (*agentSession, error) {
	if r.base.flags.db != "" {
		name = r.base.flags.db
	}
	if s, ok := r.dbs[name]; ok {
		return s, nil
	}
	s := &agentSession{cfg: r.base.cfg, flags: r.base.flags, rowCap: evalRowCap}
	if err := s.setDB(ctx, r.e, name); err != nil {
		return nil, err
	}
	r.dbs[name] = s
	return s, nil
}

type evalJob struct {
	task     eval.Task
	strategy agent.Strategy
	model    llm.Client
	db       *agentSession
}

func (r *evalRunner) run(ctx context.Context, tasks []eval.Task, concurrency int) error {
	var jobs []evalJob
	for _, t := range tasks {
		db, err := r.session(ctx, t.Database)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		for _, s := range r.strategies {
			for _, m := range r.models {
				if _, ok := r.done[evalResult{Task: t.ID, Strategy: string(s), Model: m.Name()}.key()]; !ok {
					jobs = append(jobs, evalJob{t, s, m, db})
				}
			}
		}
	}
	fmt.Fprintf(r.e.stderr, "eval: %d runs to do, %d already scored\n", len(jobs), len(r.done))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var firstErr error
	for i, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.one(ctx, i+1, len(jobs), j); err != nil {
				r.mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				r.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func (r *evalRunner) one(ctx context.Context, n, total int, j evalJob) error {
	s := j.db
	out := agent.Run(ctx, agent.Config{
		Model: j.model, DB: s.db, Database: s.dbName, Dialect: s.dialect, Knowledge: s.know,
		Strategy: j.strategy, MaxSteps: r.base.maxSteps(), ContextBudget: r.base.cfg.Agent.ContextBudget,
	}, j.task.Text, j.task.ID)
	if ctx.Err() != nil {
		return nil // interrupted: leave the task unscored, to be run again
	}
	r.mu.Lock()
	_, err := r.base.record(ctx, r.e.stderr, out.Record)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	res := evalResult{Task: j.task.ID, Database: s.dbName, Strategy: string(j.strategy), Model: j.model.Name(), Run: out.Record.ID, Stop: out.Record.StopReason}
	res.Correct, res.Note = r.score(ctx, s, j.task, out)
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[res.key()] = res
	if _, err := r.results.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	mark := "wrong"
	if res.Correct {
		mark = "correct"
	}
	fmt.Fprintf(r.e.stderr, "[%d/%d] %s %s %s: %s, %s\n", n, total, j.task.ID, j.strategy, j.model.Name(), res.Stop, mark)
	return nil
}

// score compares the submitted SQL's result with the gold SQL's. For
// LiveSQLBench tasks both queries run again with their ROUND calls
// removed, as its evaluator does; the comparison rounds instead.
func (r *evalRunner) score(ctx context.Context, s *agentSession, t eval.Task, out agent.Outcome) (bool, string) {
	if out.Record.Answer == nil || out.Record.Answer.SQL == "" {
		return false, "no SQL submitted"
	}
	goldSQL, predSQL := t.Gold, out.Record.Answer.SQL
	pred := out.Rows
	if !t.Compare.BIRD {
		goldSQL, predSQL = eval.RemoveRound(goldSQL), eval.RemoveRound(predSQL)
		var err error
		if pred, err = s.db.Query(ctx, "okf eval", predSQL); err != nil {
			return false, "the submitted SQL fails without ROUND: " + foldLine(err.Error(), 200)
		}
	}
	gold, err := s.db.Query(ctx, "okf eval", goldSQL)
	switch {
	case err != nil:
		return false, "gold SQL failed: " + foldLine(err.Error(), 200)
	case gold.Truncated() || pred.Truncated():
		return false, fmt.Sprintf("a result has more than %d rows", evalRowCap)
	}
	return eval.SameResult(gold.Rows, pred.Rows, t.Compare), ""
}

// evalRow is one strategy and model's totals over the question set.
type evalRow struct {
	Strategy, Model           string
	Scored, Correct           int
	Stops                     map[string]int
	Calls, In, Out, SQLErrors int
	Cost                      float64
	CostKnown                 bool
}

func (r evalRow) accuracy() float64 { return 100 * float64(r.Correct) / float64(r.Scored) }

func (r evalRow) costText() string {
	if !r.CostKnown {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", r.Cost)
}

// rows totals the scores of this question set per strategy and model,
// sorted by strategy, then model.
func (r *evalRunner) rows(tasks []eval.Task) ([]evalRow, error) {
	runs, err := trace.Load(r.base.runsDir())
	if err != nil {
		return nil, err
	}
	byID := map[string]*trace.Record{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	cells := map[[2]string]*evalRow{}
	for _, t := range tasks {
		for _, s := range r.strategies {
			for _, m := range r.models {
				res, ok := r.done[evalResult{Task: t.ID, Strategy: string(s), Model: m.Name()}.key()]
				if !ok {
					continue
				}
				k := [2]string{string(s), m.Name()}
				c := cells[k]
				if c == nil {
					c = &evalRow{Strategy: k[0], Model: k[1], Stops: map[string]int{}, CostKnown: true}
					cells[k] = c
				}
				c.Scored++
				if res.Correct {
					c.Correct++
				}
				c.Stops[res.Stop]++
				if rec := byID[res.Run]; rec != nil {
					c.Calls += rec.LLMCalls
					c.In += rec.Usage.Input
					c.Out += rec.Usage.Output
					c.SQLErrors += rec.SQLErrors
					if rec.Cost == nil {
						c.CostKnown = false
					} else {
						c.Cost += *rec.Cost
					}
				}
			}
		}
	}
	var out []evalRow
	for _, c := range cells {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Strategy != out[j].Strategy {
			return out[i].Strategy < out[j].Strategy
		}
		return out[i].Model < out[j].Model
	})
	return out, nil
}

// writeMarkdown writes the report as a markdown table.
func writeMarkdown(w io.Writer, questions int, rows []evalRow) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Execution accuracy\n\n%d questions.\n\n", questions)
	b.WriteString("| strategy | model | scored | correct | accuracy | submitted | declined | step limit | error | model calls | input tokens | output tokens | cost | SQL errors |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f%% | %d | %d | %d | %d | %d | %d | %d | %s | %d |\n",
			c.Strategy, c.Model, c.Scored, c.Correct, c.accuracy(), c.Stops[trace.Submitted], c.Stops[trace.Declined],
			c.Stops[trace.StepLimit], c.Stops[trace.Failed], c.Calls, c.In, c.Out, c.costText(), c.SQLErrors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeReport writes a report to a temporary file, then renames it over
// path, so an interrupted write leaves nothing half-written.
func writeReport(path string, questions int, rows []evalRow, write func(io.Writer, int, []evalRow) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".okf-report-*")
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp, questions, rows); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
