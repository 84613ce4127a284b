package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// refuse is a failure reported to the model so it can repair its call.
func refuse(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// outcome is what a tool returns: the text for the model and the concepts
// whose text it holds.
type outcome struct {
	text     string
	concepts []string
}

type handler func(ctx context.Context, args json.RawMessage) (outcome, error)

// toolset is the tools of one run: the engine's, exactly as MCP clients
// get them, and the agent's own submit_answer (and read_file for the
// browse baseline).
type toolset struct {
	tools []llm.Tool
	box   *engine.Toolbox
	own   map[string]handler

	cfg         *Config
	answer      *trace.Answer
	rows        *sqlguard.Result
	sqlAttempts int
	sqlErrors   int
}

// strategyTools are the engine tools a strategy offers: the engine and
// context strategies all of them (nil), verified queries included, as an
// MCP client sees them, the strategies that paste or browse their
// knowledge the SQL tools alone; ok is false for no strategy (auto is
// resolved before).
func strategyTools(s Strategy) (names []string, ok bool) {
	switch s {
	case Schema, Raw, Browse:
		return []string{engine.ToolRunSQL, engine.ToolValues}, true
	case Engine, Context:
		return nil, true
	}
	return nil, false
}

// newToolset builds the tools of a strategy; every strategy has run_sql
// and ends with submit_answer.
func newToolset(ctx context.Context, cfg *Config) (*toolset, error) {
	names, ok := strategyTools(cfg.Strategy)
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q", cfg.Strategy)
	}
	t := &toolset{cfg: cfg, own: map[string]handler{}, box: &engine.Toolbox{
		Current: engine.Fixed(cfg.Knowledge.View), Databases: cfg.Databases, Tenant: cfg.Tenant,
		Now: cfg.Now, ContextBudget: cfg.ContextBudget,
	}}
	if cfg.Strategy == Browse {
		if cfg.Knowledge.Files == nil {
			return nil, errors.New("the browse strategy reads one bundle: name it (the database's bundle in okf.yaml, or a --dir holding one bundle)")
		}
		t.addOwn("read_file", "Read one markdown file of the knowledge bundle. path is relative to the bundle root, e.g. index.md or tables/orders.md; a folder reads its index.",
			`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the bundle root"}},"required":["path"]}`, t.readFile)
	}
	defs, _, err := t.box.Tools(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		if names == nil || slices.Contains(names, d.Name) {
			t.tools = append(t.tools, llm.Tool{Name: d.Name, Description: d.Description, Parameters: engine.SchemaJSON(d.InputSchema)})
		}
	}
	// In the order MCP clients list them.
	slices.SortFunc(t.tools, func(a, b llm.Tool) int { return strings.Compare(a.Name, b.Name) })
	t.addOwn("submit_answer", "Submit the final answer, once, at the end: the final SQL query and a one-sentence answer. If the request cannot be answered with a query over this database, give an empty sql and say why in answer.",
		`{"type":"object","properties":{"sql":{"type":"string","description":"the final query, or empty to decline"},"answer":{"type":"string","description":"a short answer in plain language"}},"required":["sql","answer"]}`, t.submit)
	return t, nil
}

func (t *toolset) addOwn(name, description, params string, h handler) {
	t.tools = append(t.tools, llm.Tool{Name: name, Description: description, Parameters: json.RawMessage(params)})
	t.own[name] = h
}

// call runs one tool call; any failure becomes text for the model.
func (t *toolset) call(ctx context.Context, tc llm.ToolCall) (out outcome, failed bool) {
	names := make([]string, len(t.tools))
	for i, tool := range t.tools {
		names[i] = tool.Name
	}
	if !slices.Contains(names, tc.Name) {
		return outcome{text: fmt.Sprintf("Error: there is no tool %q; the tools are %s.", tc.Name, strings.Join(names, ", "))}, true
	}
	args := strings.TrimSpace(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) || !strings.HasPrefix(args, "{") {
		return outcome{text: fmt.Sprintf("Error: the arguments of %s are not a JSON object: %s. Call %s again with valid JSON.", tc.Name, trace.Cut(tc.Arguments, 200), tc.Name)}, true
	}
	if h, ok := t.own[tc.Name]; ok {
		out, err := h(ctx, json.RawMessage(args))
		if err != nil {
			return outcome{text: "Error: " + err.Error()}, true
		}
		return out, false
	}
	r, err := t.box.Call(ctx, "agent", tc.Name, json.RawMessage(args))
	if err != nil {
		return outcome{text: "Error: " + err.Error()}, true
	}
	if tc.Name == engine.ToolRunSQL {
		t.sqlAttempts++
		if r.IsError {
			t.sqlErrors++
		}
	}
	return outcome{text: r.Text, concepts: r.Concepts}, r.IsError
}

func decode[T any](args json.RawMessage, tool string) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, refuse("wrong arguments for %s: %v", tool, err)
	}
	return v, nil
}

func (t *toolset) submit(ctx context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		SQL    string `json:"sql"`
		Answer string `json:"answer"`
	}](args, "submit_answer")
	if err != nil {
		return outcome{}, err
	}
	if strings.TrimSpace(a.SQL) != "" {
		t.sqlAttempts++
		res, _, err := t.box.RunSQL(ctx, "agent", t.cfg.Database, a.SQL)
		if err != nil {
			t.sqlErrors++
			msg := err.Error()
			if ge, ok := sqlguard.AsError(err); ok {
				msg = strings.TrimPrefix(ge.Text(a.SQL), "Error: ")
			}
			return outcome{}, refuse("the submitted SQL failed, so it was not accepted. Repair it and submit again.\n%s", msg)
		}
		t.rows = res
	}
	t.answer = &trace.Answer{SQL: strings.TrimSpace(a.SQL), Text: a.Answer}
	return outcome{text: "Answer received."}, nil
}

func (t *toolset) readFile(_ context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		Path string `json:"path"`
	}](args, "read_file")
	if err != nil {
		return outcome{}, err
	}
	fsys := t.cfg.Knowledge.Files
	p := path.Clean("/" + strings.TrimSpace(a.Path))[1:]
	if p == "" {
		p = "."
	}
	if !fs.ValidPath(p) {
		return outcome{}, refuse("%s is not a file of the bundle", a.Path)
	}
	if info, err := fs.Stat(fsys, p); err == nil && info.IsDir() {
		p = path.Join(p, "index.md")
	}
	if path.Ext(p) != ".md" {
		return outcome{}, refuse("%s is not a markdown file of the bundle", a.Path)
	}
	data, err := fs.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) && path.Base(p) == "index.md" {
		if info, err := fs.Stat(fsys, path.Dir(p)); err == nil && info.IsDir() {
			return listFolder(fsys, path.Dir(p))
		}
	}
	if err != nil {
		return outcome{}, refuse("%s does not exist in the bundle; read the index of its folder for the right name", a.Path)
	}
	var concepts []string
	if ref := t.conceptRef(strings.TrimSuffix(p, ".md")); ref != "" {
		concepts = []string{ref}
	}
	return outcome{text: string(data), concepts: concepts}, nil
}

// listFolder stands in for a missing index.md: each file's title and
// description from its frontmatter, and the subfolders.
func listFolder(fsys fs.FS, dir string) (outcome, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return outcome{}, refuse("cannot list %s: %v", dir, err)
	}
	name := dir
	if dir == "." {
		name = "the bundle root"
	}
	lines := []string{fmt.Sprintf("(No index.md here. Files in %s:)", name)}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.IsDir():
			lines = append(lines, fmt.Sprintf("* [%s/](%s/index.md) - folder", e.Name(), e.Name()))
		case path.Ext(e.Name()) == ".md":
			title, desc := frontmatter(fsys, path.Join(dir, e.Name()))
			if title == "" {
				title = strings.TrimSuffix(e.Name(), ".md")
			}
			lines = append(lines, fmt.Sprintf("* [%s](%s) - %s", title, e.Name(), desc))
		}
	}
	return outcome{text: strings.Join(lines, "\n")}, nil
}

func frontmatter(fsys fs.FS, p string) (title, description string) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return "", ""
	}
	text, ok := strings.CutPrefix(string(data), "---\n")
	if !ok {
		return "", ""
	}
	head, _, ok := strings.Cut(text, "\n---")
	if !ok {
		return "", ""
	}
	var meta struct {
		Title       string `yaml:"title"`
		Description string `yaml:"description"`
	}
	if yaml.Unmarshal([]byte(head), &meta) != nil {
		return "", ""
	}
	return meta.Title, meta.Description
}

// conceptRef maps an id to a snapshot ref, "" when the snapshot lacks it.
func (t *toolset) conceptRef(id string) string {
	s := t.cfg.Knowledge.View.Snap
	if b := t.cfg.Knowledge.Bundle; b != "" {
		if _, ok := s.LookupIn(b, id); ok {
			return b + "/" + id
		}
	}
	c, err := s.Concept(id)
	if err != nil {
		return ""
	}
	return c.Bundle + "/" + c.ID
}

// rawDocs pastes every concept of the knowledge, for the raw strategy.
func rawDocs(k Knowledge) (string, []string) {
	s := k.View.Snap
	var b strings.Builder
	var refs []string
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if k.Bundle != "" && c.Bundle != k.Bundle {
			continue
		}
		fmt.Fprintf(&b, "## %s/%s\n\n%s\n\n", c.Bundle, c.ID, strings.TrimSpace(string(s.Body(c))))
		refs = append(refs, c.Bundle+"/"+c.ID)
	}
	return strings.TrimSpace(b.String()), refs
}

// manifestInPrompt is the largest manifest, in tokens, that the engine
// strategy puts in the prompt; a larger one is read with the manifest tool.
const manifestInPrompt = 8000

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
