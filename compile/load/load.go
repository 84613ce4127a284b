// Package load creates an empty database from the compile model, so that
// documentation can be tried against a real PostgreSQL, SQLite or DuckDB: a schema
// dump becomes tables, keys and enum types that SQL can be planned and run
// against.
//
// From a LiveSQLBench folder to a loaded PostgreSQL database:
//
//	db, err := livesqlbench.Read("../shared/data/livesqlbench/base-lite/solar")
//	plan, err := load.Postgres(ctx, "postgres://localhost/solar", db, load.Options{AddMissingKeys: true})
//	// plan.Notes says what was mapped or left out, plan.Statements what ran
//
// AddMissingKeys restores the surrogate keys the reconstructed LiveSQLBench
// schemas lost and their gold SQL uses; the zero Options load the schema
// exactly as documented. load.SQLite(ctx, "solar.db", db, opt) creates a
// new SQLite file instead, load.DuckDB a new DuckDB file (in programs that
// link DuckDB's driver); PostgresDDL, SQLiteDDL and DuckDBDDL return the
// same plan without running it.
//
// A catalog dump is not executable DDL, so the plan maps what it must and
// says so in Notes: USER-DEFINED becomes an enum type when its labels are
// known (from a catalog, or with Options.EnumsFromMeanings from the
// column's meaning), a domain over text named after the enum type when
// the meaning names one, and text otherwise; ARRAY becomes text[]; a type
// PostgreSQL does not know becomes text. A foreign key is created only when
// the table and columns it references exist and are that table's primary
// key; otherwise it is left out, or with Options.AddMissingKeys
// the referenced column is added (typed like the referencing column) or
// made unique, so that queries written against the original database still
// plan.
package load

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// Options tune the plan.
type Options struct {
	// EnumsFromMeanings creates an enum type for a USER-DEFINED column
	// whose labels the model does not list but whose meaning does, as in
	// "An enum (Risk_enum) for risk (Low, Medium, High)". Labels read from
	// prose may be incomplete, and a query comparing the column with a
	// label the list lacks then fails, so the default maps such columns to
	// text.
	EnumsFromMeanings bool
	// AddMissingKeys makes every foreign key creatable: a referenced column
	// the referenced table lacks is added to it, and referenced columns
	// that are not a key get a unique constraint. Reconstructed schemas
	// that lost their surrogate keys need it for their queries to plan.
	AddMissingKeys bool
}

// Plan is the DDL that creates a database, and what it had to change.
type Plan struct {
	// Statements run in order, in one transaction where the engine allows.
	Statements []string
	// Notes say, one line each, what was mapped, added or left out.
	Notes []string
	// Types gives the executable type chosen for each column, keyed
	// "table.column" in the model's spelling.
	Types map[string]string
}

func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// enumType is one enum type to create; with no labels it becomes a domain
// over text.
type enumType struct {
	name   string
	labels []string
}

// fkPlan is one foreign key that can be created, after repairs.
type fkPlan struct {
	table string
	fk    compile.ForeignKey
}

// keyPlan resolves the foreign keys of a database: which can be created,
// which columns must be added to referenced tables, and which referenced
// column sets need a unique constraint.
type keyPlan struct {
	fks     []fkPlan
	added   map[string][]*compile.Column // lower table name → added columns
	uniques map[string][][]string        // lower table name → unique column sets
}

func planKeys(db *compile.Database, opt Options, p *Plan) keyPlan {
	kp := keyPlan{added: map[string][]*compile.Column{}, uniques: map[string][][]string{}}
	for _, t := range db.Tables {
		for _, fk := range t.ForeignKeys {
			desc := fmt.Sprintf("%s(%s) → %s(%s)", t.Name, strings.Join(fk.Columns, ", "), fk.RefTable, strings.Join(fk.RefColumns, ", "))
			ref := db.Table(fk.RefTable)
			if ref == nil {
				p.note("foreign key %s left out: there is no table %s", desc, fk.RefTable)
				continue
			}
			missing := false
			for i, rc := range fk.RefColumns {
				if ref.Column(rc) != nil || hasAdded(kp.added[strings.ToLower(ref.Name)], rc) {
					continue
				}
				if !opt.AddMissingKeys {
					p.note("foreign key %s left out: %s has no column %s", desc, ref.Name, rc)
					missing = true
					break
				}
				src := t.Column(fk.Columns[i])
				kp.added[strings.ToLower(ref.Name)] = append(kp.added[strings.ToLower(ref.Name)], &compile.Column{Name: rc, Type: src.Type})
				p.note("column %s.%s added (typed like %s.%s) so that foreign key %s can be created", ref.Name, rc, t.Name, src.Name, desc)
			}
			if missing {
				continue
			}
			if !isUnique(ref, fk.RefColumns, kp.uniques[strings.ToLower(ref.Name)]) {
				if !opt.AddMissingKeys {
					p.note("foreign key %s left out: %s(%s) is not a key of %s", desc, ref.Name, strings.Join(fk.RefColumns, ", "), ref.Name)
					continue
				}
				kp.uniques[strings.ToLower(ref.Name)] = append(kp.uniques[strings.ToLower(ref.Name)], fk.RefColumns)
				p.note("unique constraint on %s(%s) added so that foreign key %s can be created", ref.Name, strings.Join(fk.RefColumns, ", "), desc)
			}
			kp.fks = append(kp.fks, fkPlan{table: t.Name, fk: fk})
		}
	}
	return kp
}

func hasAdded(cols []*compile.Column, name string) bool {
	return slices.ContainsFunc(cols, func(c *compile.Column) bool { return strings.EqualFold(c.Name, name) })
}

// isUnique reports whether cols are exactly the primary key of t or one of
// the unique sets already planned for it.
func isUnique(t *compile.Table, cols []string, planned [][]string) bool {
	same := func(a, b []string) bool {
		if len(a) != len(b) {
			return false
		}
		for _, x := range a {
			if !slices.ContainsFunc(b, func(y string) bool { return strings.EqualFold(x, y) }) {
				return false
			}
		}
		return true
	}
	if same(t.PrimaryKey, cols) {
		return true
	}
	return slices.ContainsFunc(planned, func(u []string) bool { return same(u, cols) })
}

// enums decides the type of every USER-DEFINED column that gets a named
// one, keyed by lower "table.column": an enum when its labels are known, or
// else, when its meaning names the enum type ("An enum (Risk_enum) ..."), a
// domain over text of that name, so that casts such as 'High'::risk_enum in
// queries still work. Columns naming the same type share it; an enum's
// labels are the union, in first-seen order.
func enums(db *compile.Database, opt Options) (map[string]*enumType, []*enumType) {
	byColumn := map[string]*enumType{}
	byName := map[string]*enumType{}
	var order []*enumType
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if !strings.EqualFold(c.Type, "USER-DEFINED") {
				continue
			}
			labels, name := c.Enum, c.EnumType
			if len(labels) == 0 && opt.EnumsFromMeanings {
				labels = LabelsFromMeaning(c.Meaning)
			}
			if name == "" {
				name = enumNameRe.Get().FindString(c.Meaning)
			}
			if name == "" && len(labels) == 0 {
				continue
			}
			if name == "" {
				name = t.Name + "_" + c.Name + "_enum"
			}
			name = strings.ToLower(name)
			e := byName[name]
			if e == nil {
				e = &enumType{name: name}
				byName[name] = e
				order = append(order, e)
			}
			for _, l := range labels {
				if !slices.Contains(e.labels, l) {
					e.labels = append(e.labels, l)
				}
			}
			byColumn[strings.ToLower(t.Name+"."+c.Name)] = e
		}
	}
	return byColumn, order
}

var (
	enumNameRe   = lazy.Regexp{Expr: `(?i)\b[A-Za-z][A-Za-z0-9]*_enum\b`}
	quotedRe     = lazy.Regexp{Expr: `'((?:[^']|'')+)'`}
	valuesRe     = lazy.Regexp{Expr: `(?i)\b(?:values?|include|includes|including|one of)\b\s*(?:include\s*)?(:?)`}
	parenGroupRe = lazy.Regexp{Expr: `\(([^()]*)\)`}
)

// LabelsFromMeaning reads the labels of an enum column from its meaning:
// the quoted values after "values" or "include" ("values: 'Fair',
// 'Good'"), an unquoted list after "values:" ("Possible values: Poor,
// Fair."), or a closing parenthesised list ("(Low, Medium, High)"). It
// returns nil when it finds fewer than two labels.
func LabelsFromMeaning(meaning string) []string {
	if loc := valuesRe.Get().FindStringSubmatchIndex(meaning); loc != nil {
		rest := meaning[loc[1]:]
		if end := strings.IndexAny(rest, ";"); end >= 0 {
			rest = rest[:end]
		}
		if q := quotedRe.Get().FindAllStringSubmatch(rest, -1); len(q) >= 2 {
			var out []string
			for _, m := range q {
				out = append(out, strings.ReplaceAll(m[1], "''", "'"))
			}
			return clean(out)
		}
		if loc[3] > loc[2] { // "values:" followed by a bare list
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "(") {
				if end := strings.IndexByte(rest, ')'); end > 0 {
					return clean(strings.Split(rest[1:end], ","))
				}
			}
			rest, _, _ = strings.Cut(rest, ". ")
			return clean(strings.Split(strings.TrimSuffix(rest, "."), ","))
		}
	}
	groups := parenGroupRe.Get().FindAllStringSubmatch(meaning, -1)
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i][1]
		if enumNameRe.Get().MatchString(g) || strings.ContainsAny(g, "'\"") {
			continue
		}
		g = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(g), "e.g.,"), "e.g.")
		if labels := clean(strings.Split(g, ",")); labels != nil {
			return labels
		}
	}
	return nil
}

// clean trims labels and keeps a list only if it looks like one: two or
// more short, distinct labels.
func clean(parts []string) []string {
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		p = strings.TrimPrefix(p, "or ")
		p = strings.TrimPrefix(p, "and ")
		p = strings.TrimSpace(p)
		if p == "" || len(p) > 63 || slices.Contains(out, p) {
			return nil
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// spelled returns column names as the table spells them; a name the table
// lacks (a column the plan adds) is kept as given.
func spelled(t *compile.Table, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if c := t.Column(n); c != nil {
			out[i] = c.Name
		}
	}
	return out
}

// addEnumTypes plans the enum types of order: CREATE TYPE … AS ENUM where
// the labels are known, else unknown (a format of the type's name: a
// domain or an alias over text, so that casts to the type still bind),
// noted as what.
func (p *Plan) addEnumTypes(order []*enumType, unknown, what string) {
	for _, e := range order {
		if len(e.labels) == 0 {
			p.Statements = append(p.Statements, fmt.Sprintf(unknown, quoteIdent(e.name)))
			p.note("type %s: enum labels unknown, created as %s", e.name, what)
			continue
		}
		labels := make([]string, len(e.labels))
		for i, l := range e.labels {
			labels[i] = quoteLiteral(l)
		}
		p.Statements = append(p.Statements, fmt.Sprintf("CREATE TYPE %s AS ENUM (%s)", quoteIdent(e.name), strings.Join(labels, ", ")))
	}
}

// tableLines plans the lines of t's CREATE TABLE before its foreign keys:
// each column (with the columns the keys added) typed by typeOf, which
// returns the type ("" for none) and what follows NOT NULL (a CHECK),
// then the primary key and the unique constraints the keys need.
func (p *Plan) tableLines(t *compile.Table, kp keyPlan, typeOf func(*compile.Column) (typ, check string)) []string {
	var lines []string
	cols := append(append([]*compile.Column(nil), t.Columns...), kp.added[strings.ToLower(t.Name)]...)
	for _, c := range cols {
		typ, check := typeOf(c)
		p.Types[t.Name+"."+c.Name] = typ
		line := "  " + quoteIdent(c.Name)
		if typ != "" {
			line += " " + typ
		}
		if c.NotNull {
			line += " NOT NULL"
		}
		if check != "" {
			line += " " + check
		}
		lines = append(lines, line)
	}
	if len(t.PrimaryKey) > 0 {
		lines = append(lines, "  PRIMARY KEY ("+quoteIdents(spelled(t, t.PrimaryKey))+")")
	}
	for _, u := range kp.uniques[strings.ToLower(t.Name)] {
		lines = append(lines, "  UNIQUE ("+quoteIdents(spelled(t, u))+")")
	}
	return lines
}

// runInTx runs the plan's statements on conn in one transaction, for a
// new file at path.
func runInTx(ctx context.Context, conn *sql.DB, p *Plan, db *compile.Database, path string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting the load of %s: %w", db.Name, err)
	}
	defer tx.Rollback()
	for _, s := range p.Statements {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("loading %s into %s: %w\n%s", db.Name, path, err, s)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing the load of %s: %w", db.Name, err)
	}
	return nil
}
