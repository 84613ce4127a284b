package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/llm/llmtest"
)

// TestWireTranscripts replays testdata/transcripts/*.txtar: each holds, for
// one provider's format (the file's name before the first "-"), the
// stream a server answers with ("reply"), and pins what okf sent for the
// conversation of a tool round trip ("request", the JSON body, indented)
// and what it read of the reply ("turn": text, tool calls, usage, stop
// reason, and the pieces the stream heard as they came). -update rewrites
// the request and the turn.
func TestWireTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			provider, _, _ := strings.Cut(filepath.Base(path), "-")
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			reply, ok := sections["reply"]
			if !ok {
				t.Fatal("no reply section")
			}
			srv := llmtest.New(t, sse(string(reply)))
			var heard streamed
			req := conversation()
			req.Stream = heard.stream()
			res, err := model(t, srv, provider, 0).Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("%d requests, want 1", len(srv.Requests()))
			}
			request := indented(t, srv.Requests()[0])
			turn := indented(t, map[string]any{
				"content": res.Message.Content, "tool_calls": res.Message.ToolCalls, "finish": res.Finish,
				"usage":    map[string]int{"input": res.Usage.Input, "output": res.Usage.Output},
				"streamed": map[string]any{"text": heard.text, "tool_calls": heard.calls},
			})
			if *golden.Update {
				for i, f := range ar.Files {
					switch f.Name {
					case "request":
						ar.Files[i].Data = request
					case "turn":
						ar.Files[i].Data = turn
					}
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for name, got := range map[string][]byte{"request": request, "turn": turn} {
				if want := sections[name]; !bytes.Equal(got, want) {
					t.Errorf("%s differs (rerun with -update and read the diff):\n got: %s\nwant: %s", name, got, want)
				}
			}
		})
	}
}

func indented(t *testing.T, v any) []byte {
	t.Helper()
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}
