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

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
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

// toolset is the tools of one run, with the state they share.
type toolset struct {
	tools    []llm.Tool
	handlers map[string]handler

	cfg         *Config
	index       *search.Index
	contextUsed bool
	answer      *trace.Answer
	rows        *sqlguard.Result
	sqlAttempts int
	sqlErrors   int
}

func (t *toolset) add(name, description, params string, h handler) {
	t.tools = append(t.tools, llm.Tool{Name: name, Description: description, Parameters: json.RawMessage(params)})
	t.handlers[name] = h
}

// newToolset builds the tools of a strategy; every strategy ends with
// run_sql and submit_answer.
func newToolset(cfg *Config) (*toolset, error) {
	t := &toolset{cfg: cfg, handlers: map[string]handler{}}
	k := cfg.Knowledge
	switch cfg.Strategy {
	case Raw:
	case Browse:
		if k.Files == nil {
			return nil, errors.New("the browse strategy reads one bundle: name it (the database's bundle in okf.yaml, or a --dir holding one bundle)")
		}
		t.add("read_file", "Read one markdown file of the knowledge bundle. path is relative to the bundle root, e.g. index.md or tables/orders.md; a folder reads its index.",
			`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the bundle root"}},"required":["path"]}`, t.readFile)
	case Engine:
		t.index = cfg.index()
		t.add("search", "Rank the knowledge's concepts (business rules, tables) for a query; returns manifest rows: id, bundle, kind, status, grain, summary, links, and where the match is.",
			`{"type":"object","properties":{"query":{"type":"string","description":"words of the question or a business term"},"k":{"type":"integer","description":"number of hits, default 8"}},"required":["query"]}`, t.search)
		t.add("get", getDescription, getParams, t.get)
		t.add("manifest", "List every concept of the knowledge, one manifest row each.",
			`{"type":"object","properties":{}}`, t.manifest)
	case Context:
		t.index = cfg.index()
		t.add("context", "Pack the knowledge a question needs into one text under a token budget: rules, the rules they depend on, schema rows of the columns they use, joins, then further candidate ids. Call it once.",
			`{"type":"object","properties":{"question":{"type":"string","description":"the user's question"}},"required":["question"]}`, t.context)
		t.add("get", getDescription, getParams, t.get)
	default:
		return nil, fmt.Errorf("unknown strategy %q", cfg.Strategy)
	}
	t.add("run_sql", fmt.Sprintf("Run one read-only %s query (SELECT or WITH) and return the column names, the first rows and the row count, or the error to repair.", cfg.Dialect),
		`{"type":"object","properties":{"sql":{"type":"string","description":"one SELECT or WITH query"}},"required":["sql"]}`, t.runSQL)
	t.add("submit_answer", "Submit the final answer, once, at the end: the final SQL query and a one-sentence answer. If the request cannot be answered with a query over this database, give an empty sql and say why in answer.",
		`{"type":"object","properties":{"sql":{"type":"string","description":"the final query, or empty to decline"},"answer":{"type":"string","description":"a short answer in plain language"}},"required":["sql","answer"]}`, t.submit)
	return t, nil
}

const getDescription = "Read a concept of the knowledge by id (e.g. tables/orders), or one section of it (a heading slug, e.g. schema); offset/limit cut bytes, find returns a window around a phrase."

const getParams = `{"type":"object","properties":{"id":{"type":"string","description":"concept id, optionally with #section"},"section":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"},"find":{"type":"string"}},"required":["id"]}`

// call runs one tool call; any failure becomes text for the model.
func (t *toolset) call(ctx context.Context, tc llm.ToolCall) (out outcome, failed bool) {
	h, ok := t.handlers[tc.Name]
	if !ok {
		names := make([]string, len(t.tools))
		for i, tool := range t.tools {
			names[i] = tool.Name
		}
		return outcome{text: fmt.Sprintf("Error: there is no tool %q; the tools are %s.", tc.Name, strings.Join(names, ", "))}, true
	}
	args := strings.TrimSpace(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) || !strings.HasPrefix(args, "{") {
		return outcome{text: fmt.Sprintf("Error: the arguments of %s are not a JSON object: %s. Call %s again with valid JSON.", tc.Name, trace.Cut(tc.Arguments, 200), tc.Name)}, true
	}
	out, err := h(ctx, json.RawMessage(args))
	if err != nil {
		return outcome{text: "Error: " + err.Error()}, true
	}
	return out, false
}

func decode[T any](args json.RawMessage, tool string) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, refuse("wrong arguments for %s: %v", tool, err)
	}
	return v, nil
}

func (t *toolset) runSQL(ctx context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		SQL string `json:"sql"`
	}](args, "run_sql")
	if err != nil {
		return outcome{}, err
	}
	res, err := t.query(ctx, a.SQL)
	if err != nil {
		return outcome{}, err
	}
	return outcome{text: frameRows(res.Text(t.cfg.DB.Options().ShownRows))}, nil
}

// query runs SQL through the guard, counting attempts and errors.
func (t *toolset) query(ctx context.Context, sql string) (*sqlguard.Result, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, refuse("sql is empty")
	}
	t.sqlAttempts++
	res, err := t.cfg.DB.Query(ctx, "agent", sql)
	if err != nil {
		t.sqlErrors++
		if ge, ok := sqlguard.AsError(err); ok {
			return nil, refuse("%s", ge.Text(sql))
		}
		return nil, refuse("%v", err)
	}
	return res, nil
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
		res, err := t.query(ctx, a.SQL)
		if err != nil {
			return outcome{}, refuse("the submitted SQL failed, so it was not accepted. Repair it and submit again.\n%s", strings.TrimPrefix(err.Error(), "Error: "))
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
	s := t.cfg.Knowledge.Snapshot
	if s == nil {
		return ""
	}
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

func (t *toolset) search(_ context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}](args, "search")
	if err != nil {
		return outcome{}, err
	}
	if strings.TrimSpace(a.Query) == "" {
		return outcome{}, refuse("query is empty")
	}
	hits := t.index.Search(a.Query, search.Options{K: min(max(a.K, 0), 50), Bundle: t.cfg.Knowledge.Bundle})
	if len(hits) == 0 {
		return outcome{text: "No concept matches; try other words, or read the manifest."}, nil
	}
	var b strings.Builder
	b.WriteString("id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n")
	now := t.cfg.now()
	for _, h := range hits {
		pos := "-"
		if h.Pos >= 0 {
			pos = fmt.Sprint(h.Pos)
		}
		b.WriteString(t.cfg.Knowledge.Snapshot.Row(h.Concept, now) + "\t" + pos + "\n")
	}
	return outcome{text: b.String()}, nil
}

func (t *toolset) get(_ context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		ID      string `json:"id"`
		Section string `json:"section"`
		Offset  int    `json:"offset"`
		Limit   int    `json:"limit"`
		Find    string `json:"find"`
	}](args, "get")
	if err != nil {
		return outcome{}, err
	}
	id, section, _ := strings.Cut(strings.TrimSuffix(strings.TrimSpace(a.ID), ".md"), "#")
	if a.Section != "" {
		section = a.Section
	}
	ref := t.conceptRef(id)
	if ref == "" {
		return outcome{}, refuse("no concept %q; search for it or read the manifest for its id", a.ID)
	}
	sl, err := t.cfg.Knowledge.Snapshot.Get(ref, readmodel.GetOptions{Section: section, Offset: max(a.Offset, 0), Limit: max(a.Limit, 0), Find: a.Find})
	if err != nil {
		return outcome{}, refuse("%v", err)
	}
	head := "@@ " + sl.Ref
	if sl.Section != "" {
		head += "#" + sl.Section
	}
	head += fmt.Sprintf(" [%d..%d of %d]", sl.Start, sl.End, sl.Total)
	return outcome{text: head + "\n" + sl.Text, concepts: []string{ref}}, nil
}

func (t *toolset) manifest(context.Context, json.RawMessage) (outcome, error) {
	m, err := t.cfg.Knowledge.Snapshot.ManifestAt(t.cfg.Knowledge.Bundle, t.cfg.now())
	if err != nil {
		return outcome{}, refuse("%v", err)
	}
	return outcome{text: string(m)}, nil
}

func (t *toolset) context(_ context.Context, args json.RawMessage) (outcome, error) {
	a, err := decode[struct {
		Question string `json:"question"`
	}](args, "context")
	if err != nil {
		return outcome{}, err
	}
	if t.contextUsed {
		return outcome{}, refuse("context was already called in this run; read further concepts with get")
	}
	if strings.TrimSpace(a.Question) == "" {
		return outcome{}, refuse("question is empty")
	}
	t.contextUsed = true
	pack := t.index.Context(a.Question, search.PackOptions{Budget: t.cfg.ContextBudget, Bundle: t.cfg.Knowledge.Bundle, Count: tokens.Count})
	var concepts []string
	concepts = append(concepts, pack.Rules...)
	for _, ref := range pack.Tables {
		if !slices.Contains(concepts, ref) {
			concepts = append(concepts, ref)
		}
	}
	return outcome{text: pack.Text, concepts: concepts}, nil
}

// rawDocs pastes every concept of the knowledge, for the raw strategy.
func rawDocs(k Knowledge) (string, []string) {
	s := k.Snapshot
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
