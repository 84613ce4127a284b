package llm_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
)

// streamed records what a stream heard.
type streamed struct {
	text    []string
	calls   []llm.ToolCall
	retries int
}

// stream hears a reply; a retry voids what the broken attempt gave.
func (s *streamed) stream() *llm.Stream {
	return &llm.Stream{OnText: func(t string) { s.text = append(s.text, t) }, OnToolCall: func(c llm.ToolCall) { s.calls = append(s.calls, c) },
		OnRetry: func(error) { s.text, s.calls = nil, nil; s.retries++ }}
}

// TestStreamedEqualsWhole: in both formats, a streamed reply gives the
// Response the same reply gives whole (text, tool calls, usage, stop
// reason, model), the stream hears the text piece by piece and each tool
// call once, and NoStream asks for the whole reply and tells the stream
// all at once.
func TestStreamedEqualsWhole(t *testing.T) {
	turns := []llmtest.Turn{
		{Text: "Counting the heroes first.", Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql": "SELECT count(*) FROM superhero"}`}, {Name: "run_sql", Arguments: `{"sql":"SELECT 1"}`}},
			Input: 1200, Cached: 1000, Output: 40, Reasoning: 5},
		{Text: "There are 750 heroes.", Input: 1300, Cached: 1200, Output: 9},
		{Text: "The answer is cut", Truncated: true, Input: 1400, Output: 4096},
	}
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			var got [3][]*llm.Response
			var heard [3][]streamed
			for mode := range 3 { // whole, streamed, NoStream with a stream
				srv := llmtest.New(t, turns...)
				base := srv.URL
				if provider == llm.OpenAI {
					base = srv.OpenAIURL()
				}
				c, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: base, NoStream: mode == 2, Price: &llm.Price{Input: 1, Output: 2}})
				if err != nil {
					t.Fatal(err)
				}
				for range turns {
					req := conversation()
					var s streamed
					if mode > 0 {
						req.Stream = s.stream()
					}
					resp, err := c.Chat(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					resp.ModelTime = 0
					got[mode] = append(got[mode], resp)
					heard[mode] = append(heard[mode], s)
				}
				stream, _ := srv.Requests()[0]["stream"].(bool)
				if stream != (mode == 1) {
					t.Errorf("mode %d: the request's stream is %v", mode, stream)
				}
			}
			for i := range turns {
				if !reflect.DeepEqual(got[0][i], got[1][i]) || !reflect.DeepEqual(got[0][i], got[2][i]) {
					t.Errorf("turn %d differs:\nwhole    %+v\nstreamed %+v\nnostream %+v", i, got[0][i], got[1][i], got[2][i])
				}
				resp := got[0][i]
				if s := heard[1][i]; strings.Join(s.text, "") != resp.Message.Content || len(s.text) < 2 || !reflect.DeepEqual(s.calls, resp.Message.ToolCalls) {
					t.Errorf("turn %d: the stream heard %q and %v", i, s.text, s.calls)
				}
				if s := heard[2][i]; len(s.text) != 1 || !reflect.DeepEqual(s.calls, resp.Message.ToolCalls) {
					t.Errorf("turn %d without streaming: the stream heard %q and %v", i, s.text, s.calls)
				}
			}
			first := got[0][0]
			if len(first.Message.ToolCalls) != 2 || first.Message.ToolCalls[0].Arguments == "" || first.Usage.Cached != 1000 || first.Model != "scripted" {
				t.Errorf("first reply %+v", first)
			}
			if got[0][0].Truncated() || !got[0][2].Truncated() {
				t.Errorf("truncated: %v and %v, want false then true (finish %q)", got[0][0].Truncated(), got[0][2].Truncated(), got[0][2].Finish)
			}
		})
	}
}

// TestStreamErrors: an error event mid-reply and a malformed event are
// errors naming the model, and are not retried: the provider said it
// failed, or will send the same again (a reply that breaks off is,
// TestCutStreams).
func TestStreamErrors(t *testing.T) {
	for _, tc := range []struct {
		provider, raw, want string
	}{
		{llm.Anthropic, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "failed mid-reply: overloaded_error: Overloaded"},
		{llm.Anthropic, "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", "malformed event"},
		{llm.OpenAI, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"error\":{\"type\":\"server_error\",\"message\":\"boom\"}}\n\n", "failed mid-reply: server_error: boom"},
		{llm.OpenAI, "data: {not json\n\n", "malformed event"},
		{llm.OpenAI, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":100000,\"function\":{\"name\":\"x\"}}]}}]}\n\n", "tool call index 100000"},
	} {
		srv := llmtest.New(t, llmtest.Turn{Raw: tc.raw, Header: map[string]string{"Content-Type": "text/event-stream"}})
		base := srv.URL
		if tc.provider == llm.OpenAI {
			base = srv.OpenAIURL()
		}
		c, _ := llm.New(llm.Config{Provider: tc.provider, Model: "m", BaseURL: base})
		req := conversation()
		req.Stream = &llm.Stream{}
		_, err := c.Chat(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.provider+"/m") || len(srv.Requests()) != 1 {
			t.Errorf("%s %q: %v after %d requests; want %q", tc.provider, tc.raw, err, len(srv.Requests()), tc.want)
		}
	}
}

// cutTurn is a reply with text, two tool calls and usage: its stream has
// events of every kind to be cut after.
var cutTurn = llmtest.Turn{Text: "Counting first.", Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql":"SELECT count(*) FROM superhero"}`},
	{Name: "run_sql", Arguments: `{"sql":"SELECT 1"}`}}, Input: 1200, Output: 40}

// model is a client of provider on srv that waits for nothing between
// attempts.
func model(t *testing.T, srv *llmtest.Server, provider string, retries int) llm.Client {
	t.Helper()
	base := srv.URL
	if provider == llm.OpenAI {
		base = srv.OpenAIURL()
	}
	c, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: base, MaxRetries: retries, Price: &llm.Price{Input: 1, Output: 2},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCutStreams: a stream that ends cleanly before the reply does, at
// any event boundary, is a reply that broke off: without retries an
// error, never an answer, and no tool call the stream hears is a
// fragment; with one retry the call is asked again, the stream is told
// so, and the reply is the whole one. Only the stream that reaches its
// end gives a reply, the one the same answer gives whole.
func TestCutStreams(t *testing.T) {
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			whole, err := model(t, llmtest.New(t, cutTurn), provider, -1).Chat(context.Background(), conversation())
			if err != nil {
				t.Fatal(err)
			}
			whole.ModelTime = 0
			complete := 0
			for k := 1; k < 64 && complete == 0; k++ {
				turn := cutTurn
				turn.CutAfter = k
				var s streamed
				req := conversation()
				req.Stream = s.stream()
				srv := llmtest.New(t, turn)
				resp, err := model(t, srv, provider, -1).Chat(context.Background(), req)
				for _, c := range s.calls {
					if !slices.Contains(whole.Message.ToolCalls, c) {
						t.Errorf("cut after %d events: the stream heard the fragment %+v", k, c)
					}
				}
				if err != nil {
					if !strings.Contains(err.Error(), "the reply broke off") || !strings.Contains(err.Error(), provider+"/m") {
						t.Errorf("cut after %d events: %v", k, err)
					}
					// Anthropic reports the input tokens at the start, which
					// the broken attempt was billed, and the output before
					// the end; OpenAI at the end.
					var ce *llm.CallError
					if !errors.As(err, &ce) || ce.Answered != 1 {
						t.Fatalf("cut after %d events: %#v, want a CallError of 1 answered attempt", k, err)
					}
					billed := ce.Usage
					if provider == llm.OpenAI && billed != (llm.Usage{}) || provider == llm.Anthropic && (billed.Input != 1200 || billed.Output != 1 && billed.Output != 40) {
						t.Errorf("cut after %d events: the broken attempt used %+v", k, billed)
					}
					retried := llmtest.New(t, turn, cutTurn)
					var r streamed
					req.Stream = r.stream()
					resp, err := model(t, retried, provider, 1).Chat(context.Background(), req)
					if err != nil || resp.Retries != 1 || len(retried.Requests()) != 2 || r.retries != 1 || resp.Message.Content != whole.Message.Content ||
						strings.Join(r.text, "") != whole.Message.Content || len(r.calls) != 2 || len(resp.Message.ToolCalls) != 2 ||
						resp.Message.ToolCalls[1].Arguments != `{"sql":"SELECT 1"}` || resp.Usage != whole.Usage.Add(billed) {
						t.Errorf("cut after %d events, retried: %v, %d requests, %d retries heard; %+v", k, err, len(retried.Requests()), r.retries, resp)
					}
					continue
				}
				complete = k
				resp.ModelTime = 0
				if !reflect.DeepEqual(resp, whole) {
					t.Errorf("cut after %d events, accepted as\n%+v\nwant the whole reply\n%+v", k, resp, whole)
				}
			}
			if complete < 8 {
				t.Errorf("a stream cut after %d events was a reply", complete)
			}
		})
	}
}

// TestWholeReplyToStream: an endpoint that ignores stream: true and
// answers one JSON reply is read as that reply, with its usage and cost,
// and the stream hears it at once.
func TestWholeReplyToStream(t *testing.T) {
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			whole, err := model(t, llmtest.New(t, cutTurn), provider, -1).Chat(context.Background(), conversation())
			if err != nil {
				t.Fatal(err)
			}
			turn := cutTurn
			turn.IgnoreStream = true
			srv := llmtest.New(t, turn)
			var s streamed
			req := conversation()
			req.Stream = s.stream()
			resp, err := model(t, srv, provider, -1).Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if stream, _ := srv.Requests()[0]["stream"].(bool); !stream {
				t.Error("the request did not ask for a stream")
			}
			whole.ModelTime, resp.ModelTime = 0, 0
			if !reflect.DeepEqual(resp, whole) || resp.Usage.Input != 1200 || resp.Cost == nil {
				t.Errorf("read as\n%+v\nwant\n%+v", resp, whole)
			}
			if strings.Join(s.text, "") != whole.Message.Content || !reflect.DeepEqual(s.calls, whole.Message.ToolCalls) {
				t.Errorf("the stream heard %q and %v", s.text, s.calls)
			}
		})
	}
}
