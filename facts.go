package okf

import (
	"strings"
	"unsafe"
)

// The facts below are the contract between okf compile (compile/render.go
// writes them) and whoever reads a bundle: the read model parses them once
// when it builds a snapshot, so that no reader parses markdown for them,
// and okf compile --check compares them. A round-trip test in readmodel
// renders a compile model and holds this parser to it.

// TableFacts is what a table concept states about its table.
type TableFacts struct {
	// Columns are the rows of the Schema section's table, in order.
	Columns []Column `json:"columns,omitempty"`
	// PrimaryKey lists the key's columns in key order: the columns the
	// schema marks "primary key", in the order the grain lists them when
	// it lists exactly those.
	PrimaryKey []string `json:"primary_key,omitempty"`
	// ForeignKeys are the lines of the Joins section, in order.
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	// Values are the lines of the Values and Enum values sections: the
	// values a column stores, as the database spells them.
	Values []ColumnValues `json:"values,omitempty"`
	// Fields are the lines of the JSON fields section: the documented
	// paths inside a column that holds JSON, "col.key.leaf", and their
	// meanings.
	Fields []Field `json:"fields,omitempty"`
	// PersonalData are the columns the frontmatter's personal_data marks
	// as holding personal data (okf compile writes it from the sources,
	// a person may add it by hand), each once, in order.
	PersonalData []string `json:"personal_data,omitempty"`
}

// Field is one documented path inside a JSON column.
type Field struct {
	Path    string `json:"path"`
	Meaning Span   `json:"meaning"`
}

// Column returns the column a field's path is inside.
func (f Field) Column() string {
	col, _, _ := strings.Cut(f.Path, ".")
	return col
}

// ColumnValues are the values a table concept lists for one column.
type ColumnValues struct {
	Column string `json:"column"`
	// Values are where each value is written, between its quotes (a
	// quote inside still doubled, as SQL writes it).
	Values []Span `json:"values"`
	// Some is set when the list holds the most frequent values only.
	Some bool `json:"some,omitempty"`
}

// Column is one row of a Schema section. Its type and meaning are spans of
// the body, read with Span.Text: like sections, facts point into the body
// rather than copy it, so a snapshot does not hold a schema twice.
type Column struct {
	Name string `json:"name"`
	// Type is where the type is written, without the ", not null" or
	// ", primary key" a row may add to it.
	Type Span `json:"type"`
	// NotNull is set when the row says "not null" or the column is part of
	// the primary key.
	NotNull bool `json:"not_null,omitempty"`
	Meaning Span `json:"meaning"`
}

// Span is the byte range [start, end) of a fact in a concept's body. Its
// offsets are 32 bits: a snapshot's columns are most of its objects, and a
// body is never near 4 GB.
type Span [2]uint32

func span(start, end int) Span { return Span{uint32(start), uint32(end)} }

// Text returns the text at a span of a body, a table cell's escaped pipes
// ("\|") read as pipes.
func (sp Span) Text(body []byte) string { return unescapePipes(string(body[sp[0]:sp[1]])) }

// ForeignKey is a reference from columns of a table to columns of another:
// Columns[i] references RefColumns[i].
type ForeignKey struct {
	Columns []string `json:"columns"`
	// Table is the referenced table's name as written.
	Table string `json:"table"`
	// Concept is the id of the referenced table's concept in the same
	// bundle; "" when the bundle has none.
	Concept    string   `json:"concept,omitempty"`
	RefColumns []string `json:"ref_columns"`
}

// RuleFacts is what a concept that is not a table says it builds on.
type RuleFacts struct {
	// Uses are the lines of the Columns used section, in order.
	Uses []ColumnUse `json:"uses,omitempty"`
	// DependsOn are the ids of the concepts the Depends on section lists,
	// in order.
	DependsOn []string `json:"depends_on,omitempty"`
}

// ColumnUse is the columns of one table a rule uses.
type ColumnUse struct {
	// Concept is the id of the table's concept.
	Concept string   `json:"concept"`
	Columns []string `json:"columns,omitempty"`
	// Paths are the JSON paths inside those columns the rule names, as
	// "col.key.leaf"; a JSON column listed without any it uses whole.
	Paths []string `json:"paths,omitempty"`
	// Through are the ids of the rules the rule reaches these columns
	// through; empty when it names them itself.
	Through []string `json:"through,omitempty"`
}

// ParseFacts reads what a concept of a bundle states in okf compile's
// shapes: table facts when its type names a table or it has a Schema
// section, else rule facts when it states any. kind is the concept's type
// as Snake spells it. A query concept states neither (ParseQuery reads it).
// The facts' strings share the document's bytes, which must not change
// while they are kept.
func ParseFacts(b *Bundle, d *Document, kind string) (*TableFacts, *RuleFacts) {
	if IsQuery(d) {
		return nil, nil
	}
	targets := linkTargets(b, d)
	if _, ok := d.Section("schema"); ok || strings.Contains(kind, "table") {
		return readTable(d, targets), nil
	}
	r := &RuleFacts{}
	eachLine(d, "columns_used", func(line string, _, n int) {
		if u, ok := parseUse(line, targets[n]); ok {
			r.Uses = append(r.Uses, u)
		}
	})
	eachLine(d, "depends_on", func(_ string, _, n int) {
		// The first link of an item names what it is about.
		if ts := targets[n]; len(ts) > 0 && ts[0] != "" {
			r.DependsOn = append(r.DependsOn, ts[0])
		}
	})
	if len(r.Uses) == 0 && len(r.DependsOn) == 0 {
		return nil, nil
	}
	return nil, r
}

// linkTargets maps each file line to the concepts its links point at, in
// order ("" for a link to no concept), as the format resolves links.
func linkTargets(b *Bundle, d *Document) map[int][]string {
	out := map[int][]string{}
	for _, l := range d.Links {
		out[l.Line] = append(out[l.Line], b.Target(l))
	}
	return out
}

// eachLine calls f with every line of a section, its offset in the body
// and its file line number.
func eachLine(d *Document, slug string, f func(line string, off, n int)) {
	sec, ok := d.Section(slug)
	if !ok {
		return
	}
	// The lines share the document's bytes, which nothing changes; the
	// facts' strings may share them too, as spans of the body do.
	raw := d.Raw[sec.Start:sec.End]
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	off := sec.Start - d.BodyStart
	for n := d.LineAt(sec.Start); len(text) > 0; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		f(strings.TrimSuffix(line, "\r"), off, n)
		off += len(line) + 1
		text = rest
	}
}

// readTable reads a table's columns from the first table of its Schema
// section, its key from the rows marked "primary key", and its foreign keys
// from its Joins section.
func readTable(d *Document, targets map[int][]string) *TableFacts {
	t := &TableFacts{}
	var marked []string
	rows := firstTable(d, "schema")
	if len(rows) > 2 && isDelimiterRow(rows[1].text) {
		name, typ, key, meaning := 0, -1, -1, -1
		t.Columns = make([]Column, 0, len(rows)-2)
		var cells [][2]int
		for i, h := range splitRow(nil, rows[0].text) {
			switch strings.ToLower(unescapePipes(rows[0].text[h[0]:h[1]])) {
			case "column", "name", "field", "field name":
				name = i
			case "type", "data type":
				typ = i
			case "key", "keys":
				key = i
			case "meaning", "description":
				meaning = i
			}
		}
		for _, line := range rows[2:] {
			cells = splitRow(cells[:0], line.text)
			cell := func(i int) (string, Span) {
				if i < 0 || i >= len(cells) {
					return "", Span{}
				}
				return line.text[cells[i][0]:cells[i][1]], span(line.off+cells[i][0], line.off+cells[i][1])
			}
			nameText, _ := cell(name)
			c := Column{Name: columnName(unescapePipes(nameText))}
			if c.Name == "" {
				continue
			}
			_, c.Meaning = cell(meaning)
			typeText, typeAt := cell(typ)
			cut, notNull, isKey := typeSuffixes(typeText)
			c.Type, c.NotNull = Span{typeAt[0], typeAt[1] - uint32(cut)}, notNull
			if keyText, _ := cell(key); isKey || strings.Contains(strings.ToLower(keyText), "primary key") {
				marked = append(marked, c.Name)
				c.NotNull = true
			}
			t.Columns = append(t.Columns, c)
		}
	}
	t.PrimaryKey = keyOrder(marked, grainList(d))
	eachLine(d, "joins", func(line string, _, n int) {
		if fk, ok := parseJoin(line, targets[n]); ok {
			t.ForeignKeys = append(t.ForeignKeys, fk)
		}
	})
	for _, slug := range []string{"enum_values", "values"} {
		eachLine(d, slug, func(line string, off, _ int) {
			if v, ok := parseValues(line, off); ok {
				t.Values = append(t.Values, v)
			}
		})
	}
	eachLine(d, "json_fields", func(line string, off, _ int) {
		if f, ok := parseField(line, off); ok {
			t.Fields = append(t.Fields, f)
		}
	})
	t.PersonalData = d.PersonalData()
	return t
}

// parseField reads a list item of a JSON fields section, "* `col.path`:
// meaning", whose body offset is off.
func parseField(line string, off int) (Field, bool) {
	rest, ok := strings.CutPrefix(line, "* ")
	if !ok || !strings.HasPrefix(rest, "`") {
		return Field{}, false
	}
	at := len(line) - len(rest)
	path, next, ok := readCode(rest, 0)
	if !ok || !strings.Contains(path, ".") || strings.HasPrefix(path, ".") {
		return Field{}, false
	}
	f := Field{Path: path}
	if meaning, ok := strings.CutPrefix(rest[next:], ": "); ok {
		start := off + at + next + 2
		f.Meaning = span(start, start+len(strings.TrimRight(meaning, " ")))
	}
	return f, true
}

// maxListedValues bounds the values one line lists, as a document may be
// hostile.
const maxListedValues = 256

// parseValues reads a list item of a Values or Enum values section,
// "* `col`: 'a', 'b'" or "* `col` (1,203 values, the most frequent): 'a'",
// whose body offset is off; what follows the column's name up to the
// colon is a note (an enum's type, or that the list is the most
// frequent values only).
func parseValues(line string, off int) (ColumnValues, bool) {
	rest, ok := strings.CutPrefix(line, "* ")
	if !ok {
		return ColumnValues{}, false
	}
	at := len(line) - len(rest)
	name, next, ok := readCode(rest, 0)
	if !strings.HasPrefix(rest, "`") || !ok || name == "" {
		return ColumnValues{}, false
	}
	note, _, ok := strings.Cut(rest[next:], ": ")
	if !ok {
		return ColumnValues{}, false
	}
	v := ColumnValues{Column: name, Some: strings.Contains(note, "most frequent")}
	i := at + next + len(note) + 2
	for len(v.Values) < maxListedValues {
		if i >= len(line) || line[i] != '\'' {
			break
		}
		end := i + 1
		for end < len(line) && (line[end] != '\'' || end+1 < len(line) && line[end+1] == '\'') {
			if line[end] == '\'' {
				end++
			}
			end++
		}
		if end >= len(line) {
			break
		}
		v.Values = append(v.Values, span(off+i+1, off+end))
		i = end + 1
		if !strings.HasPrefix(line[i:], ", ") {
			break
		}
		i += 2
	}
	return v, len(v.Values) > 0
}

// tableLine is one line of a markdown table and its offset in the body.
type tableLine struct {
	text string
	off  int
}

// firstTable returns the lines of the first markdown table of a section:
// its first run of lines that start with "|".
func firstTable(d *Document, slug string) []tableLine {
	rows := make([]tableLine, 0, 32)
	done := false
	eachLine(d, slug, func(line string, off, _ int) {
		switch {
		case done:
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			rows = append(rows, tableLine{line, off})
		default:
			done = len(rows) > 0
		}
	})
	return rows
}

// splitRow appends to cells the byte ranges in a markdown table row of its
// cells, trimmed; "\|" is a pipe inside a cell.
func splitRow(cells [][2]int, s string) [][2]int {
	start := strings.IndexByte(s, '|') + 1
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, trimmed(s, start, i))
			start = i + 1
		}
	}
	if last := trimmed(s, start, len(s)); last[0] < last[1] {
		cells = append(cells, last)
	}
	return cells
}

// trimmed returns the range [start, end) of s without its outer spaces.
func trimmed(s string, start, end int) [2]int {
	for start < end && (s[start] == ' ' || s[start] == '\t') {
		start++
	}
	for end > start && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return [2]int{start, end}
}

func unescapePipes(s string) string { return strings.ReplaceAll(s, `\|`, "|") }

// isDelimiterRow reports whether a row is a table's header delimiter,
// "|---|:--|".
func isDelimiterRow(s string) bool {
	for _, c := range splitRow(nil, s) {
		if cell := s[c[0]:c[1]]; strings.Trim(cell, ":") == "" || strings.Trim(cell, "-:") != "" {
			return false
		}
	}
	return true
}

// columnName reads a name cell: a code span, or a name in bold or
// italics.
func columnName(s string) string {
	if strings.HasPrefix(s, "`") {
		if name, next, ok := readCode(s, 0); ok && next == len(s) {
			return name
		}
	}
	for _, mark := range []string{"**", "*"} {
		if len(s) > 2*len(mark) && strings.HasPrefix(s, mark) && strings.HasSuffix(s, mark) {
			return strings.TrimSpace(s[len(mark) : len(s)-len(mark)])
		}
	}
	return s
}

// typeSuffixes reads the suffixes a row adds to a type, ", not null" (okf
// compile; "not null" alone when the type is unknown) and ", primary key"
// (bundles that keep no key column), and returns how many bytes they take
// at the cell's end.
func typeSuffixes(s string) (cut int, notNull, key bool) {
	for {
		rest := strings.TrimRight(s[:len(s)-cut], " ")
		switch {
		case hasSuffixFold(rest, ", not null"):
			notNull, cut = true, len(s)-len(rest)+len(", not null")
		case strings.EqualFold(rest, "not null"):
			notNull, cut = true, len(s)
		case hasSuffixFold(rest, ", primary key"):
			key, cut = true, len(s)-len(rest)+len(", primary key")
		default:
			return len(s) - len(rest), notNull, key
		}
	}
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// grainList reads the grain as a list: a YAML list, or a scalar of
// comma-separated names.
func grainList(d *Document) []string {
	var out []string
	for _, g := range strings.Split(d.TextOrList("grain"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// keyOrder orders the marked key columns as the grain lists them, when it
// lists exactly those; the schema's order is not the key's.
func keyOrder(marked, grain []string) []string {
	if len(grain) != len(marked) || len(marked) == 0 {
		return marked
	}
	out := make([]string, 0, len(grain))
	for _, g := range grain {
		for _, m := range marked {
			if strings.EqualFold(m, g) {
				out = append(out, m)
				break
			}
		}
	}
	if len(out) != len(marked) {
		return marked
	}
	return out
}

// parseJoin reads a Joins line: "* `a`, `b` reference `x`, `y` in
// [t](/tables/t.md)." or, for a table the bundle lacks, "... in `t` (not a
// table of this database).". targets are the line's link targets.
func parseJoin(line string, targets []string) (ForeignKey, bool) {
	in, ok := listItem(line)
	if !ok {
		return ForeignKey{}, false
	}
	var fk ForeignKey
	i := 0
	fk.Columns, i = codeList(in, i)
	if i >= len(in) || in[i].kind != inlinePlain || (in[i].text != " references " && in[i].text != " reference ") {
		return ForeignKey{}, false
	}
	fk.RefColumns, i = codeList(in, i+1)
	if len(fk.Columns) == 0 || len(fk.Columns) != len(fk.RefColumns) ||
		i+1 >= len(in) || in[i].kind != inlinePlain || in[i].text != " in " {
		return ForeignKey{}, false
	}
	target := in[i+1]
	switch {
	case target.kind == inlinePlain:
		return ForeignKey{}, false
	case target.kind == inlineLink && len(targets) > 0:
		fk.Concept = targets[0]
	}
	fk.Table = target.text
	return fk, true
}

// parseUse reads a Columns used line: "* [t](/tables/t.md): `a`, `b`
// (`b.path`)" or "* [t](/tables/t.md): `a`, through [R](/knowledge/r.md)".
// Code spans in brackets are JSON paths inside a column, not columns.
func parseUse(line string, targets []string) (ColumnUse, bool) {
	in, ok := listItem(line)
	if !ok || len(in) < 2 || in[0].kind != inlineLink || len(targets) == 0 || targets[0] == "" ||
		in[1].kind != inlinePlain || !strings.HasPrefix(in[1].text, ":") {
		return ColumnUse{}, false
	}
	u := ColumnUse{Concept: targets[0]}
	depth, links, through := 0, 1, false
	for _, x := range in[1:] {
		switch x.kind {
		case inlinePlain:
			depth += strings.Count(x.text, "(") - strings.Count(x.text, ")")
			through = through || depth == 0 && strings.Contains(x.text, "through ")
		case inlineCode:
			switch {
			case through:
			case depth == 0:
				u.Columns = append(u.Columns, x.text)
			case strings.Contains(x.text, "."):
				u.Paths = append(u.Paths, x.text)
			}
		case inlineLink:
			if through && links < len(targets) && targets[links] != "" {
				u.Through = append(u.Through, targets[links])
			}
			links++
		}
	}
	return u, true
}

// listItem returns the inline parts of a "* " or "- " list item.
func listItem(line string) ([]inline, bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "* ") && !strings.HasPrefix(s, "- ") {
		return nil, false
	}
	return inlines(s[2:]), true
}

// codeList reads "`a`, `b`, ..." from position i and returns the names
// and the position after them.
func codeList(in []inline, i int) ([]string, int) {
	var names []string
	for i < len(in) && in[i].kind == inlineCode {
		names = append(names, in[i].text)
		i++
		if i+1 < len(in) && in[i].kind == inlinePlain && in[i].text == ", " && in[i+1].kind == inlineCode {
			i++
		}
	}
	return names, i
}

type inlineKind int

const (
	inlinePlain inlineKind = iota
	inlineCode
	inlineLink
)

// inline is one part of a line: plain text (backslash escapes applied), a
// code span's content, or a link's text. Images count as plain text, as
// the format does not count them as links.
type inline struct {
	kind inlineKind
	text string
}

// inlines splits one line of markdown into plain text, code spans and
// links, as far as the lines okf compile writes need. Parts are slices of
// the line unless an escape had to be removed.
func inlines(s string) []inline {
	var out []inline
	start := 0 // where the pending plain text starts
	add := func(end int, x inline) {
		if start < end {
			out = append(out, inline{inlinePlain, unescape(s[start:end])})
		}
		out = append(out, x)
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			i += 2
		case s[i] == '`':
			// An unmatched run of backticks stays text.
			content, next, ok := readCode(s, i)
			if ok {
				add(i, inline{inlineCode, content})
				start = next
			}
			i = next
		case s[i] == '[' && (i == 0 || s[i-1] != '!'):
			label, next, ok := readLink(s, i)
			if !ok {
				i++
				continue
			}
			add(i, inline{inlineLink, label})
			i, start = next, next
		default:
			i++
		}
	}
	if start < len(s) {
		out = append(out, inline{inlinePlain, unescape(s[start:])})
	}
	return out
}

// unescape removes the backslashes of markdown's escapes.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readCode reads the code span whose opening backticks start at i. When
// no run of as many backticks closes it, it returns the run's end.
func readCode(s string, i int) (content string, next int, ok bool) {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	fence := s[i : i+n]
	for j := i + n; j < len(s); {
		k := strings.Index(s[j:], fence)
		if k < 0 {
			break
		}
		k += j
		end := k + n
		if end < len(s) && s[end] == '`' {
			for end < len(s) && s[end] == '`' {
				end++
			}
			j = end
			continue
		}
		c := s[i+n : k]
		if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
			c = c[1 : len(c)-1]
		}
		return c, end, true
	}
	return "", i + n, false
}

// readLink reads "[text](destination)" starting at i and returns its text,
// unescaped.
func readLink(s string, i int) (label string, next int, ok bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			return "", 0, false
		case ']':
			end := strings.IndexByte(s[j+1:], ')')
			if !strings.HasPrefix(s[j+1:], "(") || end < 0 {
				return "", 0, false
			}
			return unescape(s[i+1 : j]), j + 1 + end + 1, true
		}
	}
	return "", 0, false
}

// isPunct reports whether markdown lets a backslash escape c.
func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
