package llm

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// recorded is a whole streamed reply in a format's wire shape, the reply
// of testdata/transcripts/<format>-tool-call.txtar: text, then a run_sql
// call whose arguments come in pieces, then the stop reason and the usage
// (OpenAI's in a last chunk of its own, as stream_options.include_usage
// sends it, then [DONE]).
func recorded(t testing.TB, format string) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "transcripts", format+"-tool-call.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "reply" {
			return string(f.Data)
		}
	}
	t.Fatalf("the %s transcript has no reply", format)
	return ""
}

// assemble reads a streamed body as one attempt of format does, and the
// reply it gives; heard are the tool calls the stream was told.
func assemble(format, body string) (resp *Response, heard []ToolCall, err error) {
	s := &Stream{OnToolCall: func(c ToolCall) { heard = append(heard, c) }}
	if format == OpenAI {
		r := oaStream{stream: s, model: "m"}
		if err := r.read(strings.NewReader(body)); err != nil {
			return nil, heard, err
		}
		resp, err = (&openAI{httpModel{Config{Name: "m"}}}).response(&r.reply, &attempt{})
		return resp, heard, err
	}
	r := anStream{stream: s, model: "m"}
	if err := r.read(strings.NewReader(body)); err != nil {
		return nil, heard, err
	}
	return (&anthropic{httpModel{Config{Name: "m"}}}).response(&r.reply, &attempt{}), heard, nil
}

// TestRecordedStreamsCutAnywhere: a recorded stream cut after any byte,
// mid-line included (a connection closed cleanly mid-event), is either
// the whole reply, when all that is missing is the end of the line or
// event after the last event, or a reply that broke off, asked again as
// a failed connection is: never a malformed reply given up on, never a
// reply with less in it, and the stream never hears a tool call cut
// short. The first accepted cut is where the reply is known whole:
// OpenAI's usage chunk (for servers that send no [DONE]), Anthropic's
// message_stop.
func TestRecordedStreamsCutAnywhere(t *testing.T) {
	for _, format := range []string{OpenAI, Anthropic} {
		t.Run(format, func(t *testing.T) {
			full := recorded(t, format)
			want, calls, err := assemble(format, full)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Message.ToolCalls) != 1 || want.Message.ToolCalls[0].Arguments != `{"sql":"SELECT count(*) FROM superhero"}` ||
				want.Message.Content != "Counting the heroes first." || want.Usage.Input != 5029 || !reflect.DeepEqual(calls, want.Message.ToolCalls) {
				t.Fatalf("the whole stream reads as %+v, the stream heard %v", want, calls)
			}
			last := strings.LastIndex(full, "data: [DONE]")
			if format == Anthropic {
				last = strings.LastIndex(full, `data: {"type":"message_stop"}`)
			}
			line := strings.Index(full[last:], "\n")
			// OpenAI's reply is whole once its usage chunk is read, the
			// line before [DONE]; Anthropic's at message_stop.
			firstWhole := last + line
			if format == OpenAI {
				firstWhole = last - len("\n\n")
			}
			for n := range len(full) {
				got, heard, err := assemble(format, full[:n])
				for _, c := range heard {
					if !slices.Contains(want.Message.ToolCalls, c) {
						t.Errorf("cut after %d bytes: the stream heard the fragment %+v", n, c)
					}
				}
				var broke *brokeOff
				switch {
				case err == nil && n < firstWhole:
					t.Errorf("cut after %d bytes (%q): accepted as %+v", n, full[max(0, n-40):n], got)
				case err == nil && !reflect.DeepEqual(got, want):
					t.Errorf("cut after %d bytes: read as\n%+v\nwant\n%+v", n, got, want)
				case err != nil && n >= firstWhole:
					t.Errorf("cut after %d bytes (%q), after the reply was whole: %v", n, full[max(0, n-40):n], err)
				case err != nil && !errors.As(err, &broke):
					t.Errorf("cut after %d bytes (%q): %v, want a reply that broke off", n, full[max(0, n-40):n], err)
				}
			}
		})
	}
}

// TestUnfinishedBlock: an Anthropic stream that reaches message_stop
// with a tool_use block never stopped is malformed: the block's input,
// perhaps cut short, is never read as the call's arguments.
func TestUnfinishedBlock(t *testing.T) {
	full := recorded(t, Anthropic)
	body := strings.Replace(full, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n", "", 1)
	if body == full {
		t.Fatal("no stop of the tool_use block in the recorded stream")
	}
	resp, heard, err := assemble(Anthropic, body)
	if err == nil || !strings.Contains(err.Error(), "malformed event: block 1 (tool_use) never stopped") || len(heard) != 0 {
		t.Errorf("read as %+v, %v; the stream heard %v", resp, err, heard)
	}
}
