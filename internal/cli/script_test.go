package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/golden"
)

var update = golden.Update

// TestGoldenScripts runs every script under testdata/script: a command of
// okf as a user types it, the files it reads, and what it prints, written
// as a txtar archive that reads like documentation. The script is the
// archive's comment, a command a line:
//
//	fixture NAME          copy testdata/fixture/NAME into the work folder
//	okf ARGS...           run okf (the last one's output is the golden)
//	mcp-tools ARGS...     run okf mcp ARGS and print what tools/list answers
//	sqlite FILE SQLFILE   make a SQLite database from a file of SQL
//
// The files are the archive's other sections, except stdout, stderr and
// exit, which hold what the last command printed and its exit status (0
// when absent). -update rewrites those three.
func TestGoldenScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runScript(t, path)
		})
	}
}

// archive is a parsed txtar file.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

func parseArchive(text string) archive {
	var a archive
	var cur *archiveFile
	var b strings.Builder
	flush := func() {
		if cur == nil {
			a.comment = b.String()
		} else {
			cur.data = b.String()
			a.files = append(a.files, *cur)
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if name, ok := marker(line); ok {
			flush()
			cur = &archiveFile{name: name}
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

func marker(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < 7 {
		return "", false
	}
	return strings.TrimSpace(line[3 : len(line)-3]), true
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (a archive) file(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

var outputSections = map[string]bool{"stdout": true, "stderr": true, "exit": true}

func runScript(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := parseArchive(string(raw))
	work := t.TempDir()
	for _, f := range a.files {
		if outputSections[f.name] {
			continue
		}
		p := filepath.Join(work, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	var code int
	var stdout, stderr string
	ran := false
	for n, line := range strings.Split(a.comment, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		switch words[0] {
		case "fixture":
			if len(words) != 2 {
				t.Fatalf("%s:%d: fixture NAME", path, n+1)
			}
			if err := os.CopyFS(work, os.DirFS(filepath.Join(packageDir, "testdata", "fixture", words[1]))); err != nil {
				t.Fatal(err)
			}
		case "okf":
			code, stdout, stderr = run(t, words[1:]...)
			ran = true
		case "mcp-tools":
			stdout, stderr, code = mcpTools(t, words[1:]), "", 0
			ran = true
		case "mcp-calls":
			if len(words) < 2 {
				t.Fatalf("%s:%d: mcp-calls JSON [okf mcp flags]", path, n+1)
			}
			stdout, stderr, code = mcpCalls(t, words[1], words[2:]), "", 0
			ran = true
		case "sqlite":
			if len(words) != 3 {
				t.Fatalf("%s:%d: sqlite FILE SQLFILE", path, n+1)
			}
			makeSQLite(t, words[1], words[2])
		default:
			t.Fatalf("%s:%d: unknown command %q", path, n+1, words[0])
		}
	}
	if !ran {
		t.Fatalf("%s: no okf or mcp-tools command", path)
	}
	stdout = strings.ReplaceAll(stdout, work, "$WORK")
	stderr = strings.ReplaceAll(stderr, work, "$WORK")
	got := map[string]string{"stdout": stdout, "stderr": stderr}
	if code != 0 {
		got["exit"] = strconv.Itoa(code) + "\n"
	}
	if *update {
		var files []archiveFile
		for _, f := range a.files {
			if !outputSections[f.name] {
				files = append(files, f)
			}
		}
		for _, name := range []string{"stdout", "stderr", "exit"} {
			if got[name] != "" {
				files = append(files, archiveFile{name, got[name]})
			}
		}
		a.files = files
		writeGolden(t, path, a.format())
		return
	}
	for _, name := range []string{"stdout", "stderr", "exit"} {
		want, _ := a.file(name)
		if got[name] != want {
			t.Errorf("%s: %s differs (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", path, name, got[name], want)
		}
	}
}

// writeGolden writes a golden file relative to the package folder the
// test started in.
func writeGolden(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(packageDir, path), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// packageDir is the package's folder, where go test starts.
var packageDir, _ = os.Getwd()

// splitWords splits a script line into words; "…" and '…' quote.
func splitWords(line string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"' || c == '\'':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unclosed %c", c)
			}
			b.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case unicode.IsSpace(rune(c)):
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

// makeSQLite runs the SQL in sqlFile on a new SQLite file at db.
func makeSQLite(t *testing.T, db, sqlFile string) {
	t.Helper()
	text, err := os.ReadFile(sqlFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sqlite3.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(string(text)); err != nil {
		t.Fatalf("%s: %v", sqlFile, err)
	}
}

// mcpTools prints, as indented JSON, the tools okf mcp lists.
func mcpTools(t *testing.T, args []string) string {
	t.Helper()
	cs := mcpStdio(t, args...)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res.Tools); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// mcpCalls makes the calls of a JSON list of {"tool", "arguments"} over
// okf mcp and prints each: the call, then the text it returned, marked
// when it is an error.
func mcpCalls(t *testing.T, list string, args []string) string {
	t.Helper()
	var calls []struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(list), &calls); err != nil {
		t.Fatalf("mcp-calls: %v", err)
	}
	cs := mcpStdio(t, args...)
	var b strings.Builder
	for _, c := range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.Tool, Arguments: c.Arguments})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(c.Arguments)
		fmt.Fprintf(&b, "## %s %s", c.Tool, a)
		if res.IsError {
			b.WriteString(" (error)")
		}
		fmt.Fprintf(&b, "\n%s\n\n", toolText(t, res))
	}
	return b.String()
}
