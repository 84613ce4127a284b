package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// RowCap is how many rows a run's database must return of each result,
// gold or submitted, so that results compare whole.
const RowCap = 100000

// Score is one outcome of a run, a line of the results file: a scored run,
// or one the model endpoint failed (reason ModelError), which is recorded
// but not scored, and asked again by the next eval.
type Score struct {
	Task     string `json:"task"`
	Database string `json:"database"`
	Strategy string `json:"strategy"`
	Model    string `json:"model"`
	// Repeat is which of the task's asks with this strategy and model the
	// run is, from 1; lines written before repeats existed read as 1.
	Repeat  int    `json:"repeat"`
	Run     string `json:"run"`
	Correct bool   `json:"correct"`
	// Reason is Correct or one of MissReasons; empty in lines written before
	// reasons were recorded, unless it follows from the stop reason.
	Reason string `json:"reason"`
	Stop   string `json:"stop_reason"`
	// Note says more about a miss: the error of SQL that failed, why the
	// gold could not be compared.
	Note string `json:"note,omitempty"`
}

type scoreKey struct {
	task, strategy, model string
	repeat                int
}

func (s Score) key() scoreKey { return scoreKey{s.Task, s.Strategy, s.Model, s.Repeat} }

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

// Runner asks every task with every strategy and model, Repeat times each,
// and scores the runs. Each outcome is appended to the results file (JSON
// lines) as soon as it is known, and a run already scored there is not
// asked again, so an interrupted eval resumes where it stopped.
type Runner struct {
	asker      Asker
	strategies []string
	models     []string
	repeat     int

	mu     sync.Mutex
	scores map[scoreKey]Score
	// failures are the runs the model endpoint failed, by the last line
	// of each, until a later one scores it.
	failures map[scoreKey]Score
	results  *os.File
	// failed counts the runs of this eval that ended in an error (an
	// endpoint that failed, a model that could not be reached): never
	// scored, so that the next run of the eval asks them again.
	// firstFailure is the first one's message.
	failed       int
	firstFailure string
}

// ResultsFile is the results file's name in a runs folder.
const ResultsFile = "eval-results.jsonl"

// readResults reads a results file: the scored runs, and the runs the
// model endpoint failed that no later line scores, each by its last line.
// A line a crash cut short is skipped (that run is asked again), and so is
// a missing file. data is the file's bytes.
func readResults(path string) (scores, failures map[scoreKey]Score, data []byte, err error) {
	scores, failures = map[scoreKey]Score{}, map[scoreKey]Score{}
	data, err = os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var s Score
		if json.Unmarshal([]byte(line), &s) != nil || s.Task == "" {
			continue
		}
		s.Repeat = max(s.Repeat, 1)
		if s.Reason == "" {
			s.Reason = oldReason(s)
		}
		// A run that failed is no answer, which older versions scored
		// as wrong.
		if s.Reason == ModelError || s.Stop == trace.Failed {
			s.Reason = ModelError
			if _, ok := scores[s.key()]; !ok {
				failures[s.key()] = s
			}
			continue
		}
		scores[s.key()] = s
		delete(failures, s.key())
	}
	return scores, failures, data, nil
}

// oldReason is what a line written before reasons were recorded says of
// its run: correct, or no answer; "" when only the rows could have told.
func oldReason(s Score) string {
	switch {
	case s.Correct:
		return Correct
	case s.Stop == trace.Failed:
		return ModelError
	case s.Stop != trace.Submitted:
		return NoAnswer
	}
	return ""
}

// NewRunner reads the outcomes already in the results file at path and
// opens it for appending; each task is asked repeat times (at least once)
// with each strategy and model.
func NewRunner(path string, a Asker, strategies, models []string, repeat int) (*Runner, error) {
	scores, failures, data, err := readResults(path)
	if err != nil {
		return nil, err
	}
	r := &Runner{asker: a, strategies: strategies, models: models, repeat: max(repeat, 1), scores: scores, failures: failures}
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
	repeat          int
}

// keys are the runs an eval of tasks holds, in report order: task,
// strategy, model, repeat.
func (r *Runner) keys(tasks []Task, each func(t Task, k scoreKey)) {
	for _, t := range tasks {
		for _, s := range r.strategies {
			for _, m := range r.models {
				for n := 1; n <= r.repeat; n++ {
					each(t, scoreKey{t.ID, s, m, n})
				}
			}
		}
	}
}

// Run asks, concurrency at a time, each task with each strategy and model
// not scored yet, writing a line to progress as each run is scored. Every
// task is asked once before any is asked again, so an interrupted eval
// with repeats has asked each question about as often. An interrupted Run
// returns ctx's error and leaves the runs it was asking unscored; so does
// an Asker's error, which stops the eval at once: no further run is asked,
// and those in flight are interrupted.
func (r *Runner) Run(ctx context.Context, tasks []Task, concurrency int, progress io.Writer) error {
	outer := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var jobs []job
	for n := 1; n <= r.repeat; n++ {
		for _, t := range tasks {
			for _, s := range r.strategies {
				for _, m := range r.models {
					if _, ok := r.scores[scoreKey{t.ID, s, m, n}]; !ok {
						jobs = append(jobs, job{t, s, m, n})
					}
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
		return &FailedRuns{N: r.failed, First: r.firstFailure}
	}
	return nil
}

// FailedRuns is the error of an eval that asked every run but some failed
// at the model endpoint: the others are scored and can be reported.
type FailedRuns struct {
	N     int
	First string // the first failure's message
}

func (e *FailedRuns) Error() string {
	return fmt.Sprintf("%d runs failed and were not scored (the first: %s); run the eval again to retry them", e.N, e.First)
}

func (r *Runner) one(ctx context.Context, n, total int, j job, progress io.Writer) error {
	a, err := r.asker.Ask(ctx, j.task, j.strategy, j.model)
	if ctx.Err() != nil {
		return nil // interrupted: leave the run unscored, to be asked again
	}
	if err != nil {
		return err
	}
	s := Score{Task: j.task.ID, Database: a.Record.Database, Strategy: j.strategy, Model: j.model, Repeat: j.repeat, Run: a.Record.ID, Stop: a.Record.StopReason}
	if a.Record.StopReason == trace.Failed {
		// An endpoint failure is not an answer: recorded, not scored.
		s.Reason, s.Note = ModelError, oneLine(a.Record.Error)
	} else {
		s.Reason, s.Note = score(ctx, j.task, a)
		s.Correct = s.Reason == Correct
		if ctx.Err() != nil {
			return nil // interrupted while scoring: the queries were cancelled, not wrong
		}
	}
	line, err := json.Marshal(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.results.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	label := fmt.Sprintf("%s %s %s", j.task.ID, j.strategy, j.model)
	if r.repeat > 1 {
		label += fmt.Sprintf(" #%d", j.repeat)
	}
	if s.Reason == ModelError {
		r.failed++
		if r.firstFailure == "" {
			r.firstFailure = a.Record.Error
		}
		r.failures[s.key()] = s
		fmt.Fprintf(progress, "[%d/%d] %s: failed, not scored: %s\n", n, total, label, a.Record.Error)
		return nil
	}
	r.scores[s.key()] = s
	delete(r.failures, s.key())
	fmt.Fprintf(progress, "[%d/%d] %s: %s, %s\n", n, total, label, s.Stop, s.Reason)
	return nil
}

// score compares the submitted SQL's result with the gold SQL's and says
// why they differ. For LiveSQLBench tasks both queries run again with
// their ROUND calls removed, as its evaluator does; the comparison rounds
// instead.
func score(ctx context.Context, t Task, a Attempt) (reason, note string) {
	if a.Record.Answer == nil || a.Record.Answer.SQL == "" {
		if endedOnFailingSQL(a.Record) {
			return SQLError, "the run ended on SQL that failed (" + a.Record.StopReason + ")"
		}
		return NoAnswer, ""
	}
	goldSQL, predSQL := t.Gold, a.Record.Answer.SQL
	pred := a.Rows
	if !t.Compare.BIRD {
		goldSQL, predSQL = RemoveRound(goldSQL), RemoveRound(predSQL)
		var err error
		if pred, err = a.DB.Query(ctx, "okf eval", predSQL); err != nil {
			return SQLError, failure("the submitted SQL fails without ROUND", err)
		}
	}
	gold, err := a.DB.Query(ctx, "okf eval", goldSQL)
	switch {
	case err == nil && pred == nil:
		return SQLError, "the submitted SQL gave no result"
	case err != nil:
		return GoldError, failure("gold SQL failed", err)
	case gold.Truncated():
		return GoldError, fmt.Sprintf("the gold result has more than %d rows", RowCap)
	case pred.Truncated():
		if reason := Classify(gold, pred, t.Compare); reason == MissingColumns || reason == ExtraColumns {
			return reason, ""
		}
		return ExtraRows, fmt.Sprintf("the submitted result has more than %d rows", RowCap)
	}
	return Classify(gold, pred, t.Compare), ""
}

// failure is the note of a failed query: the error on one line, cut to
// 200 runes, so that a results line stays one short line.
func failure(what string, err error) string {
	return what + ": " + oneLine(err.Error())
}

// oneLine folds a message onto one line of at most 200 runes.
func oneLine(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:199]) + "…"
	}
	return msg
}

// CorrectRuns are the ids of the runs scored correct on the tasks, in task,
// strategy, model and repeat order.
func (r *Runner) CorrectRuns(tasks []Task) []string {
	var out []string
	r.keys(tasks, func(_ Task, k scoreKey) {
		if sc, ok := r.scores[k]; ok && sc.Correct {
			out = append(out, sc.Run)
		}
	})
	return out
}

// Report totals the outcomes of the tasks per strategy and model, in the
// order they were asked for; runs are the run log's records, which hold
// the calls, tokens, cost and SQL errors of each run. skipped are the
// tasks left out of the eval, and why.
func (r *Runner) Report(tasks []Task, runs []trace.Record, skipped []Skip) Report {
	byID := map[string]*trace.Record{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	rep := Report{Questions: len(tasks), Repeat: r.repeat, Skipped: skipped}
	cell := map[[2]string]int{}
	for _, s := range r.strategies {
		for _, m := range r.models {
			cell[[2]string{s, m}] = len(rep.Rows)
			rep.Rows = append(rep.Rows, Totals{Strategy: s, Model: m, Reasons: map[string]int{}, CostKnown: true})
		}
	}
	for _, t := range tasks {
		rates := PassRates{Task: t.ID, Rates: make([]Rate, len(rep.Rows))}
		r.keys([]Task{t}, func(_ Task, k scoreKey) {
			i := cell[[2]string{k.strategy, k.model}]
			c := &rep.Rows[i]
			sc, scored := r.scores[k]
			if !scored {
				if f, ok := r.failures[k]; ok {
					c.Reasons[ModelError]++
					rep.Misses = append(rep.Misses, f)
				}
				return
			}
			c.Scored++
			rates.Rates[i].Scored++
			c.Reasons[sc.Reason]++
			if sc.Correct {
				c.Correct++
				rates.Rates[i].Correct++
			} else {
				rep.Misses = append(rep.Misses, sc)
			}
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
			} else {
				c.Unlogged++
			}
		})
		rep.PassRates = append(rep.PassRates, rates)
	}
	return rep
}
