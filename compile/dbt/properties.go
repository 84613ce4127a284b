package dbt

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// entry is one properties entry waiting to be applied to its table.
type entry struct {
	f    *yfile
	node *yaml.Node
	n    *node
	// fallback is a source's description, for its tables without one.
	fallback string
}

// readProperties reads every properties file under the model and seed
// paths: first the sources, which declare tables, then the entries that
// describe models, seeds and source tables (their tests may refer to any
// table), then the semantic layer and the exposures.
func (p *project) readProperties() error {
	found, err := p.find(slices.Concat(p.modelPaths, p.seedPaths), ".yml", ".yaml")
	if err != nil {
		return err
	}
	var files []*yfile
	for _, pf := range found {
		f, err := readYAML(p.abs(pf.rel), pf.rel)
		if err != nil {
			return err
		}
		if f.root != nil {
			files = append(files, f)
			p.used(pf.root)
		}
	}
	var pending []entry
	for _, f := range files {
		es, err := p.readSources(f)
		if err != nil {
			return err
		}
		pending = append(pending, es...)
	}
	described := map[*node]string{}
	for _, f := range files {
		for _, kind := range []string{modelKind, seedKind} {
			items, err := f.entries(kind + "s")
			if err != nil {
				return err
			}
			for _, it := range items {
				nm := name(it)
				n := p.refs[strings.ToLower(nm)]
				switch {
				case n != nil && n.kind == kind:
				case p.skipped[strings.ToLower(nm)] != "":
					continue
				default:
					// dbt warns of a patch for a resource it cannot find.
					p.unmatched = append(p.unmatched, nm)
					continue
				}
				at := fmt.Sprintf("%s:%d", f.path, it.Line)
				if prev, ok := described[n]; ok {
					return f.errorf(it, "%s %s is already described at %s", kind, nm, prev)
				}
				why, err := f.configuredAway(it)
				if err != nil {
					return err
				}
				if why != "" {
					p.drop(n, why)
					continue
				}
				described[n] = at
				pending = append(pending, entry{f: f, node: it, n: n})
			}
		}
	}
	for _, e := range pending {
		if err := p.apply(e); err != nil {
			return err
		}
	}
	for _, n := range p.nodes {
		p.applyCatalog(n)
		p.applyColumnTypes(n)
		n.resolveKey()
	}
	for _, f := range files {
		if err := p.sem.read(p, f); err != nil {
			return err
		}
		if err := p.readExposures(f); err != nil {
			return err
		}
	}
	return nil
}

// configuredAway says why a properties entry's config makes its resource
// no table (enabled: false, or materialized: ephemeral), or "".
func (f *yfile) configuredAway(it *yaml.Node) (string, error) {
	cfg := lookup(it, "config")
	materialized, err := f.text(cfg, "materialized")
	if err != nil {
		return "", err
	}
	enabled := true
	if lookup(cfg, "enabled") != nil {
		if enabled, err = f.flag(cfg, "enabled"); err != nil {
			return "", err
		}
	}
	return noTable(materialized, enabled), nil
}

// drop removes a table its properties turn into none.
func (p *project) drop(n *node, why string) {
	p.nodes = slices.DeleteFunc(p.nodes, func(x *node) bool { return x == n })
	delete(p.refs, strings.ToLower(n.table.Name))
	p.skipped[strings.ToLower(n.table.Name)] = why
}

// readSources adds the tables of every source a file declares, each
// named schema.table as SQL names it (the schema defaults to the source's
// name, the table to its identifier), and returns their entries.
func (p *project) readSources(f *yfile) ([]entry, error) {
	srcs, err := f.entries("sources")
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, src := range srcs {
		sname := name(src)
		schema, err := f.text(src, "schema")
		if err != nil {
			return nil, err
		}
		if schema == "" {
			schema = sname
		}
		desc, err := f.text(src, "description")
		if err != nil {
			return nil, err
		}
		if desc, err = p.resolveDocs(f, src.Line, "source "+sname, desc); err != nil {
			return nil, err
		}
		tables, err := f.list(src, "tables")
		if err != nil {
			return nil, err
		}
		for _, tbl := range tables {
			tname, err := f.text(tbl, "name")
			if err != nil {
				return nil, err
			}
			if tname == "" {
				return nil, f.errorf(tbl, "source %s: a table has no name", sname)
			}
			key := strings.ToLower(sname + "." + tname)
			if prev := p.sourceTables[key]; prev != nil {
				return nil, f.errorf(tbl, "source %s: table %s is already declared in %s", sname, tname, prev.file)
			}
			id, err := f.text(tbl, "identifier")
			if err != nil {
				return nil, err
			}
			if id == "" {
				id = tname
			}
			n := &node{kind: sourceKind, identifier: id, file: f.rel, uid: p.uniqueID(sourceKind, sname, tname), table: &compile.Table{Name: schema + "." + id}}
			p.add(n)
			p.sourceTables[key] = n
			fallback := ""
			if desc != "" {
				fallback = "A table of the source " + sname + ": " + desc
			}
			out = append(out, entry{f: f, node: tbl, n: n, fallback: fallback})
		}
	}
	return out, nil
}

// apply applies one properties entry to its table: the description, the
// columns with their types and tests, and the table's own tests and
// constraints.
func (p *project) apply(e entry) error {
	f, it, n := e.f, e.node, e.n
	t := n.table
	n.documented = true
	what := n.kind + " " + name(it)
	desc, err := f.text(it, "description")
	if err != nil {
		return err
	}
	if t.Meaning, err = p.resolveDocs(f, it.Line, what, desc); err != nil {
		return err
	}
	if t.Meaning == "" {
		t.Meaning = e.fallback
	}
	if t.Aliases, err = f.synonyms(it); err != nil {
		return err
	}
	if n.kind == seedKind {
		n.columnTypes = append(n.columnTypes, columnTypes(lookup(lookup(it, "config"), "column_types"))...)
	}
	if n.kind == modelKind {
		materialized, err := f.text(lookup(it, "config"), "materialized")
		if err != nil {
			return err
		}
		if materialized != "" {
			t.View = strings.EqualFold(materialized, "view")
		}
	}
	cols, err := f.list(it, "columns")
	if err != nil {
		return err
	}
	for _, ce := range cols {
		cname, err := f.text(ce, "name")
		if err != nil {
			return err
		}
		if strings.TrimSpace(cname) == "" {
			return f.errorf(ce, "%s: a column has no name", what)
		}
		c := t.Column(cname)
		switch {
		case n.kind == seedKind && c == nil:
			// A seed's columns are its CSV header's.
			p.unmatched = append(p.unmatched, t.Name+"."+cname)
			continue
		case n.kind != seedKind && c != nil:
			return f.errorf(ce, "%s: column %s is listed twice", what, cname)
		case c == nil:
			c = &compile.Column{Name: cname}
			t.Columns = append(t.Columns, c)
		}
		cwhat := t.Name + "." + c.Name
		cdesc, err := f.text(ce, "description")
		if err != nil {
			return err
		}
		if c.Meaning, err = p.resolveDocs(f, ce.Line, "column "+cwhat, cdesc); err != nil {
			return err
		}
		also, err := f.synonyms(ce)
		if err != nil {
			return err
		}
		if len(also) > 0 {
			// A column has no concept of its own: its other names go
			// where search reads the column, its meaning.
			c.Meaning = strings.TrimSpace(c.Meaning + " Also called: " + strings.Join(also, ", ") + ".")
		}
		if c.PersonalData, err = f.personalData(ce); err != nil {
			return err
		}
		typ, err := f.text(ce, "data_type")
		if err != nil {
			return err
		}
		if typ != "" {
			c.Type = typ
			n.typed[strings.ToLower(c.Name)] = true
		}
		if err := p.applyTests(f, ce, n, c); err != nil {
			return err
		}
		if err := p.applyConstraints(f, ce, n, c); err != nil {
			return err
		}
	}
	if err := p.applyTests(f, it, n, nil); err != nil {
		return err
	}
	return p.applyConstraints(f, it, n, nil)
}

// test is one data test of a column or table.
type test struct {
	name string     // without its package: "unique_combination_of_columns"
	args *yaml.Node // the arguments' mapping, or nil
	at   *yaml.Node
}

// readTests reads the tests under tests: and data_tests: (dbt 1.8 renamed
// the key; both are read). A test is a name (- unique), a name with its
// arguments (- relationships: {to: …, field: …}), the arguments nested
// under arguments: (dbt 1.10), or a mapping with test_name:. A test of a
// shape none of these is, such as a custom test named otherwise, is not a
// key, a join or an enum, and is left alone.
func (f *yfile) readTests(m *yaml.Node) ([]test, error) {
	var out []test
	for _, key := range []string{"tests", "data_tests"} {
		items, err := f.list(m, key)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			switch {
			case it.Kind == yaml.ScalarNode:
				out = append(out, test{name: testName(it.Value), at: it})
			case it.Kind == yaml.MappingNode && lookup(it, "test_name") != nil:
				tn, err := f.text(it, "test_name")
				if err != nil {
					return nil, err
				}
				out = append(out, test{name: testName(tn), args: arguments(it), at: it})
			case it.Kind == yaml.MappingNode && len(it.Content) == 2:
				out = append(out, test{name: testName(it.Content[0].Value), args: arguments(deref(it.Content[1])), at: it})
			}
		}
	}
	return out, nil
}

// testName drops a test's package: dbt_utils.unique_combination_of_columns
// is unique_combination_of_columns.
func testName(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '.')+1:]
}

// arguments returns a test's arguments: under arguments: when given
// there, else the test's own mapping.
func arguments(m *yaml.Node) *yaml.Node {
	if a := lookup(m, "arguments"); a != nil && a.Kind == yaml.MappingNode {
		return a
	}
	if m != nil && m.Kind == yaml.MappingNode {
		return m
	}
	return nil
}

// applyTests applies the tests of a column (c) or of a table (c nil,
// where a test names its column with column_name).
func (p *project) applyTests(f *yfile, m *yaml.Node, n *node, c *compile.Column) error {
	tests, err := f.readTests(m)
	if err != nil {
		return err
	}
	for _, tst := range tests {
		col := c
		if col == nil {
			if tst.name == "unique_combination_of_columns" {
				combo, err := f.texts(tst.args, "combination_of_columns")
				if err != nil {
					return err
				}
				n.combos = append(n.combos, combo)
				continue
			}
			cn, err := f.text(tst.args, "column_name")
			if err != nil {
				return err
			}
			if col = n.table.Column(cn); col == nil {
				continue // an expression, or no column: nothing to key
			}
		}
		what := n.table.Name + "." + col.Name
		switch tst.name {
		case "unique":
			n.unique[strings.ToLower(col.Name)] = true
		case "not_null":
			col.NotNull = true
		case "accepted_values":
			vals, err := f.texts(tst.args, "values")
			if err != nil {
				return err
			}
			if len(vals) == 0 {
				return f.errorf(tst.at, "%s: the accepted_values test lists no values", what)
			}
			if len(col.Enum) == 0 {
				col.Enum = vals
			}
		case "relationships":
			to, err := f.text(tst.args, "to")
			if err != nil {
				return err
			}
			field, err := f.text(tst.args, "field")
			if err != nil {
				return err
			}
			if to == "" || field == "" {
				return f.errorf(tst.at, "%s: the relationships test needs both to: and field:", what)
			}
			target, err := p.resolve(f, lookup(tst.args, "to"), what+": relationships test", to)
			if err != nil {
				return err
			}
			addForeignKey(n.table, compile.ForeignKey{Columns: []string{col.Name}, RefTable: target.table.Name, RefColumns: []string{field}})
		}
	}
	return nil
}

// applyConstraints applies the model contract's constraints of a column
// (c) or of a table (c nil, each constraint naming its columns):
// primary_key, not_null, unique and foreign_key.
func (p *project) applyConstraints(f *yfile, m *yaml.Node, n *node, c *compile.Column) error {
	items, err := f.list(m, "constraints")
	if err != nil {
		return err
	}
	for _, it := range items {
		typ, err := f.text(it, "type")
		if err != nil {
			return err
		}
		cols := []string{}
		if c != nil {
			cols = append(cols, c.Name)
		} else if cols, err = f.texts(it, "columns"); err != nil {
			return err
		}
		if !allColumns(n.table, cols) {
			continue
		}
		cols = spelled(n.table, cols)
		switch typ {
		case "primary_key":
			n.declared = append(n.declared, cols...)
		case "not_null":
			for _, cn := range cols {
				n.table.Column(cn).NotNull = true
			}
		case "unique":
			if len(cols) == 1 {
				n.unique[strings.ToLower(cols[0])] = true
			} else {
				n.combos = append(n.combos, cols)
			}
		case "foreign_key":
			fk, err := p.constraintKey(f, it, n, cols)
			if err != nil {
				return err
			}
			if fk != nil {
				addForeignKey(n.table, *fk)
			}
		}
	}
	return nil
}

// foreignKeyExprRe reads a foreign_key constraint's expression: the
// referenced relation and its columns, "analytics.customers (id)".
var foreignKeyExprRe = lazy.Regexp{Expr: `^\s*([A-Za-z0-9_."]+)\s*\(\s*([^)]*)\)\s*$`}

// constraintKey reads a foreign_key constraint: to: ref(…) with
// to_columns (dbt 1.9), or an expression naming the relation.
func (p *project) constraintKey(f *yfile, it *yaml.Node, n *node, cols []string) (*compile.ForeignKey, error) {
	what := n.table.Name + " (" + strings.Join(cols, ", ") + ")"
	to, err := f.text(it, "to")
	if err != nil {
		return nil, err
	}
	if to != "" {
		refCols, err := f.texts(it, "to_columns")
		if err != nil {
			return nil, err
		}
		target, err := p.resolve(f, it, what+": foreign_key constraint", to)
		if err != nil {
			return nil, err
		}
		if len(refCols) != len(cols) {
			return nil, f.errorf(it, "%s: the foreign_key constraint references %d columns from %d", what, len(refCols), len(cols))
		}
		return &compile.ForeignKey{Columns: cols, RefTable: target.table.Name, RefColumns: refCols}, nil
	}
	expr, err := f.text(it, "expression")
	if err != nil {
		return nil, err
	}
	m := foreignKeyExprRe.Get().FindStringSubmatch(expr)
	if m == nil {
		return nil, nil // free SQL: no key to read
	}
	relation := strings.Split(strings.ReplaceAll(m[1], `"`, ""), ".")
	var refCols []string
	for _, rc := range strings.Split(m[2], ",") {
		refCols = append(refCols, strings.Trim(strings.TrimSpace(rc), `"`))
	}
	if len(refCols) != len(cols) {
		return nil, f.errorf(it, "%s: the foreign_key constraint references %d columns from %d", what, len(refCols), len(cols))
	}
	return &compile.ForeignKey{Columns: cols, RefTable: relation[len(relation)-1], RefColumns: refCols}, nil
}

var (
	refRe    = lazy.Regexp{Expr: `^ref\(\s*['"]([^'"]+)['"]\s*(?:,\s*['"]([^'"]+)['"]\s*)?(?:,\s*v(?:ersion)?\s*=\s*[^)]*)?\)$`}
	sourceRe = lazy.Regexp{Expr: `^source\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]\s*\)$`}
)

// resolve finds the table a ref('x') or source('s', 't') names, written
// bare or inside {{ }}.
func (p *project) resolve(f *yfile, at *yaml.Node, what, to string) (*node, error) {
	s := strings.TrimSpace(to)
	if inner, ok := strings.CutPrefix(s, "{{"); ok {
		s = strings.TrimSpace(strings.TrimSuffix(inner, "}}"))
	}
	if m := refRe.Get().FindStringSubmatch(s); m != nil {
		nm := m[1]
		if m[2] != "" {
			nm = m[2] // ref('package', 'model')
		}
		if n := p.refs[strings.ToLower(nm)]; n != nil {
			return n, nil
		}
		if why := p.skipped[strings.ToLower(nm)]; why != "" {
			return nil, f.errorf(at, "%s: %s names a %s model, which makes no table", what, to, why)
		}
		return nil, f.errorf(at, "%s: %s names no model or seed of the project", what, to)
	}
	if m := sourceRe.Get().FindStringSubmatch(s); m != nil {
		if n := p.sourceTables[strings.ToLower(m[1]+"."+m[2])]; n != nil {
			return n, nil
		}
		return nil, f.errorf(at, "%s: %s names no table of the project's sources", what, to)
	}
	return nil, f.errorf(at, "%s: cannot read %q: want ref('model') or source('source', 'table')", what, to)
}

// resolveKey settles a table's primary key from what its tests and
// constraints prove: a declared primary_key, else the first column that
// is both unique and not null, else the first unique combination of
// columns.
func (n *node) resolveKey() {
	t := n.table
	if len(n.declared) > 0 {
		t.PrimaryKey = n.declared
		return
	}
	for _, c := range t.Columns {
		if c.NotNull && n.unique[strings.ToLower(c.Name)] {
			t.PrimaryKey = []string{c.Name}
			return
		}
	}
	for _, combo := range n.combos {
		if allColumns(t, combo) {
			t.PrimaryKey = spelled(t, combo)
			return
		}
	}
}
