package okf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// QueryType is the type of a query concept: a parameterized SQL query
// that answers a question people ask often (docs/queries.md).
const QueryType = "SQL Query"

// ParamTypes are the types a query parameter may have.
var ParamTypes = []string{"text", "integer", "number", "boolean", "date", "timestamp"}

// Query is what a query concept states: its parameters, its SQL with
// :name placeholders, and the questions it answers.
type Query struct {
	Params    []QueryParam
	SQL       string
	SQLLine   int // the file line of the SQL's first line
	Questions []string
}

// QueryParam is one parameter of a query concept.
type QueryParam struct {
	Name, Type, Description string
	// Default, Enum, Min and Max are as written, nil when absent.
	Default  *yaml.Node
	Enum     []*yaml.Node
	Min, Max *yaml.Node
	Line     int
}

// IsQuery reports whether a document is a query concept.
func IsQuery(d *Document) bool { return strings.EqualFold(strings.TrimSpace(d.Type()), QueryType) }

// isName reports whether s is a parameter name: a letter or _, then
// letters, digits and _.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

// ParseQuery reads a query concept, and what is wrong with it as
// findings: parameters that are malformed, declared twice or unused, a
// missing or doubled SQL block, placeholders no parameter declares.
func ParseQuery(d *Document) (*Query, []Finding) {
	q := &Query{}
	var out []Finding
	add := func(code string, line int, format string, args ...any) {
		out = append(out, newFinding(code, d.Path, line, format, args...))
	}
	if n := d.Field("parameters"); n != nil {
		if n.Kind != yaml.SequenceNode {
			add("query-parameters-invalid", n.Line, "`parameters` is a %s, not a list", nodeKindName(n))
		} else {
			seen := map[string]bool{}
			for i, e := range n.Content {
				p, problem := parseParam(e)
				switch {
				case problem != "":
					add("query-parameters-invalid", e.Line, "`parameters[%d]`: %s", i, problem)
				case seen[p.Name]:
					add("query-parameters-invalid", e.Line, "parameter `%s` is declared twice", p.Name)
				default:
					seen[p.Name] = true
					q.Params = append(q.Params, p)
				}
			}
		}
	}
	blocks := fencedSQL(d)
	switch {
	case len(blocks) == 0:
		add("query-sql-missing", d.Frontmatter.Line, "a query concept needs a `# SQL` section holding one fenced `sql` block")
		return q, out
	case len(blocks) > 1:
		add("query-sql-missing", blocks[1].Line, "the `# SQL` section holds %d fenced blocks; give exactly one", len(blocks))
	}
	q.SQL, q.SQLLine = blocks[0].Text, blocks[0].Line
	used := Placeholders(q.SQL)
	for _, name := range used {
		if !slices.ContainsFunc(q.Params, func(p QueryParam) bool { return p.Name == name }) {
			add("query-placeholder-undeclared", q.SQLLine, "`:%s` is used in the SQL but no parameter declares it", name)
		}
	}
	for _, p := range q.Params {
		if !slices.Contains(used, p.Name) {
			add("query-parameter-unused", p.Line, "parameter `%s` is declared but the SQL never uses `:%s`", p.Name, p.Name)
		}
	}
	if sec, ok := d.Section("questions"); ok {
		for _, line := range strings.Split(string(d.Raw[sec.Start:sec.End]), "\n")[1:] {
			if item, ok := strings.CutPrefix(strings.TrimSpace(line), "* "); ok {
				q.Questions = append(q.Questions, strings.TrimSpace(item))
			} else if item, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
				q.Questions = append(q.Questions, strings.TrimSpace(item))
			}
		}
	}
	return q, out
}

// parseParam reads one entry of parameters, or says what is wrong with it.
func parseParam(e *yaml.Node) (QueryParam, string) {
	p := QueryParam{Line: e.Line}
	if e.Kind != yaml.MappingNode {
		return p, fmt.Sprintf("a %s, not a mapping with `name` and `type`", nodeKindName(e))
	}
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i].Value, e.Content[i+1]
		switch k {
		case "name", "type", "description":
			s, ok := scalarText(v)
			if !ok {
				return p, fmt.Sprintf("`%s` is a %s, not text", k, nodeKindName(v))
			}
			switch k {
			case "name":
				p.Name = s
			case "type":
				p.Type = s
			default:
				p.Description = s
			}
		case "default":
			p.Default = v
		case "min":
			p.Min = v
		case "max":
			p.Max = v
		case "enum":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return p, "`enum` is not a list of values"
			}
			p.Enum = v.Content
		default:
			return p, fmt.Sprintf("unknown key `%s` (name, type, description, default, enum, min, max)", k)
		}
	}
	switch {
	case !isName(p.Name):
		return p, fmt.Sprintf("`name` %q is not a name (letters, digits, _)", p.Name)
	case !slices.Contains(ParamTypes, p.Type):
		return p, fmt.Sprintf("parameter `%s`: `type` %q is not one of %s", p.Name, p.Type, strings.Join(ParamTypes, ", "))
	case (p.Min != nil || p.Max != nil) && p.Type != "integer" && p.Type != "number" && p.Type != "date" && p.Type != "timestamp":
		return p, fmt.Sprintf("parameter `%s`: `min` and `max` bound numbers and dates, not %s", p.Name, p.Type)
	}
	for _, v := range append([]*yaml.Node{p.Default, p.Min, p.Max}, p.Enum...) {
		if v == nil {
			continue
		}
		if _, err := p.Value(v.Value); v.Kind != yaml.ScalarNode || err != nil {
			return p, fmt.Sprintf("parameter `%s`: %q is not of type %s", p.Name, v.Value, p.Type)
		}
	}
	return p, ""
}

// Value reads a text as a value of the parameter's type: a string, int64,
// float64, bool or time.Time.
func (p QueryParam) Value(s string) (any, error) {
	switch p.Type {
	case "integer":
		return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	case "number":
		return strconv.ParseFloat(strings.TrimSpace(s), 64)
	case "boolean":
		return strconv.ParseBool(strings.TrimSpace(s))
	case "date":
		return time.Parse(time.DateOnly, strings.TrimSpace(s))
	case "timestamp":
		return time.Parse(time.RFC3339, strings.TrimSpace(s))
	}
	return s, nil
}

// FencedBlock is a fenced code block of a markdown text: its info string
// (lower case), its text, and the line of its first text line, counted
// from 0 in the text read.
type FencedBlock struct {
	Info, Text string
	Line       int
}

// FencedBlocks returns the fenced code blocks of a markdown text, ``` or
// ~~~, in order; a block left open runs to the end.
func FencedBlocks(text string) []FencedBlock {
	var blocks []FencedBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") && !strings.HasPrefix(fence, "~~~") {
			continue
		}
		marker, info := fence[:3], strings.ToLower(strings.TrimSpace(fence[3:]))
		start := i + 1
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), marker); i++ {
		}
		blocks = append(blocks, FencedBlock{Info: info, Text: strings.Join(lines[start:min(i, len(lines))], "\n"), Line: start})
	}
	return blocks
}

// fencedSQL returns the fenced sql blocks of a document's SQL section,
// each with its file line.
func fencedSQL(d *Document) []FencedBlock {
	sec, ok := d.Section("sql")
	if !ok {
		return nil
	}
	var out []FencedBlock
	for _, b := range FencedBlocks(string(d.Raw[sec.Start:sec.End])) {
		if b.Info == "sql" || strings.HasPrefix(b.Info, "sql ") {
			b.Line += sec.Line
			out = append(out, b)
		}
	}
	return out
}

// Placeholders returns the :name placeholders of a SQL text, each once, in
// order of first use. Casts (::type), string literals, quoted names,
// dollar-quoted strings and comments hold none.
func Placeholders(sql string) []string {
	var out []string
	eachPlaceholder(sql, func(_, _ int, name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	})
	return out
}

// RewritePlaceholders replaces each :name placeholder of a SQL text with
// what mark returns for it (the driver's $1 or ?), and returns the names
// in the order they occur, for binding.
func RewritePlaceholders(sql string, mark func(name string, n int) string) (string, []string) {
	var b strings.Builder
	var names []string
	last := 0
	eachPlaceholder(sql, func(start, end int, name string) {
		b.WriteString(sql[last:start])
		names = append(names, name)
		b.WriteString(mark(name, len(names)))
		last = end
	})
	b.WriteString(sql[last:])
	return b.String(), names
}

// SQLToken is a kind of token ScanSQL reports.
type SQLToken int

// The tokens ScanSQL reports. The rest of a text (keywords, names,
// operators, space) is not reported.
const (
	SQLString      SQLToken = iota // '…', quotes included
	SQLQuotedName                  // "…"
	SQLComment                     // -- to the line's end, or /* … */
	SQLDollar                      // $tag$…$tag$
	SQLPlaceholder                 // :name
	SQLNumber                      // 42, 3.5
)

// ScanSQL calls f with the kind and byte range of each string, quoted
// name, comment, dollar-quoted string, :name placeholder and number of a
// SQL text, in order. Casts (::type), $1 parameters and the digits of
// names are none of them; a string, name or comment left open runs to the
// end.
func ScanSQL(sql string, f func(kind SQLToken, start, end int)) {
	word := func(c byte) bool {
		return c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c >= 0x80
	}
	for i := 0; i < len(sql); {
		start, c := i, sql[i]
		switch {
		case c == '\'' || c == '"':
			for i++; i < len(sql); i++ {
				if sql[i] == c {
					if i+1 < len(sql) && sql[i+1] == c {
						i++
						continue
					}
					break
				}
			}
			i = min(i+1, len(sql))
			kind := SQLString
			if c == '"' {
				kind = SQLQuotedName
			}
			f(kind, start, i)
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			f(SQLComment, start, i)
		case strings.HasPrefix(sql[i:], "/*"):
			if end := strings.Index(sql[i+2:], "*/"); end >= 0 {
				i += end + 4
			} else {
				i = len(sql)
			}
			f(SQLComment, start, i)
		case c == '$' && dollarTag(sql[i:]) != "":
			tag := dollarTag(sql[i:])
			if end := strings.Index(sql[i+len(tag):], tag); end >= 0 {
				i += 2*len(tag) + end
			} else {
				i = len(sql)
			}
			f(SQLDollar, start, i)
		case c == ':' && strings.HasPrefix(sql[i:], "::"):
			i += 2
		case c == ':' && i+1 < len(sql) && (sql[i+1] == '_' || 'a' <= sql[i+1]|0x20 && sql[i+1]|0x20 <= 'z'):
			for i++; i < len(sql) && word(sql[i]) && sql[i] < 0x80; i++ {
			}
			f(SQLPlaceholder, start, i)
		case '0' <= c && c <= '9':
			for i < len(sql) && ('0' <= sql[i] && sql[i] <= '9' || sql[i] == '.') {
				i++
			}
			if i < len(sql) && word(sql[i]) {
				continue // a name that starts with digits, or 1e5: not a plain number
			}
			for sql[i-1] == '.' {
				i--
			}
			f(SQLNumber, start, i)
		case word(c) || c == '$':
			for i++; i < len(sql) && word(sql[i]); i++ {
			}
		default:
			i++
		}
	}
}

// eachPlaceholder calls f with the byte range and name of each :name
// placeholder of a SQL text.
func eachPlaceholder(sql string, f func(start, end int, name string)) {
	ScanSQL(sql, func(kind SQLToken, start, end int) {
		if kind == SQLPlaceholder {
			f(start, end, sql[start+1:end])
		}
	})
}

// dollarTag returns the $tag$ that opens a PostgreSQL dollar-quoted string
// at the start of s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1]
		case c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || j > 1 && '0' <= c && c <= '9':
		default:
			return ""
		}
	}
	return ""
}
