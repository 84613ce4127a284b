package livesqlbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

const ident = `"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*`

var (
	createRe  = lazy.Regexp{Expr: `(?i)^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:(?:` + ident + `)\.)?(` + ident + `)\s*\(\s*$`}
	primaryRe = lazy.Regexp{Expr: `(?i)^\s*(?:CONSTRAINT\s+(?:` + ident + `)\s+)?PRIMARY\s+KEY\s*\(([^)]*)\)\s*,?\s*$`}
	foreignRe = lazy.Regexp{Expr: `(?i)^\s*(?:CONSTRAINT\s+(?:` + ident + `)\s+)?FOREIGN\s+KEY\s*\(([^)]*)\)\s*REFERENCES\s+(?:(?:` + ident + `)\.)?(` + ident + `)\s*\(([^)]*)\)[^,]*,?\s*$`}
	columnRe  = lazy.Regexp{Expr: `^\s*(` + ident + `)\s+(.+?)\s*,?\s*$`}
	// clauseRe finds where the column constraints after a type begin.
	clauseRe   = lazy.Regexp{Expr: `(?i)\s+(?:NOT\s+NULL|NULL|DEFAULT|PRIMARY\s+KEY|UNIQUE|REFERENCES|CHECK|CONSTRAINT|GENERATED|COLLATE)\b`}
	inlineFKRe = lazy.Regexp{Expr: `(?i)\bREFERENCES\s+(?:(?:` + ident + `)\.)?(` + ident + `)\s*(?:\(([^)]*)\))?`}
	// otherConstraintRe finds table constraints other than keys, which
	// say nothing a bundle shows.
	otherConstraintRe = lazy.Regexp{Expr: `(?i)^\s*(?:CONSTRAINT\s+(?:` + ident + `)\s+)?(?:UNIQUE|CHECK|EXCLUDE)\b`}
	notNullRe         = lazy.Regexp{Expr: `(?i)\bNOT\s+NULL\b`}
	inlinePKRe        = lazy.Regexp{Expr: `(?i)\bPRIMARY\s+KEY\b`}
	closeRe           = lazy.Regexp{Expr: `^\s*\)\s*;?\s*$`}
)

// ReadSchema reads the CREATE TABLE blocks of a schema dump. Lines outside
// the blocks (sample rows, comments) are skipped; a line inside a block that
// is neither a column, a primary key nor a foreign key is an error.
func ReadSchema(path string) ([]*compile.Table, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading schema: %w", err)
	}
	var (
		tables []*compile.Table
		cur    *compile.Table
		start  int
		seen   = map[string]int{}
	)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if cur == nil {
			m := createRe.Get().FindStringSubmatch(text)
			if m == nil {
				continue
			}
			name := unquote(m[1])
			if prev, ok := seen[strings.ToLower(name)]; ok {
				return nil, lineError(path, line, "table %q is already defined on line %d", name, prev)
			}
			seen[strings.ToLower(name)] = line
			cur, start = &compile.Table{Name: name}, line
			continue
		}
		trimmed := strings.TrimSpace(text)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "--"):
		case closeRe.Get().MatchString(text):
			if len(cur.Columns) == 0 {
				return nil, lineError(path, start, "table %q has no columns", cur.Name)
			}
			tables = append(tables, cur)
			cur = nil
		case primaryRe.Get().MatchString(text):
			cols := splitIdents(primaryRe.Get().FindStringSubmatch(text)[1])
			if err := checkColumns(cur, cols); err != nil {
				return nil, lineError(path, line, "table %q: primary key: %v", cur.Name, err)
			}
			cur.PrimaryKey = cols
		case foreignRe.Get().MatchString(text):
			m := foreignRe.Get().FindStringSubmatch(text)
			fk := compile.ForeignKey{Columns: splitIdents(m[1]), RefTable: unquote(m[2]), RefColumns: splitIdents(m[3])}
			if err := checkColumns(cur, fk.Columns); err != nil {
				return nil, lineError(path, line, "table %q: foreign key: %v", cur.Name, err)
			}
			if len(fk.Columns) != len(fk.RefColumns) {
				return nil, lineError(path, line, "table %q: foreign key has %d columns but references %d", cur.Name, len(fk.Columns), len(fk.RefColumns))
			}
			cur.ForeignKeys = append(cur.ForeignKeys, fk)
		case otherConstraintRe.Get().MatchString(text):
		case columnRe.Get().MatchString(text):
			m := columnRe.Get().FindStringSubmatch(text)
			name := unquote(m[1])
			if cur.Column(name) != nil {
				return nil, lineError(path, line, "table %q: column %q is already defined", cur.Name, name)
			}
			if err := addColumn(cur, name, m[2]); err != nil {
				return nil, lineError(path, line, "table %q: column %q: %v", cur.Name, name, err)
			}
		default:
			return nil, lineError(path, line, "table %q: cannot read %q as a column, PRIMARY KEY or FOREIGN KEY line", cur.Name, trimmed)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading schema %s: %w", path, err)
	}
	if cur != nil {
		return nil, lineError(path, start, "table %q is never closed with \");\"", cur.Name)
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("%s: no CREATE TABLE block found; is this a schema dump?", path)
	}
	if err := resolveBareReferences(tables); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tables, nil
}

// addColumn adds a column from its type and the constraints after it. A
// catalog dump writes only "NULL" or "NOT NULL"; DDL may also say
// DEFAULT, PRIMARY KEY or REFERENCES, which are kept as keys.
func addColumn(t *compile.Table, name, rest string) error {
	typ, clauses := rest, ""
	if loc := clauseRe.Get().FindStringIndex(rest); loc != nil {
		typ, clauses = rest[:loc[0]], rest[loc[0]:]
	}
	typ = strings.TrimSpace(typ)
	if typ == "" {
		return fmt.Errorf("no type")
	}
	c := &compile.Column{Name: name, Type: typ, NotNull: notNullRe.Get().MatchString(clauses)}
	t.Columns = append(t.Columns, c)
	if inlinePKRe.Get().MatchString(clauses) {
		t.PrimaryKey = []string{name}
		c.NotNull = true
	}
	if m := inlineFKRe.Get().FindStringSubmatch(clauses); m != nil {
		ref := splitIdents(m[2])
		if len(ref) > 1 {
			return fmt.Errorf("a column reference names %d columns", len(ref))
		}
		t.ForeignKeys = append(t.ForeignKeys, compile.ForeignKey{Columns: []string{name}, RefTable: unquote(m[1]), RefColumns: ref})
	}
	return nil
}

// resolveBareReferences gives a "REFERENCES t" without columns the primary
// key of t, as SQL does.
func resolveBareReferences(tables []*compile.Table) error {
	for _, t := range tables {
		for i, fk := range t.ForeignKeys {
			if len(fk.RefColumns) > 0 {
				continue
			}
			var pk []string
			for _, r := range tables {
				if strings.EqualFold(r.Name, fk.RefTable) {
					pk = r.PrimaryKey
				}
			}
			if len(pk) != len(fk.Columns) {
				return fmt.Errorf("table %q: %s references %s without naming columns, and %s has no primary key of %d columns",
					t.Name, strings.Join(fk.Columns, ", "), fk.RefTable, fk.RefTable, len(fk.Columns))
			}
			t.ForeignKeys[i].RefColumns = pk
		}
	}
	return nil
}

func checkColumns(t *compile.Table, cols []string) error {
	if len(cols) == 0 {
		return fmt.Errorf("no columns listed")
	}
	for _, c := range cols {
		if t.Column(c) == nil {
			return fmt.Errorf("column %q is not defined above", c)
		}
	}
	return nil
}

func splitIdents(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, unquote(p))
		}
	}
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}
