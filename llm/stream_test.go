package llm_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
)

// streamed records what a stream heard.
type streamed struct {
	text  []string
	calls []llm.ToolCall
}

func (s *streamed) stream() *llm.Stream {
	return &llm.Stream{OnText: func(t string) { s.text = append(s.text, t) }, OnToolCall: func(c llm.ToolCall) { s.calls = append(s.calls, c) }}
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

// TestStreamErrors: an error event mid-reply, a malformed event and a
// stream that ends without finishing are errors naming the model, and are
// not retried, since the stream may already have shown part of the reply.
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
