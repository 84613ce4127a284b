package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/atomicfile"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/trace"
)

func newEvalRunCmd(e *env) *cobra.Command {
	var (
		f           agentFlags
		questions   string
		strategies  []string
		models      []string
		concurrency int
		repeat      int
		report      string
		htmlReport  string
		promote     string
	)
	c := &cobra.Command{
		Use:   "run --questions <jsonl>",
		Short: "Run the agent over a question set and score execution accuracy",
		Long: `Run asks every question of a set with each --strategy and --model, --repeat
times each, runs the gold SQL and the submitted SQL through the guard, and
scores execution accuracy: LiveSQLBench tasks compare as its evaluator does
(numbers rounded to conditions.decimal places, dates normalised, order only
when conditions.order, duplicates dropped when conditions.distinct, and both
queries run again with their ROUND calls removed first), BIRD questions as
sets of rows.

The strategies differ only in the knowledge the agent gets (the SQL tools
are the same):

  schema   every table's schema, no business knowledge (the baseline)
  raw      every document pasted
  browse   the bundle's files, read from index.md down
  engine   manifest, search and get
  context  one context pack, then get (the default)
  auto     raw when pasting the documents once is cheaper than a pack for
           each of the database's questions in the set, context otherwise

Every run goes to the run log; every outcome to <runs>/eval-results.jsonl
with its reason (correct, wrong_values, missing_rows, extra_rows,
missing_columns, extra_columns, empty_result, sql_error, no_answer,
gold_error, model_error). A run already scored is skipped, so an
interrupted eval resumes where it stopped, repeats included; a run the
model endpoint failed is not scored and is asked again. The report
(markdown) gives, per strategy and model: accuracy with its 95% Wilson
interval, tokens, cost and cost per correct answer, model calls and SQL
errors; then the reasons of the misses, each question's pass rate, each
miss with its run, and the questions skipped. Management tasks (they
change the database) are skipped: their test_cases are Python that okf
does not run. okf eval compare pairs two strategies or models.

Each question's database is --db if given, else its selected_database
(db_id for BIRD) looked up in okf.yaml.

--promote DIR makes every correct answer a draft query concept in
DIR/<bundle>/queries/ (as okf runs promote does), for a person to review;
drafts already there are left as they are.`,
		Example: `  okf eval run --questions bird/questions.jsonl --db superhero --strategies context,engine
  okf eval run --questions shop_questions.jsonl --db shop --strategies schema,raw,browse,engine --repeat 3
  okf eval run --questions lite_7db_train.jsonl --models mini,haiku --concurrency 4 --report eval.md --html eval.html
  okf eval run --questions shop_questions.jsonl --db shop --promote bundles`,
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
			if repeat < 1 {
				return usageError("--repeat must be at least 1")
			}
			all, err := eval.LoadTasks(questions)
			if err != nil {
				return usageError("%v", err)
			}
			tasks, skipped := eval.Askable(all)
			if len(skipped) > 0 {
				fmt.Fprintf(e.stderr, "eval: skipping %d management tasks (they change the database, and their test_cases are Python okf does not run)\n", len(skipped))
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			a, err := newEvalAsker(e, &f, strategies, models)
			if err != nil {
				return err
			}
			defer a.close()
			r, err := eval.NewRunner(filepath.Join(a.base.runsDir(), eval.ResultsFile), a, a.strategies, a.models, repeat)
			if err != nil {
				return err
			}
			defer r.Close()
			if err := a.open(ctx, tasks); err != nil {
				return err
			}
			// Runs the endpoint failed are reported, then fail the eval.
			var failed *eval.FailedRuns
			if err := r.Run(ctx, tasks, concurrency, e.stderr); err != nil && !errors.As(err, &failed) {
				return err
			}
			if err := a.auditErr(); err != nil {
				return err
			}
			runs, broken, err := trace.LoadChecked(a.base.runsDir())
			if err != nil {
				return err
			}
			if w := trace.BrokenWarning(a.base.runsDir(), broken); w != "" {
				fmt.Fprintln(e.stderr, "okf: warning:", w)
			}
			if promote != "" {
				if err := promoteCorrect(e, promote, r.CorrectRuns(tasks), runs); err != nil {
					return err
				}
			}
			rep := r.Report(tasks, runs, skipped)
			if report == "" {
				err = eval.WriteMarkdown(e.stdout, rep)
			} else if err = writeReport(report, rep, eval.WriteMarkdown); err == nil && htmlReport != "" {
				err = writeReport(htmlReport, rep, eval.WriteHTML)
			}
			if err != nil {
				return err
			}
			if failed != nil {
				return failed
			}
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&questions, "questions", "", "the question set (JSON lines, LiveSQLBench or BIRD shape)")
	c.Flags().StringSliceVar(&strategies, "strategies", nil, "strategies to compare (comma-separated; default: --strategy)")
	c.Flags().StringSliceVar(&models, "models", nil, "models to compare (comma-separated; default: --model)")
	c.Flags().IntVar(&concurrency, "concurrency", 1, "questions asked at once (1 keeps a script provider's replies in order)")
	c.Flags().IntVar(&repeat, "repeat", 1, "how many times each question is asked with each strategy and model (a model varies even at temperature 0)")
	c.Flags().StringVar(&report, "report", "", "write the markdown report to this file instead of stdout")
	c.Flags().StringVar(&promote, "promote", "", "write every correct answer as a draft query concept into this folder of bundles")
	c.Flags().StringVar(&htmlReport, "html", "", "also write the report as a self-contained HTML page with charts (needs --report)")
	return c
}

// evalAsker asks the agent a task on the session of the task's database,
// opened before the run, and appends the run to the run log.
type evalAsker struct {
	e          *env
	base       *agentSession
	strategies []string
	models     []string
	clients    map[string]llm.Client
	dbs        map[string]*agentSession
	// questions counts the tasks of each database, the session the auto
	// strategy decides for.
	questions map[string]int
	// mu keeps runs asked at once from writing the run log together.
	mu sync.Mutex
}

func newEvalAsker(e *env, f *agentFlags, strategies, models []string) (*evalAsker, error) {
	cfg, err := loadAgentConfig(f.configPath)
	if err != nil {
		return nil, err
	}
	base := &agentSession{cfg: cfg, flags: f}
	a := &evalAsker{e: e, base: base, clients: map[string]llm.Client{}, dbs: map[string]*agentSession{}, questions: map[string]int{}}
	if len(strategies) == 0 {
		strategies = []string{f.strategy}
	}
	for _, s := range strategies {
		if err := base.setStrategy(s); err != nil {
			return nil, err
		}
		a.strategies = append(a.strategies, string(base.strategy))
	}
	if len(models) == 0 {
		models = []string{f.model}
	}
	for _, m := range models {
		if err := base.setModel(m); err != nil {
			return nil, err
		}
		a.models = append(a.models, base.model.Name())
		// Questions asked at once wait for the model's first call, so a
		// rejected key stops the eval at one request.
		a.clients[base.model.Name()] = llm.FirstAlone(base.model)
	}
	if err := os.MkdirAll(base.runsDir(), 0o755); err != nil {
		return nil, fmt.Errorf("runs folder: %w", err)
	}
	return a, nil
}

func (a *evalAsker) close() {
	for _, s := range a.dbs {
		s.close()
	}
}

// auditErr is the first audit log failure of the databases, by name.
func (a *evalAsker) auditErr() error {
	for _, name := range slices.Sorted(maps.Keys(a.dbs)) {
		if err := a.dbs[name].audit.Err(); err != nil {
			return err
		}
	}
	return nil
}

// dbName is the database a task runs on: --db, else the task's own.
func (a *evalAsker) dbName(t eval.Task) string {
	if a.base.flags.db != "" {
		return a.base.flags.db
	}
	return t.Database
}

// open opens the database of every task, once each, with a row cap high
// enough to compare whole results, so that a database that cannot be
// opened stops the eval before any question is asked.
func (a *evalAsker) open(ctx context.Context, tasks []eval.Task) error {
	today, err := a.base.flags.clock()
	if err != nil {
		return err
	}
	for _, t := range tasks {
		name := a.dbName(t)
		a.questions[name]++
		if _, ok := a.dbs[name]; ok {
			continue
		}
		s := &agentSession{cfg: a.base.cfg, flags: a.base.flags, rowCap: eval.RowCap, today: today}
		if err := s.setDB(ctx, a.e, name); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		a.dbs[name] = s
	}
	return nil
}

func (a *evalAsker) Ask(ctx context.Context, t eval.Task, strategy, model string) (eval.Attempt, error) {
	s := a.dbs[a.dbName(t)]
	cfg := s.agentConfig(a.clients[model], agent.Strategy(strategy))
	cfg.Questions = a.questions[a.dbName(t)]
	out := agent.Run(ctx, cfg, t.Text, t.ID)
	var notAsked *llm.NotAsked
	switch {
	case errors.As(out.ModelErr, &notAsked) && out.Record.LLMCalls == 0:
		// Refused before it sent anything, an earlier call having been
		// refused for good: no run, and the eval stops.
		return eval.Attempt{}, fmt.Errorf("stopping the eval: %w", out.ModelErr)
	case llm.Permanent(out.ModelErr):
		// Ended by the model's refusal, not by the eval stopping since
		// (another question's refusal may have stopped it): recorded.
	case ctx.Err() != nil:
		return eval.Attempt{}, ctx.Err()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.base.record(a.e.stderr, out.Record); err != nil {
		return eval.Attempt{}, err
	}
	// An audit failure stops the eval: no more questions run unaudited.
	if err := a.auditErr(); err != nil {
		return eval.Attempt{}, err
	}
	// So does a model every call fails the same way (a rejected key).
	if llm.Permanent(out.ModelErr) {
		return eval.Attempt{}, fmt.Errorf("stopping the eval: %w", out.ModelErr)
	}
	return eval.Attempt{Record: out.Record, Rows: out.Rows, DB: s.db}, nil
}

// writeReport writes a report whole, so an interrupted write leaves
// nothing half-written.
func writeReport(path string, rep eval.Report, write func(io.Writer, eval.Report) error) error {
	var b bytes.Buffer
	if err := write(&b, rep); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
