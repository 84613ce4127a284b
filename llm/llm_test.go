package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
)

var tool = llm.Tool{Name: "run_sql", Description: "Run SQL.", Parameters: json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`)}

// conversation is a request after one tool round trip: a question, the
// model's call, its result.
func conversation() *llm.Request {
	return &llm.Request{
		System: "You answer questions.",
		Tools:  []llm.Tool{tool},
		Messages: []llm.Message{
			{Role: llm.User, Content: "How many heroes?"},
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_sql", Arguments: `{"sql":"SELECT count(*) FROM superhero"}`}}},
			{Role: llm.ToolRole, ToolCallID: "c1", Content: "count(*)\n750\n(1 row)"},
			{Role: llm.User, Content: "Keep going."},
		},
	}
}

// sleeps records the waits a client asks for, without waiting.
type sleeps []time.Duration

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	*s = append(*s, d)
	return nil
}

func TestOpenAIWire(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Text: "Counting.", Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql":"SELECT 1","answer":"one"}`}},
		Input: 1200, Cached: 1024, Output: 90, Reasoning: 60,
	})
	c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-4.1-mini", BaseURL: srv.OpenAIURL(), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message; got.Content != "Counting." || len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "submit_answer" ||
		got.ToolCalls[0].Arguments != `{"sql":"SELECT 1","answer":"one"}` || got.ToolCalls[0].ID != "call_1_0" {
		t.Errorf("message = %+v", got)
	}
	if want := (llm.Usage{Input: 1200, Cached: 1024, Output: 90, Reasoning: 60}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	// gpt-4.1-mini: 176 plain input at $0.40, 1024 cached at $0.10, 90 output at $1.60 per million.
	if want := (176*0.40 + 1024*0.10 + 90*1.60) / 1e6; resp.Cost == nil || !near(*resp.Cost, want) {
		t.Errorf("cost = %v, want %v", resp.Cost, want)
	}
	if c.Name() != "openai/gpt-4.1-mini" {
		t.Errorf("name = %q", c.Name())
	}
	req := srv.Requests()[0]
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	msgs := llmtest.At[[]any](t, req, "messages")
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, llmtest.At[string](t, m, "role"))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Errorf("roles = %v", roles)
	}
	asst := llmtest.At[map[string]any](t, msgs, 2)
	if asst["content"] != nil {
		t.Errorf("assistant content = %v, want null beside tool calls", asst["content"])
	}
	fn := llmtest.At[map[string]any](t, asst, "tool_calls", 0, "function")
	if fn["name"] != "run_sql" || fn["arguments"] != `{"sql":"SELECT count(*) FROM superhero"}` {
		t.Errorf("tool call = %v", fn)
	}
	if llmtest.At[map[string]any](t, msgs, 3)["tool_call_id"] != "c1" {
		t.Errorf("tool message = %v", msgs[3])
	}
	tools := llmtest.At[[]any](t, req, "tools")
	if llmtest.At[map[string]any](t, tools, 0)["type"] != "function" || llmtest.At[map[string]any](t, tools, 0, "function")["name"] != "run_sql" {
		t.Errorf("tools = %v", tools)
	}
	if req["model"] != "gpt-4.1-mini" || req["max_tokens"] != float64(4096) {
		t.Errorf("model, max_tokens = %v, %v", req["model"], req["max_tokens"])
	}
}

func TestAnthropicWire(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Text: "Let me check.", Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql":"SELECT 2"}`}},
		Input: 3000, Cached: 2800, Output: 40,
	})
	c, err := llm.New(llm.Config{Provider: llm.Anthropic, Model: "claude-sonnet-4-5-20250929", BaseURL: srv.URL, APIKey: "ak-test"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message; got.Content != "Let me check." || len(got.ToolCalls) != 1 || got.ToolCalls[0].Arguments != `{"sql":"SELECT 2"}` || got.ToolCalls[0].ID != "toolu_1_0" {
		t.Errorf("message = %+v", got)
	}
	if want := (llm.Usage{Input: 3000, Cached: 2800, Output: 40}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if want := (200*3 + 2800*0.30 + 40*15.0) / 1e6; resp.Cost == nil || !near(*resp.Cost, want) {
		t.Errorf("cost = %v, want %v", resp.Cost, want)
	}
	h := srv.Headers()[0]
	if h.Get("x-api-key") != "ak-test" || h.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("headers = %v", h)
	}
	req := srv.Requests()[0]
	sys := llmtest.At[map[string]any](t, req, "system", 0)
	if sys["text"] != "You answer questions." || llmtest.At[map[string]any](t, sys, "cache_control")["type"] != "ephemeral" {
		t.Errorf("system = %v", sys)
	}
	tools := llmtest.At[[]any](t, req, "tools")
	if last := llmtest.At[map[string]any](t, tools, len(tools)-1); last["name"] != "run_sql" || last["cache_control"] == nil || last["input_schema"] == nil {
		t.Errorf("tools = %v", tools)
	}
	// user, assistant(tool_use), user(tool_result + nudge): turns alternate.
	msgs := llmtest.At[[]any](t, req, "messages")
	if len(msgs) != 3 {
		t.Fatalf("messages = %v", msgs)
	}
	use := llmtest.At[map[string]any](t, msgs, 1, "content", 0)
	if use["type"] != "tool_use" || use["id"] != "c1" || llmtest.At[map[string]any](t, use, "input")["sql"] != "SELECT count(*) FROM superhero" {
		t.Errorf("tool_use = %v", use)
	}
	last := llmtest.At[[]any](t, msgs, 2, "content")
	if len(last) != 2 || llmtest.At[map[string]any](t, last, 0)["type"] != "tool_result" || llmtest.At[map[string]any](t, last, 0)["tool_use_id"] != "c1" ||
		llmtest.At[map[string]any](t, last, 1)["text"] != "Keep going." {
		t.Errorf("last user turn = %v", last)
	}
	if req["max_tokens"] != float64(4096) {
		t.Errorf("max_tokens = %v", req["max_tokens"])
	}
}

func TestRetriesWaitApart(t *testing.T) {
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.Turn{Status: 429, RetryAfter: "7"},
				llmtest.Turn{Status: 503},
				llmtest.Turn{Text: "done", Input: 10, Output: 2},
			)
			var waits sleeps
			base := srv.URL
			if provider == llm.OpenAI {
				base = srv.OpenAIURL()
			}
			c, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: base, Sleep: waits.sleep})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Chat(context.Background(), conversation())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "done" || resp.Retries != 2 {
				t.Errorf("content, retries = %q, %d", resp.Message.Content, resp.Retries)
			}
			if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] < 1500*time.Millisecond || waits[1] > 2*time.Second {
				t.Errorf("waits = %v, want [7s 1.5-2s] (Retry-After, then a jittered backoff)", waits)
			}
			if resp.Waited < 8500*time.Millisecond {
				t.Errorf("waited = %v, want at least the 8.5s of waits", resp.Waited)
			}
			if resp.Cost != nil {
				t.Errorf("cost = %v for a model with no price, want unknown", *resp.Cost)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	var waits sleeps
	cases := []struct {
		name  string
		turns []llmtest.Turn
		retry int
		want  string
	}{
		{"bad key", []llmtest.Turn{{Status: 401}}, 5, "rejected the API key"},
		{"unknown model", []llmtest.Turn{{Status: 404}}, 5, "unknown model"},
		{"malformed", []llmtest.Turn{{Raw: `{"choices": [`}}, 5, "malformed reply"},
		{"no choices", []llmtest.Turn{{Raw: `{"choices": []}`}}, 5, "no choices"},
		{"gives up", []llmtest.Turn{{Status: 500}, {Status: 502}, {Status: 500}}, 2, "giving up after 3 attempts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turns...)
			c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-x", BaseURL: srv.OpenAIURL(), MaxRetries: tc.retry, Sleep: waits.sleep})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), conversation())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openai/gpt-x") {
				t.Errorf("err = %v, want it to name the model and say %q", err, tc.want)
			}
			if len(srv.Requests()) != len(tc.turns) {
				t.Errorf("%d requests, want %d", len(srv.Requests()), len(tc.turns))
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{Provider: llm.OpenAI, Model: "gpt-4o"}, "set OPENAI_API_KEY"},
		{llm.Config{Provider: llm.Anthropic, Model: "claude-haiku-4-5", KeyEnv: "MY_KEY"}, "set MY_KEY"},
		{llm.Config{Provider: "cohere", Model: "x"}, `unknown provider "cohere"`},
		{llm.Config{Provider: llm.OpenAI}, "no model id"},
		{llm.Config{Provider: llm.Script, Script: "/nonexistent/conversation.jsonl"}, "/nonexistent/conversation.jsonl"},
	}
	for _, tc := range cases {
		if _, err := llm.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// An endpoint on this machine (Ollama, vLLM) needs no key.
	if _, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "llama3", BaseURL: "http://localhost:11434/v1"}); err != nil {
		t.Errorf("local endpoint: %v", err)
	}
}

func TestLookupPrice(t *testing.T) {
	for model, want := range map[string]float64{
		"gpt-4o": 2.50, "gpt-4o-2024-08-06": 2.50, "gpt-4o-mini": 0.15, "openai/gpt-4.1-mini": 0.40,
		"claude-sonnet-4-5-20250929": 3, "claude-haiku-4-5": 1,
	} {
		p, ok := llm.LookupPrice(model)
		if !ok || p.Input != want {
			t.Errorf("LookupPrice(%q) = %+v, %v; want input %v", model, p, ok, want)
		}
	}
	for _, model := range []string{"nvidia/nemotron-3-super-120b-a12b", "gpt-4o-mini-tts", "claude-sonnet-4-6"} {
		if p, ok := llm.LookupPrice(model); ok {
			t.Errorf("LookupPrice(%q) = %+v, want unknown", model, p)
		}
	}
}

func TestScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conversation.jsonl")
	os.WriteFile(path, []byte(`# a replayed run
{"tool_calls":[{"name":"run_sql","arguments":{"sql":"SELECT 1"}}],"usage":{"input":100,"output":10}}
{"tool_calls":[{"name":"run_sql","arguments":"{\"sql\": broken"}]}
{"content":"done"}
`), 0o644)
	c, err := llm.New(llm.Config{Provider: llm.Script, Script: path, Model: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var usage []llm.Usage
	for range 3 {
		r, err := c.Chat(context.Background(), &llm.Request{System: "You answer questions.", Messages: []llm.Message{{Role: llm.User, Content: "How many orders?"}}})
		if err != nil {
			t.Fatal(err)
		}
		usage = append(usage, r.Usage)
		got = append(got, r.Message.Content)
		for _, tc := range r.Message.ToolCalls {
			got = append(got, tc.Name+" "+tc.Arguments)
		}
		if r.Cost != nil {
			t.Errorf("cost = %v for an unpriced script", *r.Cost)
		}
	}
	want := []string{"", `run_sql {"sql":"SELECT 1"}`, "", `run_sql {"sql": broken`, "done"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("replies = %q, want %q", got, want)
	}
	// A reply that states its usage reports it; one that does not is
	// counted in o200k tokens: the request's 4 + 4, the reply's own.
	if usage[0] != (llm.Usage{Input: 100, Output: 10}) || usage[1] != (llm.Usage{Input: 8, Output: 6}) || usage[2] != (llm.Usage{Input: 8, Output: 1}) {
		t.Errorf("usage = %+v", usage)
	}
	if _, err := c.Chat(context.Background(), &llm.Request{}); err == nil || !strings.Contains(err.Error(), "no reply left after 3") {
		t.Errorf("fourth call: %v", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"content\":\"x\"}\n{\"contnet\":\"y\"}\n"), 0o644)
	if _, err := llm.New(llm.Config{Provider: llm.Script, Script: bad}); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2:") {
		t.Errorf("bad script: %v, want the file and line", err)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// TestOpenAIReplyShapes: replies that compatible servers send and that
// once failed a run as "malformed reply", or hid the server's message.
func TestOpenAIReplyShapes(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Raw: `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"Hello "},{"type":"image_url"},{"type":"text","text":"world"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2}}`},
		llmtest.Turn{Raw: `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"run_sql","arguments":{"sql": "SELECT 1"}}}]},"finish_reason":"tool_calls"}]}`},
		llmtest.Turn{Raw: `{"error":{"message":"the model is overloaded","type":"server_error"}}`},
		llmtest.Turn{Raw: `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"run_sql","arguments":[1]}}]}}]}`},
	)
	price := llm.Price{Input: 1, Output: 1}
	c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-x", BaseURL: srv.OpenAIURL(), Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), conversation())
	if err != nil || resp.Message.Content != "Hello world" || resp.Cost == nil {
		t.Errorf("content parts: %+v, %v", resp, err)
	}
	resp, err = c.Chat(context.Background(), conversation())
	if err != nil || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"sql":"SELECT 1"}` {
		t.Errorf("arguments as an object: %+v, %v", resp, err)
	} else if resp.Cost != nil {
		t.Errorf("a reply without usage costs %v; its cost is unknown", *resp.Cost)
	}
	if _, err := c.Chat(context.Background(), conversation()); err == nil || !strings.Contains(err.Error(), "the model is overloaded") {
		t.Errorf("an error object in a 200: %v", err)
	}
	if _, err := c.Chat(context.Background(), conversation()); err == nil || !strings.Contains(err.Error(), "not an object") {
		t.Errorf("arguments that are a list: %v", err)
	}
}

// TestAnthropicSkipsEmptyReplies: Claude may answer tool results with no
// content at all; sending that turn back as content null is a 400.
func TestAnthropicSkipsEmptyReplies(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Text: "Done."})
	c, err := llm.New(llm.Config{Provider: llm.Anthropic, Model: "claude-x", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	req := conversation()
	req.Messages = append(req.Messages[:3], llm.Message{Role: llm.Assistant}, llm.Message{Role: llm.User, Content: "Answer with submit_answer."})
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := llmtest.At[[]any](t, srv.Requests()[0], "messages")
	roles := []string{}
	for _, m := range msgs {
		m := llmtest.At[map[string]any](t, m)
		roles = append(roles, llmtest.At[string](t, m, "role"))
		if blocks, ok := m["content"].([]any); !ok || len(blocks) == 0 {
			t.Errorf("a %s turn without content: %v", m["role"], m)
		}
	}
	if strings.Join(roles, " ") != "user assistant user" {
		t.Errorf("roles %v, want alternating", roles)
	}
}

// TestFailedCallsKeepTheirTime: a call that gave up still says how long
// it waited, for the run's record.
func TestFailedCallsKeepTheirTime(t *testing.T) {
	var waits sleeps
	srv := llmtest.New(t, llmtest.Turn{Status: 500}, llmtest.Turn{Status: 500})
	c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-x", BaseURL: srv.OpenAIURL(), MaxRetries: 1, Sleep: waits.sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), conversation())
	var ce *llm.CallError
	if !errors.As(err, &ce) || ce.Retries != 1 || ce.Waited < waits[0] {
		t.Errorf("err = %#v", err)
	}
}

// TestRetrySemantics: retries as the official SDKs make them. The
// server's x-should-retry decides when it is sent; 408 and 409 are
// retried; retry-after-ms is honoured; the request id of the last failure
// reaches the error.
func TestRetrySemantics(t *testing.T) {
	id := func(s string) map[string]string { return map[string]string{"x-request-id": s} }
	cases := []struct {
		name     string
		turns    []llmtest.Turn
		requests int
		waits    []time.Duration
		err      string
	}{
		{"x-should-retry false stops a 503", []llmtest.Turn{{Status: 503, Header: map[string]string{"x-should-retry": "false", "x-request-id": "req_1"}}},
			1, nil, "HTTP 503: scripted status 503 (request id req_1)"},
		{"x-should-retry true retries a 400", []llmtest.Turn{{Status: 400, Header: map[string]string{"x-should-retry": "true", "retry-after-ms": "250"}}, {Text: "ok"}},
			2, []time.Duration{250 * time.Millisecond}, ""},
		{"408 and 409 are retried", []llmtest.Turn{{Status: 408, RetryAfter: "1"}, {Status: 409, RetryAfter: "1"}, {Text: "ok"}},
			3, []time.Duration{time.Second, time.Second}, ""},
		{"400 is not", []llmtest.Turn{{Status: 400, Header: id("req_bad")}}, 1, nil, "(request id req_bad)"},
		{"the last failure's id", []llmtest.Turn{{Status: 500, RetryAfter: "0", Header: id("req_a")}, {Status: 500, RetryAfter: "0", Header: id("req_b")}},
			2, []time.Duration{0}, "giving up after 2 attempts: model openai/m: HTTP 500: scripted status 500 (request id req_b)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turns...)
			var waits sleeps
			c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "m", BaseURL: srv.OpenAIURL(), MaxRetries: 2, Sleep: waits.sleep})
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "the last failure's id" {
				c, _ = llm.New(llm.Config{Provider: llm.OpenAI, Model: "m", BaseURL: srv.OpenAIURL(), MaxRetries: 1, Sleep: waits.sleep})
			}
			_, err = c.Chat(context.Background(), conversation())
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
			var ce *llm.CallError
			if tc.err != "" && errors.As(err, &ce) && !strings.Contains(tc.err, ce.RequestID) {
				t.Errorf("CallError.RequestID = %q", ce.RequestID)
			}
			if n := len(srv.Requests()); n != tc.requests || !slices.Equal([]time.Duration(waits), tc.waits) {
				t.Errorf("%d requests, waits %v; want %d and %v", n, waits, tc.requests, tc.waits)
			}
		})
	}
}
