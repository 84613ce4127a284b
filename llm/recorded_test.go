package llm_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
)

// sse is a turn that answers with body as a server-sent event stream of
// that exact length, so that it ends cleanly, Content-Length met, however
// it was cut.
func sse(body string) llmtest.Turn {
	if body == "" {
		body = "\n" // no event at all; Raw must not be empty
	}
	return llmtest.Turn{Raw: body, Header: map[string]string{"Content-Type": "text/event-stream", "Content-Length": strconv.Itoa(len(body))}}
}

// TestRecordedStreamCutAtEveryEvent: a recorded stream in each format
// (the replies of testdata/transcripts: text, a run_sql call in pieces, the stop
// reason, the usage), served over HTTP and cut cleanly after each of its
// events, is never an answer until the reply is whole: without retries
// the call fails saying the reply broke off, counting one answered
// attempt, and the stream never hears the cut tool call; with one retry
// the call is asked again and gives the whole reply, its usage plus what
// the broken attempt was billed. Only the whole stream is a reply, or in
// the OpenAI format the stream without its [DONE] (the reply is whole at
// its usage chunk, for servers that never send [DONE]).
func TestRecordedStreamCutAtEveryEvent(t *testing.T) {
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			full := llm.RecordedReply(t, provider)
			var heard streamed
			req := conversation()
			req.Stream = heard.stream()
			whole, err := model(t, llmtest.New(t, sse(full)), provider, -1).Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			whole.ModelTime = 0
			if whole.Message.Content != "Counting the heroes first." || len(whole.Message.ToolCalls) != 1 || whole.Usage.Input != 5029 || whole.Cost == nil ||
				!reflect.DeepEqual(heard.calls, whole.Message.ToolCalls) {
				t.Fatalf("the whole stream reads as %+v; the stream heard %v", whole, heard.calls)
			}
			events := strings.SplitAfter(full, "\n\n")
			events = events[:len(events)-1] // the empty string after the last
			firstWhole := len(events)
			if provider == llm.OpenAI {
				firstWhole--
			}
			for k := range len(events) {
				cut := strings.Join(events[:k], "")
				var s streamed
				req.Stream = s.stream()
				resp, err := model(t, llmtest.New(t, sse(cut)), provider, -1).Chat(context.Background(), req)
				for _, c := range s.calls {
					if !slices.Contains(whole.Message.ToolCalls, c) {
						t.Errorf("cut after %d events: the stream heard the fragment %+v", k, c)
					}
				}
				if k >= firstWhole {
					if resp != nil {
						resp.ModelTime = 0
					}
					if err != nil || !reflect.DeepEqual(resp, whole) {
						t.Errorf("cut after %d of %d events, after the reply was whole: %v, %+v", k, len(events), err, resp)
					}
					continue
				}
				var ce *llm.CallError
				if err == nil || !strings.Contains(err.Error(), provider+"/m: the reply broke off") || !errors.As(err, &ce) || ce.Answered != 1 {
					t.Errorf("cut after %d events (%q): %v, %+v; want a reply that broke off", k, lastLine(cut), err, resp)
					continue
				}
				retried := llmtest.New(t, sse(cut), sse(full))
				var r streamed
				req.Stream = r.stream()
				resp, err = model(t, retried, provider, 1).Chat(context.Background(), req)
				if err != nil || resp.Retries != 1 || len(retried.Requests()) != 2 || r.retries != 1 || !reflect.DeepEqual(r.calls, whole.Message.ToolCalls) ||
					!reflect.DeepEqual(resp.Message, whole.Message) || resp.Usage != whole.Usage.Add(ce.Usage) {
					t.Errorf("cut after %d events, retried: %v after %d requests; %+v", k, err, len(retried.Requests()), resp)
				}
			}
		})
	}
}

// lastLine is the last line of a stream cut short, for messages.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

// TestStreamEndings: a stream is whole however its end is written: no
// blank line after the last event, or no newline at all; OpenAI's [DONE]
// after a finish reason in an earlier chunk, with no usage chunk (a
// server that ignores stream_options.include_usage: the cost is then
// unknown), or the usage chunk with no [DONE].
func TestStreamEndings(t *testing.T) {
	oa, an := []byte(llm.RecordedReply(t, llm.OpenAI)), []byte(llm.RecordedReply(t, llm.Anthropic))
	usage := strings.LastIndex(string(oa), "data: {")
	noUsage := string(oa[:usage]) + "data: [DONE]\n\n"
	for _, tc := range []struct {
		provider, name, body string
		usage                bool
	}{
		{llm.OpenAI, "no blank line", strings.TrimSuffix(string(oa), "\n"), true},
		{llm.OpenAI, "no newline", strings.TrimSuffix(string(oa), "\n\n"), true},
		{llm.OpenAI, "no usage chunk", noUsage, false},
		{llm.OpenAI, "no usage chunk, no newline", strings.TrimSuffix(noUsage, "\n\n"), false},
		{llm.OpenAI, "no [DONE]", string(oa[:strings.LastIndex(string(oa), "data: [DONE]")]), true},
		{llm.Anthropic, "no blank line", strings.TrimSuffix(string(an), "\n"), true},
		{llm.Anthropic, "no newline", strings.TrimSuffix(string(an), "\n\n"), true},
	} {
		resp, err := model(t, llmtest.New(t, sse(tc.body)), tc.provider, -1).Chat(context.Background(), withStream(conversation()))
		if err != nil {
			t.Errorf("%s, %s: %v", tc.provider, tc.name, err)
			continue
		}
		if resp.Message.Content != "Counting the heroes first." || len(resp.Message.ToolCalls) != 1 || (resp.Usage.Input == 5029) != tc.usage || (resp.Cost != nil) != tc.usage {
			t.Errorf("%s, %s: read as %+v", tc.provider, tc.name, resp)
		}
	}
}

func withStream(req *llm.Request) *llm.Request {
	req.Stream = &llm.Stream{}
	return req
}

// TestWholeErrorReply: an endpoint that answers a call, streamed or not,
// with 200 and an error object has the call fail with the error's text,
// counted as answered; it is not read as an empty reply.
func TestWholeErrorReply(t *testing.T) {
	for _, tc := range []struct{ provider, body string }{
		{llm.Anthropic, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{llm.OpenAI, `{"error":{"type":"server_error","message":"Overloaded"}}`},
	} {
		for _, stream := range []bool{false, true} {
			req := conversation()
			if stream {
				req = withStream(req)
			}
			resp, err := model(t, llmtest.New(t, llmtest.Turn{Raw: tc.body}), tc.provider, -1).Chat(context.Background(), req)
			var ce *llm.CallError
			if err == nil || !strings.Contains(err.Error(), "the server answered with an error: overloaded_error: Overloaded") && !strings.Contains(err.Error(), "server_error: Overloaded") ||
				!errors.As(err, &ce) || ce.Answered != 1 {
				t.Errorf("%s, stream %v: %+v, %v", tc.provider, stream, resp, err)
			}
		}
	}
}

// TestWholeReplyWithoutChoices: a JSON object with no choices answering
// a streaming request says so, and how to ask for whole replies.
func TestWholeReplyWithoutChoices(t *testing.T) {
	_, err := model(t, llmtest.New(t, llmtest.Turn{Raw: `{"object":"chat.completion","choices":[]}`}), llm.OpenAI, -1).Chat(context.Background(), withStream(conversation()))
	if err == nil || !strings.Contains(err.Error(), "no choices, in one JSON object answering a streaming request (no_stream: true") {
		t.Errorf("%v", err)
	}
}
