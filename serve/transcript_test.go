package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/okf-tools/okf/internal/golden"
)

// TestTranscripts replays every transcript under testdata/transcripts
// against a server over the fixture (newFixture), on loopback. A
// transcript is a txtar archive that reads like documentation: its comment
// says what it shows, then request N and response N alternate.
//
// A request is a line "METHOD PATH", header lines, a blank line and the
// body, sent as written. In it, $SESSION stands for the Mcp-Session-Id the
// last initialize was given and $ETAG for the ETag of the last response
// that carried one.
//
// A response is the status line, the headers of transcriptHeaders that it
// carries, a blank line and the body. Only what varies run to run is
// normalised: the session id is written $SESSION and the server's address
// $SERVER. A JSON body is indented, and so is each JSON data line of an
// event stream (an MCP reply), under its "data:" line. -update rewrites
// the responses.
func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			replay(t, path)
		})
	}
}

// transcriptHeaders are the response headers a transcript shows: the ones
// a client acts on. Date and Content-Length are left out.
var transcriptHeaders = []string{"Allow", "Content-Type", "ETag", "Mcp-Session-Id", "Retry-After", "WWW-Authenticate"}

func replay(t *testing.T, path string) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{})
	vars := map[string]string{}
	var files []txtar.File
	n := 0
	for _, file := range a.Files {
		if strings.HasPrefix(file.Name, "response ") {
			continue
		}
		files = append(files, file)
		if !strings.HasPrefix(file.Name, "request ") {
			t.Fatalf("%s: section %q is neither a request nor a response", path, file.Name)
		}
		n++
		if file.Name != fmt.Sprintf("request %d", n) {
			t.Fatalf("%s: section %q, want request %d", path, file.Name, n)
		}
		got := exchange(t, f, string(file.Data), vars)
		name := fmt.Sprintf("response %d", n)
		files = append(files, txtar.File{Name: name, Data: []byte(got)})
		if *golden.Update {
			continue
		}
		want, ok := section(a, name)
		if !ok {
			t.Errorf("%s: no %s (run with -update to write it)", path, name)
		} else if got != want {
			t.Errorf("%s: %s differs (rerun with -update to accept):\n--- got\n%s--- want\n%s", path, name, got, want)
		}
	}
	if len(files) != len(a.Files) && !*golden.Update {
		t.Errorf("%s: %d sections for %d requests: a response without its request (run with -update to drop it)", path, len(a.Files), n)
	}
	if *golden.Update {
		a.Files = files
		if err := os.WriteFile(path, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func section(a *txtar.Archive, name string) (string, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// exchange sends one request of a transcript and returns the response as
// the transcript writes it.
func exchange(t *testing.T, f *fixture, text string, vars map[string]string) string {
	t.Helper()
	for k, v := range vars {
		text = strings.ReplaceAll(text, k, v)
	}
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(strings.TrimSuffix(head, "\n"), "\n")
	method, target, ok := strings.Cut(lines[0], " ")
	if !ok {
		t.Fatalf("request line %q: want METHOD PATH", lines[0])
	}
	req, err := http.NewRequest(method, f.http.URL+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines[1:] {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("header line %q: want Name: value", line)
		}
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		vars["$SESSION"] = id
	}
	if etag := resp.Header.Get("ETag"); etag != "" {
		vars["$ETAG"] = etag
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", resp.Status)
	for _, h := range transcriptHeaders {
		for _, v := range resp.Header.Values(h) {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	if len(data) > 0 {
		b.WriteString("\n")
		b.WriteString(readable(t, resp.Header.Get("Content-Type"), data))
	}
	out := strings.ReplaceAll(b.String(), f.http.URL, "$SERVER")
	if id := vars["$SESSION"]; id != "" {
		out = strings.ReplaceAll(out, id, "$SESSION")
	}
	return out
}

// readable is a response body as a transcript shows it: JSON indented,
// an event stream's JSON data indented under its "data:" line, and a
// final newline.
func readable(t *testing.T, contentType string, data []byte) string {
	t.Helper()
	switch {
	case strings.HasPrefix(contentType, "application/json"):
		return indentJSON(t, data)
	case strings.HasPrefix(contentType, "text/event-stream"):
		var b strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line := sc.Text()
			if payload, ok := strings.CutPrefix(line, "data: "); ok && json.Valid([]byte(payload)) {
				b.WriteString("data:\n")
				b.WriteString(indentJSON(t, []byte(payload)))
				continue
			}
			b.WriteString(line + "\n")
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func indentJSON(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(data), "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	b.WriteByte('\n')
	return b.String()
}
