package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
	"github.com/okf-tools/okf/trace"
)

// client is a model of provider on a scripted server.
func client(t *testing.T, srv *llmtest.Server, provider string, noStream bool) llm.Client {
	t.Helper()
	base := srv.URL
	if provider == llm.OpenAI {
		base = srv.OpenAIURL()
	}
	c, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: base, NoStream: noStream, Price: &llm.Price{Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// comparable is a record without what differs between two runs of the
// same conversation: its id, start and times.
func comparable(r *trace.Record) string {
	c := *r
	c.ID, c.StartedAt, c.ModelSeconds, c.WaitSeconds = "", time.Time{}, 0, 0
	c.Steps = append([]trace.Step(nil), r.Steps...)
	for i := range c.Steps {
		c.Steps[i].ModelMS, c.Steps[i].WaitMS = 0, 0
	}
	b, _ := json.MarshalIndent(c, "", " ")
	return string(b)
}

func repairTurns(question string) []llmtest.Turn {
	return []llmtest.Turn{
		{Text: "Reading the rules first.", Calls: []llmtest.Call{{Name: "context", Arguments: args(map[string]any{"question": question})}}, Input: 1500, Output: 20},
		{Text: "Now the query.", Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": "SELECT nov FROM orders"})}}, Input: 2500, Cached: 1500, Output: 30},
		{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: args(map[string]any{"sql": nov, "answer": "100 and 80."})}}, Input: 3000, Cached: 2500, Output: 40},
	}
}

// TestStreamedRunEqualsWhole: for both formats, a run whose replies are
// streamed records exactly what the same run records unstreamed, and the
// live display hears the model's text piece by piece and each tool call
// before it runs.
func TestStreamedRunEqualsWhole(t *testing.T) {
	s := newShop(t)
	question := "What is the net order value of each order?"
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			var records []string
			var events []agent.Event
			for _, noStream := range []bool{true, false} {
				srv := llmtest.New(t, repairTurns(question)...)
				cfg := s.config(t, client(t, srv, provider, noStream), agent.Context)
				events = nil
				cfg.OnEvent = func(e agent.Event) { events = append(events, e) }
				r := agent.Run(context.Background(), cfg, question, "").Record
				if r.StopReason != trace.Submitted || r.SQLErrors != 1 || r.ModelID != "m" {
					t.Fatalf("stream %v: stop %s, %d SQL errors, model id %q: %s", !noStream, r.StopReason, r.SQLErrors, r.ModelID, r.Error)
				}
				records = append(records, comparable(r))
				if stream, _ := srv.Requests()[0]["stream"].(bool); stream == noStream {
					t.Errorf("no_stream %v: the request's stream is %v", noStream, stream)
				}
			}
			if records[0] != records[1] {
				t.Errorf("the streamed run's record differs:\nwhole\n%s\nstreamed\n%s", records[0], records[1])
			}
			var text []string
			pending := 0
			for _, e := range events {
				if e.Step == 1 && e.Text != "" {
					text = append(text, e.Text)
				}
				if e.Pending != nil {
					pending++
				}
			}
			if strings.Join(text, "") != "Reading the rules first." || len(text) < 4 || pending != 3 {
				t.Errorf("the display heard %q and %d pending calls", text, pending)
			}
		})
	}
}

// TestTruncatedReplies: a reply cut at the output token limit never runs
// its calls, so a half-written submit_answer is not an answer; the model is
// asked once to go on more briefly, and a second cut ends the run with
// the truncated stop reason.
func TestTruncatedReplies(t *testing.T) {
	s := newShop(t)
	cut := llmtest.Turn{Text: "Here is the answer", Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT ordid FROM ord`}}, Truncated: true, Output: 4096}
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			// Cut once, then a whole answer: the run goes on and submits.
			srv := llmtest.New(t, cut, llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: args(map[string]any{"sql": nov, "answer": "ok"})}}})
			r := agent.Run(context.Background(), s.config(t, client(t, srv, provider, false), agent.Context), "Net order values?", "").Record
			if r.StopReason != trace.Submitted || !r.Steps[0].Truncated || len(r.Steps[0].Calls) != 0 || r.SQLAttempts != 1 {
				t.Errorf("cut once: stop %s, step 1 %+v, %d SQL", r.StopReason, r.Steps[0], r.SQLAttempts)
			}
			body, _ := json.Marshal(srv.Requests()[1])
			if !strings.Contains(string(body), "cut off at the output token limit") {
				t.Errorf("the second request does not ask to go on: %s", body)
			}
			// Cut twice: the run stops, with nothing submitted.
			srv = llmtest.New(t, cut, cut)
			r = agent.Run(context.Background(), s.config(t, client(t, srv, provider, false), agent.Context), "Net order values?", "").Record
			if r.StopReason != trace.Truncated || r.Answer != nil || r.LLMCalls != 2 || !strings.Contains(r.Error, "raise max_tokens") {
				t.Errorf("cut twice: stop %s, answer %+v, %d calls, %q", r.StopReason, r.Answer, r.LLMCalls, r.Error)
			}
		})
	}
}

// TestConversationCaching: in a five-step Anthropic run against a server
// that reports usage as the prompt cache does, every step after the first
// reads from the cache all that the step before it sent, so only what the
// last step added is paid in full.
func TestConversationCaching(t *testing.T) {
	s := newShop(t)
	question := "What is the net order value of each order?"
	turns := []llmtest.Turn{
		{Calls: []llmtest.Call{{Name: "context", Arguments: args(map[string]any{"question": question})}}, Output: 20},
		{Calls: []llmtest.Call{{Name: "get", Arguments: args(map[string]any{"ids": []string{"tables/orders"}})}}, Output: 20},
		{Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": "SELECT nov FROM orders"})}}, Output: 30},
		{Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": nov})}}, Output: 30},
		{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: args(map[string]any{"sql": nov, "answer": "100 and 80."})}}, Output: 40},
	}
	run := func(prefixOnly bool) *trace.Record {
		srv := llmtest.New(t, turns...)
		srv.Caching, srv.PrefixOnly = true, prefixOnly
		r := agent.Run(context.Background(), s.config(t, client(t, srv, llm.Anthropic, false), agent.Context), question, "").Record
		if r.StopReason != trace.Submitted || len(r.Steps) != 5 {
			t.Fatalf("stop %s after %d steps: %s", r.StopReason, len(r.Steps), r.Error)
		}
		return r
	}
	r, before := run(false), run(true)
	for _, rec := range []*trace.Record{before, r} {
		t.Logf("conversation breakpoints %v: %d input tokens, %d read from the cache, %d written; $%.6f at claude-sonnet-4-5 prices",
			rec == r, rec.Usage.Input, rec.Usage.Cached, rec.Usage.CacheWrite, *rec.Cost)
		for _, st := range rec.Steps {
			t.Logf("  step %d: %d in = %d cached + %d written + %d uncached", st.N, st.Usage.Input, st.Usage.Cached, st.Usage.CacheWrite, st.Usage.Input-st.Usage.Cached-st.Usage.CacheWrite)
		}
	}
	if *r.Cost >= *before.Cost {
		t.Errorf("caching the conversation costs $%.6f, no less than $%.6f without", *r.Cost, *before.Cost)
	}
	for i, st := range r.Steps {
		u := st.Usage
		if i == 0 {
			if u.Cached != 0 || u.CacheWrite == 0 {
				t.Errorf("step 1: %+v, want nothing read and the prompt written", u)
			}
			continue
		}
		prev := r.Steps[i-1].Usage
		if u.Cached < prev.Cached+prev.CacheWrite || u.Input-u.Cached-u.CacheWrite != 0 {
			t.Errorf("step %d: %+v reads less than step %d cached (%d) or pays for uncached input", i+1, u, i, prev.Cached+prev.CacheWrite)
		}
	}
}

// TestFailedCallKeepsTheRequestID: the provider's id of the failure that
// ended a run is in its record and its error.
func TestFailedCallKeepsTheRequestID(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t, llmtest.Turn{Status: 400, Header: map[string]string{"x-request-id": "req_42"}})
	r := agent.Run(context.Background(), s.config(t, client(t, srv, llm.OpenAI, false), agent.Context), "Orders?", "").Record
	if r.StopReason != trace.Failed || r.RequestID != "req_42" || !strings.Contains(r.Error, "(request id req_42)") {
		t.Errorf("stop %s, request id %q, error %q", r.StopReason, r.RequestID, r.Error)
	}
	if !reflect.DeepEqual(r.Steps, []trace.Step{}) {
		t.Errorf("steps %+v", r.Steps)
	}
}

// TestBrokenReplies: a streamed reply that breaks off mid-call (the
// stream ends cleanly before its last event) never runs the fragment of
// its tool call: with retries the step is asked again, the display told,
// and the run submits; without, the run fails saying the reply broke off,
// and the call still counts what the provider reported it used.
func TestBrokenReplies(t *testing.T) {
	s := newShop(t)
	question := "How many orders are there?"
	count := llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": "SELECT count(*) FROM orders"})}}, Input: 1500, Output: 20}
	submit := llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: args(map[string]any{"sql": "SELECT count(*) FROM orders", "answer": "3."})}}, Input: 1600, Output: 30}
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			// The events before the call's second half: OpenAI's first
			// chunk, then its first half; Anthropic's message_start, a
			// ping, the block's start and its first half.
			cut := count
			cut.CutAfter = map[string]int{llm.OpenAI: 2, llm.Anthropic: 4}[provider]
			srv := llmtest.New(t, cut, count, submit)
			cfg := s.config(t, client(t, srv, provider, false), agent.Context)
			var retries []string
			cfg.OnEvent = func(e agent.Event) {
				if e.Retry != "" {
					retries = append(retries, e.Retry)
				}
			}
			r := agent.Run(context.Background(), cfg, question, "").Record
			if r.StopReason != trace.Submitted || r.LLMCalls != 2 || r.SQLAttempts != 2 || r.ToolCalls["run_sql"] != 1 || len(srv.Requests()) != 3 || r.Steps[0].Retries != 1 {
				t.Errorf("retried: stop %s (%s), %d calls, %d SQL attempts, %d requests, steps %+v", r.StopReason, r.Error, r.LLMCalls, r.SQLAttempts, len(srv.Requests()), r.Steps)
			}
			if len(retries) != 1 || !strings.Contains(retries[0], "the reply broke off") {
				t.Errorf("the display heard retries %q", retries)
			}
			srv = llmtest.New(t, cut)
			c, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: map[string]string{llm.OpenAI: srv.OpenAIURL(), llm.Anthropic: srv.URL}[provider],
				MaxRetries: -1, Price: &llm.Price{Input: 3, Output: 15}})
			if err != nil {
				t.Fatal(err)
			}
			cfg = s.config(t, c, agent.Context)
			cfg.OnEvent = func(agent.Event) {}
			r = agent.Run(context.Background(), cfg, question, "").Record
			if r.StopReason != trace.Failed || !strings.Contains(r.Error, "the reply broke off") || r.SQLAttempts != 0 || len(r.ToolCalls) != 0 || r.LLMCalls != 1 || len(r.Steps) != 1 {
				t.Errorf("not retried: stop %s (%s), %d SQL attempts, %d calls, steps %+v", r.StopReason, r.Error, r.SQLAttempts, r.LLMCalls, r.Steps)
			}
			// Anthropic says the input at the start; OpenAI only at the end.
			if provider == llm.Anthropic && (r.Usage.Input != 1500 || r.Cost == nil || *r.Cost <= 0) || provider == llm.OpenAI && (r.Usage.Input != 0 || r.Cost != nil) {
				t.Errorf("not retried: usage %+v, cost %v", r.Usage, r.Cost)
			}
		})
	}
}

// TestWholeRepliesToStreams: an endpoint that ignores stream: true and
// answers whole JSON gives the run the record the same conversation gives
// unstreamed, tokens and cost included.
func TestWholeRepliesToStreams(t *testing.T) {
	s := newShop(t)
	question := "What is the net order value of each order?"
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			var records []string
			for _, ignore := range []bool{false, true} {
				turns := repairTurns(question)
				for i := range turns {
					turns[i].IgnoreStream = ignore
				}
				srv := llmtest.New(t, turns...)
				cfg := s.config(t, client(t, srv, provider, !ignore), agent.Context)
				cfg.OnEvent = func(agent.Event) {}
				r := agent.Run(context.Background(), cfg, question, "").Record
				if r.StopReason != trace.Submitted || r.Usage.Input != 7000 || r.Cost == nil {
					t.Fatalf("ignoring the stream %v: stop %s (%s), usage %+v", ignore, r.StopReason, r.Error, r.Usage)
				}
				records = append(records, comparable(r))
			}
			if records[0] != records[1] {
				t.Errorf("the record differs:\nunstreamed\n%s\nstream ignored\n%s", records[0], records[1])
			}
		})
	}
}
