package compile

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/okf-tools/okf/internal/lazy"
)

// Options tune Build.
type Options struct {
	// Generator is the actor written as generated.by, in the
	// "<producer>/<version>" form, e.g. "okf/v1.2.0".
	Generator string
	// GeneratedAt is written as generated.at and dates the log entry. The
	// zero time writes no generated.at and dates the log entry 1970-01-01,
	// so the same input gives the same bytes.
	GeneratedAt time.Time
	// SourceBase, when set, is prefixed to the relative resource of every
	// source (a file name), e.g. the URL of the dataset the files came
	// from.
	SourceBase string
}

// Bundle is a compiled bundle held in memory.
type Bundle struct {
	// Name is the folder name of the bundle.
	Name string
	// Files maps slash-separated bundle paths to their bytes.
	Files map[string][]byte
	Gaps  *Gaps
	// Tables and Rules count the concepts written.
	Tables, Rules int
}

// Paths returns the bundle's file paths in byte order.
func (b *Bundle) Paths() []string {
	paths := make([]string, 0, len(b.Files))
	for p := range b.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Build links the rules of a database to its tables and renders its
// bundle: a concept per table and per rule, an index per folder, a log,
// and the gap report.
func Build(db *Database, opt Options) (*Bundle, error) {
	if err := db.Check(); err != nil {
		return nil, err
	}
	if opt.Generator == "" {
		return nil, fmt.Errorf("compile: Options.Generator is required")
	}
	gaps := &Gaps{Database: db.Name, UnmatchedDescriptions: slices.Clone(db.Unmatched)}
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if strings.TrimSpace(c.Meaning) == "" {
				gaps.ColumnsWithoutMeaning = append(gaps.ColumnsWithoutMeaning, t.Name+"."+c.Name)
			}
		}
		for _, fk := range t.ForeignKeys {
			if why := brokenKey(db, fk); why != "" {
				gaps.BrokenForeignKeys = append(gaps.BrokenForeignKeys, fmt.Sprintf("%s(%s) → %s(%s): %s",
					t.Name, strings.Join(fk.Columns, ", "), fk.RefTable, strings.Join(fk.RefColumns, ", "), why))
			}
		}
	}
	w := &writer{db: db, opt: opt, files: map[string][]byte{}}
	w.tableFiles = fileNames(db.Tables)
	w.ruleFiles = ruleSlugs(db.Rules)
	w.links = newLinker(db, gaps).link()
	for _, t := range db.Tables {
		w.table(t)
	}
	for _, r := range db.Rules {
		w.rule(r)
	}
	w.queries()
	w.indexes()
	gaps.emptyNotNil()
	return &Bundle{Name: db.Name, Files: w.files, Gaps: gaps, Tables: len(db.Tables), Rules: len(db.Rules)}, nil
}

// brokenKey says what a foreign key references that does not exist.
func brokenKey(db *Database, fk ForeignKey) string {
	ref := db.Table(fk.RefTable)
	if ref == nil {
		return "no such table"
	}
	var missing []string
	for _, c := range fk.RefColumns {
		if ref.Column(c) == nil {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return "no column " + strings.Join(missing, ", ") + " in " + ref.Name
	}
	return ""
}

var unsafeFileRe = lazy.Regexp{Expr: `[^A-Za-z0-9_.-]+`}

// fileNames gives every table a file name: its own name when that is a
// safe, unreserved file name, else a slug; unique without regard to case.
func fileNames(tables []*Table) map[*Table]string {
	out := map[*Table]string{}
	used := map[string]bool{}
	for _, t := range tables {
		name := strings.Trim(unsafeFileRe.Get().ReplaceAllString(t.Name, "-"), "-.")
		if name == "" || reservedName(name) {
			name = "table-" + name
		}
		base := name
		for i := 2; used[strings.ToLower(name)]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[strings.ToLower(name)] = true
		out[t] = name
	}
	return out
}

func reservedName(name string) bool {
	n := strings.ToLower(name)
	return n == "index" || n == "log"
}

var (
	parenGroupRe = lazy.Regexp{Expr: `\([^)]*\)`}
	nonSlugRe    = lazy.Regexp{Expr: `[^a-z0-9]+`}
)

// ruleSlugs gives every rule a file name from its name, without any
// parenthesis: "Resource Utilization Ratio (RUR)" becomes
// "resource-utilization-ratio". A slug already taken (or reserved) gets
// the rule's id appended, so slugs depend only on the rules file.
func ruleSlugs(rules []*Rule) map[int]string {
	out := map[int]string{}
	used := map[string]bool{}
	// A person's concept keeps its file name; generated ones go around it.
	for _, r := range rules {
		if r.File != "" {
			slug := strings.TrimSuffix(path.Base(r.File), ".md")
			used[slug] = true
			out[r.ID] = slug
		}
	}
	for _, r := range rules {
		if r.File != "" {
			continue
		}
		slug := strings.Trim(nonSlugRe.Get().ReplaceAllString(strings.ToLower(parenGroupRe.Get().ReplaceAllString(r.Name, "")), "-"), "-")
		if slug == "" {
			slug = "rule"
		}
		if used[slug] || reservedName(slug) {
			slug = fmt.Sprintf("%s-%d", slug, r.ID)
		}
		for i := 2; used[slug]; i++ {
			slug = fmt.Sprintf("%s-%d-%d", slug, r.ID, i)
		}
		used[slug] = true
		out[r.ID] = slug
	}
	return out
}

// writer renders the files of one bundle.
type writer struct {
	db         *Database
	opt        Options
	files      map[string][]byte
	tableFiles map[*Table]string
	ruleFiles  map[int]string
	links      *links
	// entries collects, per folder, the index lines by concept type.
	entries map[string]map[string][]indexEntry
}

type indexEntry struct {
	file, title, description string
}

func (w *writer) tablePath(t *Table) string { return "tables/" + w.tableFiles[t] + ".md" }
func (w *writer) rulePath(id int) string    { return "knowledge/" + w.ruleFiles[id] + ".md" }

func (w *writer) tableLink(t *Table) string {
	return fmt.Sprintf("[%s](/%s)", linkText(t.Name), w.tablePath(t))
}

func (w *writer) ruleLink(id int) string {
	return fmt.Sprintf("[%s](/%s)", linkText(w.db.Rule(id).Name), w.rulePath(id))
}

func (w *writer) addEntry(p, typ, title, description string) {
	if w.entries == nil {
		w.entries = map[string]map[string][]indexEntry{}
	}
	dir := path.Dir(p)
	if w.entries[dir] == nil {
		w.entries[dir] = map[string][]indexEntry{}
	}
	w.entries[dir][typ] = append(w.entries[dir][typ], indexEntry{file: path.Base(p), title: title, description: description})
}

// tableType is the OKF type of a table concept: the engine's name and the
// kind of relation, or the kind alone when the engine is unknown.
func (w *writer) tableType(t *Table) string {
	kind := "Table"
	if t.View {
		kind = "View"
	}
	if name := EngineName(w.db.Engine); name != "" {
		return name + " " + kind
	}
	return kind
}

// engineNames are the engines whose names table types carry: PostgreSQL
// and SQLite, which okf reads catalogs of, and the warehouses of dbt's
// adapters, keyed by the adapter's type.
var engineNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"postgres": "PostgreSQL", "sqlite": "SQLite", "duckdb": "DuckDB", "snowflake": "Snowflake",
		"bigquery": "BigQuery", "redshift": "Redshift", "databricks": "Databricks", "spark": "Spark",
		"trino": "Trino", "athena": "Athena", "sqlserver": "SQL Server", "fabric": "Microsoft Fabric",
		"synapse": "Azure Synapse", "clickhouse": "ClickHouse", "mysql": "MySQL", "oracle": "Oracle",
		"teradata": "Teradata", "vertica": "Vertica", "materialize": "Materialize", "dremio": "Dremio",
	}
}}

// EngineName is how table types name an engine, "" for one it does not
// know.
func EngineName(engine string) string { return engineNames.Get()[engine] }

// ruleTypes maps rule kinds to OKF types.
var ruleTypes = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		CalculationKind:  "Calculation",
		DomainKind:       "Business Rule",
		IllustrationKind: "Value Illustration",
	}
}}

func ruleType(kind string) string {
	if t, ok := ruleTypes.Get()[kind]; ok {
		return t
	}
	if strings.TrimSpace(kind) == "" {
		return "Business Rule"
	}
	return kind
}

// sources returns the frontmatter sources of a table (rules false) or a
// rule concept; the source of values only for a table that lists some.
func (w *writer) sources(rules bool, rule *Rule, values bool) []source {
	var out []source
	for _, s := range w.db.Sources {
		if s.Rules != rules || s.Values && !values {
			continue
		}
		res := s.Resource
		if w.opt.SourceBase != "" && !strings.Contains(res, "://") && !strings.HasPrefix(res, "/") {
			res = strings.TrimSuffix(w.opt.SourceBase, "/") + "/" + res
		}
		title := s.Title
		if rule != nil {
			title = fmt.Sprintf("%s, rule %d", title, rule.ID)
		}
		out = append(out, source{ID: s.ID, Resource: res, Title: title})
	}
	return out
}

func (w *writer) generated() generated {
	g := generated{By: w.opt.Generator}
	if !w.opt.GeneratedAt.IsZero() {
		g.At = w.opt.GeneratedAt.UTC().Format(time.RFC3339)
	}
	return g
}

// tableDescription summarises a table from the sources alone: its own
// meaning when it has one, else its size, key, columns and joins.
func (w *writer) tableDescription(t *Table) string {
	if m := strings.TrimSpace(t.Meaning); m != "" {
		return oneLine(m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d columns", len(t.Columns))
	if len(t.PrimaryKey) > 0 {
		fmt.Fprintf(&b, ", key %s", strings.Join(t.PrimaryKey, ", "))
	}
	var rest []string
	for _, c := range t.Columns {
		if !t.IsKey(c.Name) && !isForeignKeyColumn(t, c.Name) {
			rest = append(rest, c.Name)
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(rest, ", "))
	}
	b.WriteString(".")
	var joins []string
	for _, fk := range t.ForeignKeys {
		if !slices.Contains(joins, fk.RefTable) {
			joins = append(joins, fk.RefTable)
		}
	}
	if len(joins) > 0 {
		fmt.Fprintf(&b, " Joins %s.", strings.Join(joins, ", "))
	}
	return b.String()
}

func isForeignKeyColumn(t *Table, name string) bool {
	for _, fk := range t.ForeignKeys {
		if slices.ContainsFunc(fk.Columns, func(c string) bool { return strings.EqualFold(c, name) }) {
			return true
		}
	}
	return false
}

// oneLine folds a text onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes a text safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", " "), "\n", " "), "|", `\|`)
}

var linkTextEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "\n", " ")
}}

// linkText makes a text safe as the text of a markdown link.
func linkText(s string) string { return linkTextEscaper.Get().Replace(s) }

// code wraps a name in a code span that survives backticks in the name.
func code(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return "`` " + s + " ``"
}

func codes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = code(n)
	}
	return strings.Join(out, ", ")
}
