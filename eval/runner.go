package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// RowCap is how many rows a run's database must return of each result,
// gold or submitted, so that results compare whole.
const RowCap = 100000

// Score is one scored run, a line of the results file.
type Score struct {
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

type scoreKey struct{ task, strategy, model string }

func (s Score) key() scoreKey { return scoreKey{s.Task, s.Strategy, s.Model} }

// Asker asks the agent one task with a strategy and a model, and records
// the run in the run log. Interrupted (ctx done), it returns without
// recording, so that the run is asked again on resume.
type Asker interface {
	Ask(ctx context.Context, t Task, strategy, model string) (Attempt, error)
}

// Attempt is one recorded run of a task.
type Attempt struct {
	Record *trace.Record
	// Rows are the submitted SQL's rows, nil when none was submitted.
	Rows *sqlguard.Result
	// DB is the database the run asked, where the gold SQL runs, with a
	// row cap of at least RowCap.
	DB Querier
}

// Querier runs SQL through the guard; *sqlguard.DB is one.
type Querier interface {
	Query(ctx context.Context, caller, sql string, args ...any) (*sqlguard.Result, error)
}

// Runner asks every task with every strategy and model and scores the
// runs. Each score is appended to the results file (JSON lines) as soon
// as it is known, and a run already scored there is not asked again, so
// an interrupted eval resumes where it stopped.
type Runner struct {
	asker      Asker
	strategies []string
	models     []string

	mu      sync.Mutex
	scores  map[scoreKey]Score
	results *os.File
	// failed counts the runs that ended in an error (an endpoint that
	// failed, a model that could not be reached): never scored, so that
	// the next run of the eval asks them again. firstFailure is the first
	// one's message.
	failed       int
	firstFailure string
}

// NewRunner reads the scores already in the results file at path and
// opens it for appending.
func NewRunner(path string, a Asker, strategies, models []string) (*Runner, error) {
	r := &Runner{asker: a, strategies: strategies, models: models, scores: map[scoreKey]Score{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var s Score
		// A line a crash cut short is no score: that run is asked again.
		// So is a run that failed, which older versions scored as wrong.
		if json.Unmarshal([]byte(line), &s) != nil || s.Stop == trace.Failed {
			continue
		}
		r.scores[s.key()] = s
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// The torn line ends here, so the next score starts a line.
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	r.results = f
	return r, nil
}

// Close closes the results file.
func (r *Runner) Close() error { return r.results.Close() }

type job struct {
	task            Task
	strategy, model string
}

// Run asks, concurrency at a time, each task with each strategy and model
// not scored yet, writing a line to progress as each run is scored. An
// interrupted Run returns ctx's error and leaves the runs it was asking
// unscored; so does an Asker's error, which stops the eval at once: no
// further run is asked, and those in flight are interrupted.
func (r *Runner) Run(ctx context.Context, tasks []Task, concurrency int, progress io.Writer) error {
	outer := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var jobs []job
	for _, t := range tasks {
		for _, s := range r.strategies {
			for _, m := range r.models {
				if _, ok := r.scores[scoreKey{t.ID, s, m}]; !ok {
					jobs = append(jobs, job{t, s, m})
				}
			}
		}
	}
	fmt.Fprintf(progress, "eval: %d runs to do, %d already scored\n", len(jobs), len(r.scores))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var firstErr error
	for i, j := range jobs {
		// Checked once a slot is free: the eval may have been interrupted
		// while waiting for it.
		sem <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.one(ctx, i+1, len(jobs), j, progress); err != nil {
				r.mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				r.mu.Unlock()
				stop()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := outer.Err(); err != nil {
		return err
	}
	if r.failed > 0 {
		return fmt.Errorf("%d runs failed and were not scored (the first: %s); run the eval again to retry them", r.failed, r.firstFailure)
	}
	return nil
}

func (r *Runner) one(ctx context.Context, n, total int, j job, progress io.Writer) error {
	a, err := r.asker.Ask(ctx, j.task, j.strategy, j.model)
	if ctx.Err() != nil {
		return nil // interrupted: leave the run unscored, to be asked again
	}
	if err != nil {
		return err
	}
	if a.Record.StopReason == trace.Failed {
		// An endpoint failure is not an answer: nothing to score.
		r.mu.Lock()
		defer r.mu.Unlock()
		r.failed++
		if r.firstFailure == "" {
			r.firstFailure = a.Record.Error
		}
		fmt.Fprintf(progress, "[%d/%d] %s %s %s: failed, not scored: %s\n", n, total, j.task.ID, j.strategy, j.model, a.Record.Error)
		return nil
	}
	s := Score{Task: j.task.ID, Database: a.Record.Database, Strategy: j.strategy, Model: j.model, Run: a.Record.ID, Stop: a.Record.StopReason}
	s.Correct, s.Note = score(ctx, j.task, a)
	if ctx.Err() != nil {
		return nil // interrupted while scoring: the queries were cancelled, not wrong
	}
	line, err := json.Marshal(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scores[s.key()] = s
	if _, err := r.results.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	mark := "wrong"
	if s.Correct {
		mark = "correct"
	}
	fmt.Fprintf(progress, "[%d/%d] %s %s %s: %s, %s\n", n, total, j.task.ID, j.strategy, j.model, s.Stop, mark)
	return nil
}

// score compares the submitted SQL's result with the gold SQL's. For
// LiveSQLBench tasks both queries run again with their ROUND calls
// removed, as its evaluator does; the comparison rounds instead.
func score(ctx context.Context, t Task, a Attempt) (bool, string) {
	if a.Record.Answer == nil || a.Record.Answer.SQL == "" {
		return false, "no SQL submitted"
	}
	goldSQL, predSQL := t.Gold, a.Record.Answer.SQL
	pred := a.Rows
	if !t.Compare.BIRD {
		goldSQL, predSQL = RemoveRound(goldSQL), RemoveRound(predSQL)
		var err error
		if pred, err = a.DB.Query(ctx, "okf eval", predSQL); err != nil {
			return false, failure("the submitted SQL fails without ROUND", err)
		}
	}
	gold, err := a.DB.Query(ctx, "okf eval", goldSQL)
	switch {
	case err != nil:
		return false, failure("gold SQL failed", err)
	case gold.Truncated() || pred.Truncated():
		return false, fmt.Sprintf("a result has more than %d rows", RowCap)
	}
	return SameResult(gold.Rows, pred.Rows, t.Compare), ""
}

// failure is the note of a failed query: the error on one line, cut to
// 200 runes, so that a results line stays one short line.
func failure(what string, err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:199]) + "…"
	}
	return what + ": " + msg
}

// Totals are one strategy and model's totals over a question set.
type Totals struct {
	Strategy, Model           string
	Scored, Correct           int
	Stops                     map[string]int
	Calls, In, Out, SQLErrors int
	Cost                      float64
	// CostKnown is false when any run's price was unknown.
	CostKnown bool
}

// CorrectRuns are the ids of the runs scored correct on the tasks, in task,
// strategy and model order.
func (r *Runner) CorrectRuns(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		for _, s := range r.strategies {
			for _, m := range r.models {
				if sc, ok := r.scores[scoreKey{t.ID, s, m}]; ok && sc.Correct {
					out = append(out, sc.Run)
				}
			}
		}
	}
	return out
}

// Totals totals the scores of the tasks per strategy and model, sorted by
// strategy, then model; runs are the run log's records, which hold the
// calls, tokens, cost and SQL errors of each scored run.
func (r *Runner) Totals(tasks []Task, runs []trace.Record) []Totals {
	byID := map[string]*trace.Record{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	cells := map[[2]string]*Totals{}
	for _, t := range tasks {
		for _, s := range r.strategies {
			for _, m := range r.models {
				sc, ok := r.scores[scoreKey{t.ID, s, m}]
				if !ok {
					continue
				}
				k := [2]string{s, m}
				c := cells[k]
				if c == nil {
					c = &Totals{Strategy: s, Model: m, Stops: map[string]int{}, CostKnown: true}
					cells[k] = c
				}
				c.Scored++
				if sc.Correct {
					c.Correct++
				}
				c.Stops[sc.Stop]++
				if rec := byID[sc.Run]; rec != nil {
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
	var out []Totals
	for _, c := range cells {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Strategy != out[j].Strategy {
			return out[i].Strategy < out[j].Strategy
		}
		return out[i].Model < out[j].Model
	})
	return out
}
