package compile

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/lazy"
)

type generated struct {
	By string `yaml:"by"`
	At string `yaml:"at,omitempty"`
}

type source struct {
	ID       string `yaml:"id,omitempty"`
	Resource string `yaml:"resource"`
	Title    string `yaml:"title,omitempty"`
}

type tableFront struct {
	Type        string   `yaml:"type"`
	Title       string   `yaml:"title"`
	Description string   `yaml:"description"`
	Aliases     []string `yaml:"aliases,flow,omitempty"`
	Tags        []string `yaml:"tags,flow"`
	Grain       []string `yaml:"grain,flow,omitempty"`
	Layer       string   `yaml:"layer,omitempty"`
	// PersonalData lists the columns that hold personal data, an
	// extension key (OKF v0.2 §4.1 lets producers add keys) that a person
	// may also write by hand.
	PersonalData []string  `yaml:"personal_data,flow,omitempty"`
	Generated    generated `yaml:"generated"`
	Sources      []source  `yaml:"sources,omitempty"`
}

type ruleFront struct {
	Type        string    `yaml:"type"`
	Title       string    `yaml:"title"`
	Description string    `yaml:"description"`
	Aliases     []string  `yaml:"aliases,flow,omitempty"`
	Tags        []string  `yaml:"tags,flow"`
	Generated   generated `yaml:"generated"`
	Sources     []source  `yaml:"sources,omitempty"`
}

// concept renders frontmatter and body sections into a document.
func concept(front any, sections []string) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	if y, ok := renderFront(front); ok {
		b.Write(y)
	} else {
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(front); err != nil {
			// The frontmatter types hold only strings and lists of them.
			panic(fmt.Sprintf("compile: encoding frontmatter: %v", err))
		}
		enc.Close()
	}
	b.WriteString("---\n")
	for _, s := range sections {
		b.WriteString("\n")
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// section renders a heading and its lines.
func section(heading string, lines ...string) string {
	return "# " + heading + "\n\n" + strings.Join(lines, "\n") + "\n"
}

func (w *writer) table(t *Table) {
	desc := w.tableDescription(t)
	front := tableFront{
		Type: w.tableType(t), Title: t.Name, Description: desc, Aliases: t.Aliases, Tags: []string{w.db.Name},
		Grain: t.PrimaryKey, Layer: t.Layer, PersonalData: personalData(t), Generated: w.generated(),
	}
	sections := []string{w.schema(t)}
	if lines := enumLines(t); len(lines) > 0 {
		sections = append(sections, section("Enum values", lines...))
	}
	values := valueLines(t)
	if len(values) > 0 {
		sections = append(sections, section("Values", values...))
	}
	front.Sources = w.sources(false, nil, len(values) > 0)
	if lines := jsonLines(t); len(lines) > 0 {
		sections = append(sections, section("JSON fields", lines...))
	}
	if lines := w.joins(t); len(lines) > 0 {
		sections = append(sections, section("Joins", lines...))
	}
	if lines := w.referencedBy(t); len(lines) > 0 {
		sections = append(sections, section("Referenced by", lines...))
	}
	if lines := w.related(t); len(lines) > 0 {
		sections = append(sections, section("Related knowledge", lines...))
	}
	p := w.tablePath(t)
	w.files[p] = seal(concept(front, sections))
	w.addEntry(p, front.Type, t.Name, desc)
}

// personalData lists the columns of a table marked as personal data, in
// the schema's order.
func personalData(t *Table) []string {
	var names []string
	for _, c := range t.Columns {
		if c.PersonalData {
			names = append(names, c.Name)
		}
	}
	return names
}

func (w *writer) schema(t *Table) string {
	lines := []string{"| Column | Type | Key | Meaning |", "|---|---|---|---|"}
	for _, c := range t.Columns {
		typ := c.Type
		if c.NotNull && !t.IsKey(c.Name) {
			// A column of no known type is "not null" alone, not ", not null".
			typ = strings.TrimPrefix(typ+", not null", ", ")
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s |", code(c.Name), cell(typ), cell(keyText(t, c)), cell(c.Meaning)))
	}
	return section("Schema", lines...)
}

// keyText says what key a column belongs to.
func keyText(t *Table, c *Column) string {
	var parts []string
	if t.IsKey(c.Name) {
		parts = append(parts, "primary key")
	}
	for _, fk := range t.ForeignKeys {
		for i, fc := range fk.Columns {
			if strings.EqualFold(fc, c.Name) {
				parts = append(parts, "references "+fk.RefTable+"."+fk.RefColumns[i])
			}
		}
	}
	return strings.Join(parts, ", ")
}

func enumLines(t *Table) []string {
	var lines []string
	for _, c := range t.Columns {
		if len(c.Enum) == 0 {
			continue
		}
		name := code(c.Name)
		if c.EnumType != "" {
			name += " (" + code(c.EnumType) + ")"
		}
		lines = append(lines, fmt.Sprintf("* %s: %s", name, literals(c.Enum)))
	}
	return lines
}

// valueLines lists the values read from the database, a line per column:
// all of them, or, as the note after the name says, the most frequent.
func valueLines(t *Table) []string {
	var lines []string
	for _, c := range t.Columns {
		v := c.Values
		if v == nil || len(v.Values) == 0 {
			continue
		}
		name := code(c.Name)
		if v.Count > 0 {
			unit := " values"
			if v.Count == 1 {
				unit = " value"
			}
			name += " (" + thousands(v.Count) + unit
			if v.Rows > 0 {
				name += " in the first " + thousands(v.Rows) + " rows"
			}
			name += ", the most frequent)"
		}
		lines = append(lines, fmt.Sprintf("* %s: %s", name, literals(v.Values)))
	}
	return lines
}

// literals writes values as SQL string literals, comma-separated.
func literals(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return strings.Join(quoted, ", ")
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func jsonLines(t *Table) []string {
	var lines []string
	for _, c := range t.Columns {
		for _, f := range c.JSONFields {
			line := "* " + code(c.Name+"."+f.Path)
			if m := strings.TrimSpace(f.Meaning); m != "" {
				line += ": " + oneLine(f.Meaning)
			}
			lines = append(lines, line)
		}
	}
	return lines
}

func (w *writer) joins(t *Table) []string {
	var lines []string
	for _, fk := range t.ForeignKeys {
		ref := w.db.Table(fk.RefTable)
		target := code(fk.RefTable) + " (not a table of this database)"
		if ref != nil {
			target = w.tableLink(ref)
		}
		verb := "references"
		if len(fk.Columns) > 1 {
			verb = "reference"
		}
		line := fmt.Sprintf("* %s %s %s in %s.", codes(fk.Columns), verb, codes(fk.RefColumns), target)
		if ref != nil {
			if why := brokenKey(w.db, fk); why != "" {
				line += " The documentation lists " + why + "."
			}
		}
		lines = append(lines, line)
	}
	return lines
}

func (w *writer) referencedBy(t *Table) []string {
	var lines []string
	for _, other := range w.db.Tables {
		for _, fk := range other.ForeignKeys {
			if !strings.EqualFold(fk.RefTable, t.Name) {
				continue
			}
			verb := "references"
			if len(fk.Columns) > 1 {
				verb = "reference"
			}
			lines = append(lines, fmt.Sprintf("* %s: %s %s %s.", w.tableLink(other), codes(fk.Columns), verb, codes(fk.RefColumns)))
		}
	}
	return lines
}

// related lists the rules that use a table: the illustrations that explain
// one of its columns, the rules that name its columns, then the rules that
// reach it through the rules they use.
func (w *writer) related(t *Table) []string {
	var explains, direct, through []string
	for _, r := range w.db.Rules {
		if us := w.links.explains[r.ID]; len(us) > 0 && us[0].table == t {
			var cols []string
			for _, u := range us {
				cols = append(cols, u.column.Name)
			}
			explains = append(explains, fmt.Sprintf("* %s: explains %s", w.ruleLink(r.ID), codes(cols)))
			continue
		}
		var cols []string
		for _, u := range w.links.direct[r.ID] {
			if u.table == t {
				cols = append(cols, u.column.Name)
			}
		}
		if len(cols) > 0 {
			direct = append(direct, fmt.Sprintf("* %s: %s", w.ruleLink(r.ID), codes(cols)))
			continue
		}
		if re := w.links.reach[r.ID][t]; re != nil {
			through = append(through, fmt.Sprintf("* %s: %s, through %s", w.ruleLink(r.ID), codes(columnNames(t, re.columns)), w.ruleLinks(re.via)))
		}
	}
	return slices.Concat(explains, direct, through)
}

// columnNames returns the names of cols in the table's column order.
func columnNames(t *Table, cols []*Column) []string {
	var out []string
	for _, c := range t.Columns {
		if slices.Contains(cols, c) {
			out = append(out, c.Name)
		}
	}
	return out
}

func (w *writer) ruleLinks(ids []int) string {
	links := make([]string, len(ids))
	for i, id := range ids {
		links[i] = w.ruleLink(id)
	}
	return strings.Join(links, ", ")
}

func (w *writer) rule(r *Rule) {
	desc := oneLine(r.Description)
	if desc == "" {
		desc = oneLine(r.Name)
	}
	if r.File != "" {
		w.addEntry(w.rulePath(r.ID), ruleType(r.Kind), r.Name, desc)
		return
	}
	front := ruleFront{
		Type: ruleType(r.Kind), Title: r.Name, Description: desc, Aliases: r.Aliases, Tags: []string{w.db.Name},
		Generated: w.generated(), Sources: w.sources(true, r, false),
	}
	sections := []string{section("Definition", r.Definition)}
	if lines := w.columnsUsed(r); len(lines) > 0 {
		sections = append(sections, section("Columns used", lines...))
	}
	if ids := w.links.uses[r.ID]; len(ids) > 0 {
		sections = append(sections, section("Depends on", w.ruleList(ids)...))
	}
	if ids := w.links.usedBy[r.ID]; len(ids) > 0 {
		sections = append(sections, section("Used by", w.ruleList(ids)...))
	}
	p := w.rulePath(r.ID)
	w.files[p] = seal(concept(front, sections))
	w.addEntry(p, front.Type, r.Name, desc)
}

func (w *writer) ruleList(ids []int) []string {
	lines := make([]string, len(ids))
	for i, id := range ids {
		lines[i] = "* " + w.ruleLink(id)
	}
	return lines
}

// columnsUsed lists, per table in schema order, the columns a rule names
// (with the JSON paths it names inside them), then the tables it reaches
// only through the rules it uses.
func (w *writer) columnsUsed(r *Rule) []string {
	var lines []string
	uses := slices.Clone(w.links.direct[r.ID])
	for _, u := range w.links.explains[r.ID] {
		if !slices.ContainsFunc(uses, func(x *use) bool { return x.column == u.column }) {
			uses = append(uses, u)
		}
	}
	for _, t := range w.db.Tables {
		var cols []string
		for _, c := range t.Columns {
			for _, u := range uses {
				if u.column != c {
					continue
				}
				s := code(c.Name)
				if len(u.paths) > 0 {
					paths := make([]string, len(u.paths))
					for i, p := range u.paths {
						paths[i] = c.Name + "." + p
					}
					s += " (" + codes(paths) + ")"
				}
				cols = append(cols, s)
			}
		}
		if len(cols) > 0 {
			lines = append(lines, fmt.Sprintf("* %s: %s", w.tableLink(t), strings.Join(cols, ", ")))
		}
	}
	for _, t := range w.db.Tables {
		if re := w.links.reach[r.ID][t]; re != nil {
			lines = append(lines, fmt.Sprintf("* %s: %s, through %s", w.tableLink(t), codes(columnNames(t, re.columns)), w.ruleLinks(re.via)))
		}
	}
	return lines
}

// folderBlurbs describe the folders in the root index.
var folderBlurbs = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		QueriesDir:  "verified queries for frequent questions, with their parameters.",
		"tables":    "tables, with column meanings, keys, JSON fields, joins and the rules that use them.",
		"knowledge": "business rules: calculations, definitions and value illustrations, with the columns they use.",
	}
}}

func (w *writer) indexes() {
	var dirs []string
	for _, dir := range []string{"tables", "knowledge", QueriesDir} {
		if w.entries[dir] != nil {
			dirs = append(dirs, dir)
		}
	}
	var root []string
	for _, dir := range dirs {
		byType := w.entries[dir]
		var types []string
		n := 0
		for typ := range byType {
			types = append(types, typ)
			n += len(byType[typ])
		}
		sort.Strings(types)
		var parts []string
		for _, typ := range types {
			entries := byType[typ]
			sort.Slice(entries, func(i, j int) bool { return entries[i].file < entries[j].file })
			lines := make([]string, len(entries))
			for i, e := range entries {
				lines[i] = fmt.Sprintf("* [%s](%s) - %s", linkText(e.title), e.file, e.description)
			}
			parts = append(parts, section(typ, lines...))
		}
		w.files[dir+"/index.md"] = []byte(strings.Join(parts, "\n"))
		title := strings.ToUpper(dir[:1]) + dir[1:]
		root = append(root, fmt.Sprintf("* [%s](%s/index.md) - %d %s", title, dir, n, folderBlurbs.Get()[dir]))
	}
	w.files["index.md"] = []byte("---\nokf_version: \"0.2\"\n---\n\n" + section(w.db.Name+" database", root...))
	w.files["log.md"] = []byte(w.log())
}

// undatedLog dates the log entry when no generation time is given: §9
// puts every entry under a date heading, and a date from the clock would
// break same input, same bytes. It is the Unix epoch, the date
// SOURCE_DATE_EPOCH=0 names.
const undatedLog = "1970-01-01"

// log renders the bundle's history: one creation entry under the date of
// the generation time, or under undatedLog when none was given.
func (w *writer) log() string {
	var names []string
	for _, s := range w.db.Sources {
		if name := code(s.Resource); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	entry := fmt.Sprintf("* **Creation**: Compiled %d tables and %d business rules of `%s` from %s with `%s`",
		len(w.db.Tables), len(w.db.Rules), w.db.Name, strings.Join(names, ", "), w.opt.Generator)
	// The entry's date is when the values were read: a recompile that
	// reads other values adds an entry under its own.
	switch n := valueColumns(w.db); n {
	case 0:
	case 1:
		entry += "; the values of 1 column read from the database"
	default:
		entry += fmt.Sprintf("; the values of %d columns read from the database", n)
	}
	entry += "."
	day := undatedLog
	if !w.opt.GeneratedAt.IsZero() {
		day = w.opt.GeneratedAt.UTC().Format("2006-01-02")
	}
	return "# Update Log\n\n## " + day + "\n\n" + entry + "\n"
}

// valueColumns counts the columns that list values.
func valueColumns(db *Database) int {
	n := 0
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if c.Values != nil && len(c.Values.Values) > 0 {
				n++
			}
		}
	}
	return n
}
