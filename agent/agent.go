// Package agent answers a question about a database the way okf intends:
// find the business knowledge first, write SQL, run it through sqlguard,
// submit an answer. It holds the loop (a step limit, a nudge when the
// model answers in text, stop reasons submitted, declined, step_limit and
// error; nothing crashes a run), one toolset per knowledge strategy
// (schema, raw, browse, engine, context, auto), the instructions, and
// fills the run record that package trace keeps.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/search"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// Strategy is how the agent reaches the knowledge.
type Strategy string

// The strategies. Every one has the same SQL tools; only the knowledge
// differs.
const (
	// Schema pastes every table's schema and no business knowledge: the
	// baseline (engine.SchemaText).
	Schema Strategy = "schema"
	// Raw pastes every document into the prompt.
	Raw Strategy = "raw"
	// Browse reads the bundle's files from its root index down.
	Browse Strategy = "browse"
	// Engine searches and reads concepts by id (manifest, search, get).
	Engine Strategy = "engine"
	// Context starts with one context pack, then reads by id.
	Context Strategy = "context"
	// Auto is Raw when pasting the documents is cheaper than a context
	// pack for each of the session's questions (engine.AutoPastesRaw),
	// Context otherwise.
	Auto Strategy = "auto"
)

// DefaultStrategy is the strategy the retrieval evaluation measures best:
// context packs hold every gold rule at under half the tokens of search.
const DefaultStrategy = Context

// Strategies lists every strategy, the baseline first.
var Strategies = []Strategy{Schema, Raw, Browse, Engine, Context, Auto}

// ParseStrategy checks a strategy name; "" is the default.
func ParseStrategy(s string) (Strategy, error) {
	if s == "" {
		return DefaultStrategy, nil
	}
	if slices.Contains(Strategies, Strategy(s)) {
		return Strategy(s), nil
	}
	names := make([]string, len(Strategies))
	for i, st := range Strategies {
		names[i] = string(st)
	}
	return "", fmt.Errorf("unknown strategy %q (one of %s)", s, strings.Join(names, ", "))
}

// Knowledge is what the agent may read about the database.
type Knowledge struct {
	// View is the knowledge the engine's tools read, the raw strategy
	// pastes, and the record names by its snapshot's digest. Give the
	// agent a view of the database's bundle alone, so its searches rank
	// within that bundle.
	View *engine.View
	// Bundle names the database's bundle: what raw pastes and the
	// manifest in the engine strategy's prompt shows; "" for all.
	Bundle string
	// Files is the bundle folder, for the browse strategy; reads never
	// leave it.
	Files fs.FS
}

// Config is one run's setup.
type Config struct {
	Model llm.Client
	// Databases holds the database the question is about, under the
	// name Database, for tenant Tenant: run_sql and submit_answer query
	// it through the guard.
	Databases *engine.Databases
	Tenant    string
	// Database names the database in the prompt and the record; Dialect
	// is "PostgreSQL" or "SQLite".
	Database, Dialect string
	Knowledge         Knowledge
	Strategy          Strategy
	// MaxSteps caps the model calls; default 15.
	MaxSteps int
	// ContextBudget is the token budget of a context pack when the model
	// gives none; 0 means the search package's default.
	ContextBudget int
	// Questions is how many questions of this database the session asks
	// (an eval's question set); the auto strategy pastes the documents
	// when that session is cheaper so. 0 counts as one question.
	Questions int
	// ResultBytes bounds each tool result kept in the record; default 2000.
	ResultBytes int
	// Now is the clock stale statuses are decided against; nil is the
	// current time.
	Now func() time.Time
	// OnEvent, when set, hears each step as it happens.
	OnEvent func(Event)
}

// Event is progress of a run, for a live display.
type Event struct {
	Step int
	// Thinking is sent before each model call.
	Thinking bool
	// Text is a piece of the model's text as it arrives.
	Text string
	// Pending is a tool call the model has finished writing, about to
	// run; Call is the same call once it has run (nil with Nudged set when
	// the model answered in text).
	Pending *trace.Call
	Call    *trace.Call
	Nudged  bool
	// Truncated says the reply was cut at the output token limit: its
	// calls are not run, and the model is asked once to go on.
	Truncated bool
	// Retry says why the reply broke off: what the step showed of it is
	// void, nothing of it runs, and the model is asked again.
	Retry string
}

// Outcome is a finished run: its record, and the rows of the submitted
// SQL when there is one.
type Outcome struct {
	Record *trace.Record
	Rows   *sqlguard.Result
	// ModelErr is the model's error that ended the run, when one did.
	ModelErr error
}

func (c *Config) emit(e Event) {
	if c.OnEvent != nil {
		c.OnEvent(e)
	}
}

// Run asks the question and returns the record of the run. It never
// fails: every problem ends the run with a stop reason and a message.
func Run(ctx context.Context, cfg Config, question, taskID string) (out Outcome) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 15
	}
	if cfg.ResultBytes <= 0 {
		cfg.ResultBytes = 2000
	}
	if cfg.Strategy == "" {
		cfg.Strategy = DefaultStrategy
	}
	started := time.Now().UTC()
	rec := &trace.Record{
		StartedAt: started, Question: question, TaskID: taskID, Database: cfg.Database,
		Strategy: string(cfg.Strategy), ToolCalls: map[string]int{}, ConceptsRead: []string{}, Steps: []trace.Step{},
	}
	if cfg.Model != nil {
		rec.Model = cfg.Model.Name()
		if p, ok := cfg.Model.(interface{ Provider() string }); ok {
			rec.Provider = p.Provider()
		}
		if m, ok := cfg.Model.(interface{ ModelID() string }); ok {
			rec.ModelID = m.ModelID()
		}
	}
	rec.ID = trace.NewID(started, question, cfg.Database, rec.Strategy, rec.Model)
	if v := cfg.Knowledge.View; v != nil {
		rec.Snapshot = v.Snap.Digest
		if cfg.Strategy == Auto {
			// Decided before the question is read, as for every question
			// of the session.
			cfg.Strategy = cfg.auto()
			rec.AutoStrategy = string(cfg.Strategy)
		}
	}
	out.Record = rec
	fail := func(format string, args ...any) {
		rec.StopReason, rec.Error = trace.Failed, fmt.Sprintf(format, args...)
	}
	defer func() {
		if p := recover(); p != nil {
			fail("internal error: %v", p)
		}
	}()
	switch {
	case cfg.Model == nil:
		fail("no model")
		return out
	case cfg.Databases == nil:
		fail("no database")
		return out
	case cfg.Knowledge.View == nil:
		fail("the %s strategy needs knowledge (a bundle folder or the store)", cfg.Strategy)
		return out
	}
	tools, err := newToolset(ctx, &cfg)
	if err != nil {
		fail("%v", err)
		return out
	}
	knowledge, err := promptKnowledge(&cfg, rec)
	if err != nil {
		fail("%v", err)
		return out
	}
	req := &llm.Request{
		System:   systemPrompt(cfg.Database, cfg.Dialect, cfg.Strategy, knowledge),
		Tools:    tools.tools,
		Messages: []llm.Message{{Role: llm.User, Content: question}},
	}
	cost, costKnown := 0.0, true
	defer func() {
		rec.SQLAttempts, rec.SQLErrors = tools.sqlAttempts, tools.sqlErrors
		if costKnown && rec.LLMCalls > 0 {
			rec.Cost = &cost
		}
	}()
	continued := false
	for n := 1; n <= cfg.MaxSteps; n++ {
		cfg.emit(Event{Step: n, Thinking: true})
		req.Stream = cfg.stream(n)
		resp, err := cfg.Model.Chat(ctx, req)
		if err != nil {
			// A call that never answered still took its time; one the
			// endpoint answered with a reply that broke off or could not
			// be read is a model call, with what it was billed.
			var ce *llm.CallError
			if errors.As(err, &ce) {
				rec.WaitSeconds += ce.Waited.Seconds()
				rec.RequestID = ce.RequestID
				if ce.Answered > 0 {
					rec.LLMCalls++
					rec.Usage = rec.Usage.Add(ce.Usage)
					costKnown = costKnown && ce.Cost != nil
					if ce.Cost != nil {
						cost += *ce.Cost
					}
					rec.Steps = append(rec.Steps, trace.Step{N: n, Usage: ce.Usage, Cost: ce.Cost, WaitMS: ce.Waited.Milliseconds(), Retries: ce.Retries, RequestID: ce.RequestID})
				}
			}
			out.ModelErr = err
			fail("%v", err)
			return out
		}
		rec.LLMCalls++
		if resp.Model != "" {
			rec.ProviderModel = resp.Model
		}
		rec.Usage = rec.Usage.Add(resp.Usage)
		rec.ModelSeconds += resp.ModelTime.Seconds()
		rec.WaitSeconds += resp.Waited.Seconds()
		costKnown = costKnown && resp.Cost != nil
		if resp.Cost != nil {
			cost += *resp.Cost
		}
		step := trace.Step{
			N: n, Text: trace.Cut(resp.Message.Content, cfg.ResultBytes), Usage: resp.Usage, Cost: resp.Cost,
			ModelMS: resp.ModelTime.Milliseconds(), WaitMS: resp.Waited.Milliseconds(), Retries: resp.Retries, RequestID: resp.RequestID,
		}
		if resp.Truncated() {
			// Cut anywhere: a tool call's arguments, a submitted answer.
			// Nothing of it runs; the model may go on once, more briefly.
			step.Truncated = true
			rec.Steps = append(rec.Steps, step)
			cfg.emit(Event{Step: n, Truncated: true})
			if continued {
				rec.StopReason = trace.Truncated
				rec.Error = "the model's reply was cut at its output token limit again after it was asked to go on more briefly; raise max_tokens in okf.yaml"
				return out
			}
			continued = true
			req.Messages = append(req.Messages, llm.Message{Role: llm.Assistant, Content: resp.Message.Content}, llm.Message{Role: llm.User, Content: goOn})
			continue
		}
		req.Messages = append(req.Messages, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			step.Nudged = true
			rec.Steps = append(rec.Steps, step)
			cfg.emit(Event{Step: n, Nudged: true})
			req.Messages = append(req.Messages, llm.Message{Role: llm.User, Content: nudge})
			continue
		}
		for _, tc := range resp.Message.ToolCalls {
			result, failed := tools.call(ctx, tc)
			call := trace.Call{Tool: tc.Name, Arguments: trace.Cut(tc.Arguments, cfg.ResultBytes), Result: trace.Cut(result.text, cfg.ResultBytes),
				Bytes: len(result.text), Error: failed, Concepts: result.concepts}
			step.Calls = append(step.Calls, call)
			rec.ToolCalls[tc.Name]++
			rec.ConceptsRead = trace.Concepts(rec.ConceptsRead, result.concepts...)
			cfg.emit(Event{Step: n, Call: &call})
			req.Messages = append(req.Messages, llm.Message{Role: llm.ToolRole, ToolCallID: tc.ID, Content: result.text, IsError: failed})
		}
		rec.Steps = append(rec.Steps, step)
		if tools.answer != nil {
			rec.Answer = tools.answer
			out.Rows = tools.rows
			rec.StopReason = trace.Submitted
			if tools.answer.SQL == "" {
				rec.StopReason = trace.Declined
			}
			return out
		}
		if err := ctx.Err(); err != nil {
			fail("%v", err)
			return out
		}
	}
	rec.StopReason = trace.StepLimit
	return out
}

// goOn is what the model is told after a reply cut at its output limit.
const goOn = "Your last reply was cut off at the output token limit, so none of its tool calls ran. " +
	"Go on more briefly: one tool call at a time, or submit_answer with a shorter answer."

// stream is the stream of step n's reply when someone listens: its text
// as it arrives, and each tool call once written.
func (c *Config) stream(n int) *llm.Stream {
	if c.OnEvent == nil {
		return nil
	}
	return &llm.Stream{
		OnText: func(t string) { c.emit(Event{Step: n, Text: t}) },
		OnToolCall: func(tc llm.ToolCall) {
			c.emit(Event{Step: n, Pending: &trace.Call{Tool: tc.Name, Arguments: tc.Arguments}})
		},
		OnRetry: func(err error) { c.emit(Event{Step: n, Retry: err.Error()}) },
	}
}

// auto is the strategy Auto stands for: Raw when pasting the bundle's
// documents once costs no more than a context pack for each question of
// the session, Context otherwise.
func (c *Config) auto() Strategy {
	raw, _ := rawDocs(c.Knowledge)
	budget := c.ContextBudget
	if budget <= 0 {
		budget = search.DefaultBudget
	}
	if raw != "" && engine.AutoPastesRaw(tokens.Count(raw), budget, max(1, c.Questions)) {
		return Raw
	}
	return Context
}

// promptKnowledge is the question-independent knowledge that goes into the
// prompt: every document for raw, every table's schema for schema, the
// manifest for engine when it is small.
func promptKnowledge(cfg *Config, rec *trace.Record) (string, error) {
	switch cfg.Strategy {
	case Schema:
		text, tables := engine.SchemaText(cfg.Knowledge.View.Snap, cfg.Knowledge.Bundle)
		if text == "" {
			return "", fmt.Errorf("no tables in bundle %q", cfg.Knowledge.Bundle)
		}
		rec.ConceptsRead = trace.Concepts(rec.ConceptsRead, tables...)
		return strings.TrimSpace(text), nil
	case Raw:
		text, refs := rawDocs(cfg.Knowledge)
		if text == "" {
			return "", fmt.Errorf("no documents in bundle %q", cfg.Knowledge.Bundle)
		}
		rec.ConceptsRead = trace.Concepts(rec.ConceptsRead, refs...)
		return text, nil
	case Engine:
		m, err := cfg.Knowledge.View.Snap.ManifestAt(cfg.Knowledge.Bundle, cfg.now())
		if err != nil {
			return "", fmt.Errorf("reading the manifest: %w", err)
		}
		if tokens.Count(string(m)) > manifestInPrompt {
			return "The manifest is large: read it with the manifest tool when search is not enough.", nil
		}
		return "The manifest of the knowledge (id, bundle, kind, status, grain, summary, links):\n" + strings.TrimSpace(string(m)), nil
	}
	return "", nil
}
