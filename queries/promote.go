package queries

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/lazy"
)

// Promotion is a question and the SQL that answered it, to be made a
// draft query concept for a person to review.
type Promotion struct {
	Question string
	SQL      string
	// Bundle is the bundle the draft goes into; Reads are the ids of its
	// concepts the answer read (tables and rules), linked from the draft.
	Bundle string
	Reads  []string
	// Run names where the SQL came from, cited in sources: a run id.
	Run string
	// Generator is the generated.by actor, such as okf/1.2.0.
	Generator string
}

// Draft is a promoted query concept: its file name under queries/ and its
// text.
type Draft struct {
	Name   string
	Text   []byte
	Params []string // the parameters made from the question's values
}

// Promote makes a draft query concept (status draft, with no verified
// entry: unverified, §5.2) of a question and its SQL. Each literal of the SQL that the question states
// (a name, a number, a date) becomes a parameter whose default is that
// value, so the draft runs as the answer did; the rest stays as written.
// The draft cites the run, lists the question, and links the concepts
// read.
func Promote(p Promotion) (Draft, error) {
	sql := strings.TrimRight(strings.TrimSpace(p.SQL), "; \t\n")
	if sql == "" {
		return Draft{}, fmt.Errorf("no SQL to promote")
	}
	if strings.Contains(sql, "```") || strings.Contains(sql, "~~~") {
		return Draft{}, fmt.Errorf("the SQL holds a code fence, which a query concept cannot hold")
	}
	bound, params := parameterize(sql, p.Question)
	var fm strings.Builder
	title := oneLine(p.Question)
	if len(title) > 80 {
		cut := strings.LastIndexByte(title[:80], ' ')
		if cut < 40 {
			cut = 80
		}
		title = strings.TrimRight(title[:cut], " ,;:") + "…"
	}
	fm.WriteString("---\ntype: " + okf.QueryType + "\n")
	fmt.Fprintf(&fm, "title: %s\n", yamlScalar(title))
	fmt.Fprintf(&fm, "description: %s\n", yamlScalar("Promoted from a run that answered: "+oneLine(p.Question)))
	if p.Bundle != "" {
		fmt.Fprintf(&fm, "tags: [%s]\n", yamlScalar(p.Bundle))
	}
	if len(params) > 0 {
		fm.WriteString("parameters:\n")
		for _, pr := range params {
			fmt.Fprintf(&fm, "  - name: %s\n    type: %s\n    default: %s\n", pr.name, pr.typ, yamlScalar(pr.value))
		}
	}
	fm.WriteString("status: draft\n")
	if p.Generator != "" {
		fmt.Fprintf(&fm, "generated:\n  by: %s\n", yamlScalar(p.Generator))
	}
	if p.Run != "" {
		fmt.Fprintf(&fm, "sources:\n  - id: run\n    resource: %s\n    title: %s\n", yamlScalar("okf run "+p.Run), yamlScalar("the agent's run "+p.Run+", scored correct"))
	}
	fm.WriteString("---\n\n# SQL\n\n```sql\n" + bound + "\n```\n\n# Questions\n\n* " + oneLine(p.Question) + "\n")
	if len(p.Reads) > 0 {
		fm.WriteString("\n# Uses\n\n")
		for _, id := range p.Reads {
			fmt.Fprintf(&fm, "* [%s](/%s.md)\n", id, id)
		}
	}
	d := Draft{Name: draftName(p), Text: []byte(fm.String())}
	for _, pr := range params {
		d.Params = append(d.Params, pr.name)
	}
	return d, nil
}

var nonWord = lazy.Regexp{Expr: `[^a-z0-9]+`}

// draftName is a file name from the question's first words and the run.
func draftName(p Promotion) string {
	words := strings.Fields(nonWord.Get().ReplaceAllString(strings.ToLower(p.Question), " "))
	words = words[:min(len(words), 6)]
	name := strings.Join(words, "-")
	if name == "" {
		name = "query"
	}
	if run := nonWord.Get().ReplaceAllString(strings.ToLower(p.Run), ""); run != "" {
		name += "-" + run[:min(len(run), 8)]
	}
	return name + ".md"
}

type param struct{ name, typ, value string }

// parameterize replaces the literals of sql that the question states with
// :name placeholders, one parameter per distinct value.
func parameterize(sql, question string) (string, []param) {
	var (
		b      strings.Builder
		params []param
		last   int
	)
	q := strings.ToLower(question)
	for _, lit := range literals(sql) {
		value, typ := lit.value, lit.typ
		if !states(q, strings.ToLower(value)) || typedBefore(sql[:lit.start]) {
			continue
		}
		i := slices.IndexFunc(params, func(p param) bool { return p.value == value && p.typ == typ })
		if i < 0 {
			params = append(params, param{name: paramName(sql[:lit.start], params), typ: typ, value: value})
			i = len(params) - 1
		}
		b.WriteString(sql[last:lit.start])
		b.WriteString(":" + params[i].name)
		last = lit.end
	}
	b.WriteString(sql[last:])
	return b.String(), params
}

// states reports whether a question holds a value as a word of its own.
func states(question, value string) bool {
	if strings.TrimSpace(value) == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(question[from:], value)
		if i < 0 {
			return false
		}
		at := from + i
		end := at + len(value)
		if (at == 0 || !isWord(rune(question[at-1]))) && (end == len(question) || !isWord(rune(question[end]))) {
			return true
		}
		from = at + 1
	}
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// typedBefore reports whether a literal is a typed one (DATE '…',
// INTERVAL '…'), which a driver parameter cannot stand for.
func typedBefore(before string) bool {
	fields := strings.Fields(before)
	if len(fields) == 0 {
		return false
	}
	switch strings.ToUpper(fields[len(fields)-1]) {
	case "DATE", "TIME", "TIMESTAMP", "INTERVAL", "TIMESTAMPTZ":
		return true
	}
	return false
}

var identBefore = lazy.Regexp{Expr: `(?i)([a-z_][a-z0-9_]*)"?\s*(?:=|<>|!=|<=|>=|<|>|like|ilike|in\s*\(|between|not\s+like)?\s*(?:[^\s]*\s*,\s*)*$`}

// paramName names a parameter after the column it is compared with, else
// value, unique among params.
func paramName(before string, params []param) string {
	name := "value"
	if m := identBefore.Get().FindStringSubmatch(before); m != nil && !sqlWord.Get()[strings.ToLower(m[1])] {
		name = strings.ToLower(m[1])
	} else if strings.HasSuffix(strings.ToUpper(strings.TrimSpace(before)), "LIMIT") {
		name = "max_rows"
	}
	unique := name
	for n := 2; slices.ContainsFunc(params, func(p param) bool { return p.name == unique }); n++ {
		unique = name + "_" + strconv.Itoa(n)
	}
	return unique
}

// sqlWord are keywords a literal may follow that name no column.
var sqlWord = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{"and": true, "or": true, "not": true, "select": true, "where": true, "when": true, "then": true,
		"else": true, "limit": true, "offset": true, "by": true, "on": true, "as": true, "in": true, "is": true, "like": true, "between": true}
}}

// literal is a string or number literal of a SQL text.
type literal struct {
	start, end int
	value, typ string
}

// literals lists the string and number literals of a SQL text.
func literals(sql string) []literal {
	var out []literal
	okf.ScanSQL(sql, func(kind okf.SQLToken, start, end int) {
		switch {
		case kind == okf.SQLString && end-start >= 2 && sql[end-1] == '\'' && (start == 0 || !isWord(rune(sql[start-1]))):
			v := strings.ReplaceAll(sql[start+1:end-1], "''", "'")
			typ := "text"
			if _, err := time.Parse(time.DateOnly, v); err == nil {
				typ = "date"
			}
			out = append(out, literal{start, end, v, typ})
		case kind == okf.SQLNumber && (start == 0 || sql[start-1] != '.'):
			typ := "integer"
			if strings.Contains(sql[start:end], ".") {
				typ = "number"
			}
			out = append(out, literal{start, end, sql[start:end], typ})
		}
	})
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// yamlScalar writes a value as one YAML scalar, quoted when it must be.
func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// Run is what a promotion reads of an agent's run (trace.Record holds
// it): queries sits before the agent in okf's flow and does not read runs.
type Run struct {
	ID, Question, Database string
	// SQL is the submitted answer's; "" when the run submitted none.
	SQL        string
	StopReason string
	// ConceptsRead are "bundle/concept" references, in reading order.
	ConceptsRead []string
}

// FromRun is the promotion of a run's submitted answer: its question and
// SQL, into the bundle it read most, linking what it read there.
func FromRun(r Run) (Promotion, error) {
	if strings.TrimSpace(r.SQL) == "" {
		return Promotion{}, fmt.Errorf("run %s submitted no SQL (stop reason %s): there is nothing to promote", r.ID, r.StopReason)
	}
	count := map[string]int{}
	bundle := ""
	for _, ref := range r.ConceptsRead {
		b, _, ok := strings.Cut(ref, "/")
		if !ok {
			continue
		}
		count[b]++
		if count[b] > count[bundle] || count[b] == count[bundle] && b < bundle {
			bundle = b
		}
	}
	if bundle == "" {
		bundle = r.Database
	}
	p := Promotion{Question: r.Question, SQL: r.SQL, Bundle: bundle, Run: r.ID}
	for _, ref := range r.ConceptsRead {
		if id, ok := strings.CutPrefix(ref, bundle+"/"); ok && !slices.Contains(p.Reads, id) {
			p.Reads = append(p.Reads, id)
		}
	}
	return p, nil
}

// WriteDraft writes a draft into dir/<bundle>/queries/, a folder of
// bundles as okf compile writes them, and returns its path. It never
// overwrites a file: a draft already there is an error naming it.
func WriteDraft(dir, bundle string, d Draft) (string, error) {
	if bundle == "" || bundle != filepath.Base(bundle) || strings.HasPrefix(bundle, ".") {
		return "", fmt.Errorf("%q cannot name a bundle folder", bundle)
	}
	folder := filepath.Join(dir, bundle, "queries")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(folder, d.Name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%s already exists: review it, or move it away to promote the run again: %w", path, fs.ErrExist)
	}
	if err != nil {
		return "", err
	}
	if _, err := f.Write(d.Text); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}
