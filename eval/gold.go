package eval

import (
	"fmt"
	"strings"

	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/sqlguard"
)

// A question's gold is what its SQL needs: the rules its set names, the
// tables its gold SQL reads and the columns it reads of them, resolved
// against the bundle's own tables the way the database resolves them.

// gold is what one question needs, as refs: bundle/id for rules and
// tables, a table's ref, a dot and the column's name for columns.
type gold struct {
	rules, tables, columns map[string]bool
	// unread lists the gold statements whose columns could not be read
	// (a function body, a DO block, a table the bundle lacks).
	unread []string
}

func (g gold) all() []string {
	return append(sortedKeys(g.rules), sortedKeys(g.tables)...)
}

// bundleTables is what a bundle says of its tables: their columns as a
// catalog the guard's resolver reads (schema public) and each table's
// concept ref by table name. A table's name is the last segment of its
// concept's id.
type bundleTables struct {
	catalog *sqlguard.Catalog
	refs    map[string]string
}

func tablesOf(s *readmodel.Snapshot) map[string]bundleTables {
	out := map[string]bundleTables{}
	for i := range s.Concepts {
		c := &s.Concepts[i]
		t := c.Table()
		if t == nil {
			continue
		}
		b, ok := out[c.Bundle]
		if !ok {
			b = bundleTables{catalog: &sqlguard.Catalog{Tables: map[string][]string{}}, refs: map[string]string{}}
			out[c.Bundle] = b
		}
		name := strings.ToLower(c.ID[strings.LastIndexByte(c.ID, '/')+1:])
		cols := make([]string, len(t.Columns))
		for j, col := range t.Columns {
			cols[j] = strings.ToLower(col.Name)
		}
		b.catalog.Tables["public."+name] = cols
		b.refs[name] = c.Bundle + "/" + c.ID
	}
	return out
}

// goldOf resolves a question's gold against its bundle. An error means the
// gold SQL does not parse.
func (c *Corpus) goldOf(q Question) (gold, error) {
	db := q.Database
	g := gold{rules: map[string]bool{}, tables: map[string]bool{}, columns: map[string]bool{}}
	for _, id := range q.Rules {
		if cid, ok := c.RuleConcept[db][id]; ok {
			g.rules[db+"/"+cid] = true
		} else {
			// A rule the bundle lacks still counts as needed.
			g.rules[fmt.Sprintf("%s/missing-rule-%d", db, id)] = true
		}
	}
	tables, ddl, err := q.Tables()
	if err != nil {
		return g, err
	}
	bt := c.tables[db]
	// A table the bundle lacks cannot be found, and no strategy is to
	// blame: the SQL creates it (CREATE, or a table made before the
	// question, as LiveSQLBench's setup SQL does), or the bundle has a gap.
	for _, t := range append(tables, ddl...) {
		if r, ok := bt.refs[t]; ok {
			g.tables[r] = true
		} else {
			g.unread = append(g.unread, "table "+t+" is not in the bundle")
		}
	}
	for _, sql := range q.SQL {
		cols, unread, err := sqlguard.ColumnsRead(sql, bt.catalog)
		if err != nil {
			return g, fmt.Errorf("question %s: gold SQL: %w", q.ID, err)
		}
		g.unread = append(g.unread, unread...)
		for _, col := range cols {
			table, name, _ := strings.Cut(col, ".")
			g.columns[bt.refs[table]+"."+name] = true
		}
	}
	return g, nil
}
