// Package drift compares a bundle with what its sources say now: the
// tables and columns added, removed or retyped since the bundle was
// compiled, the rules that name a column that is gone, and the concepts
// past their stale_after. okf compile --check reports it, for CI.
package drift

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/okf-tools/okf"
)

// Report is the drift of one bundle. It is empty when the bundle says
// what the sources say.
type Report struct {
	Bundle string `json:"bundle"`
	// Missing is set when there is no bundle yet to compare with.
	Missing bool `json:"missing,omitempty"`
	// TablesAdded and TablesRemoved are table names.
	TablesAdded   []string `json:"tables_added,omitempty"`
	TablesRemoved []string `json:"tables_removed,omitempty"`
	// Columns are "table.column" refs.
	ColumnsAdded   []string  `json:"columns_added,omitempty"`
	ColumnsRemoved []string  `json:"columns_removed,omitempty"`
	ColumnsRetyped []Retyped `json:"columns_retyped,omitempty"`
	// Rules are the concepts (a rule, an example, a person's own) whose
	// Columns used name a column the sources no longer have.
	Rules []RuleDrift `json:"rules,omitempty"`
	// Stale are the concepts past their stale_after.
	Stale []string `json:"stale,omitempty"`
}

// Retyped is a column whose type changed.
type Retyped struct {
	Column string `json:"column"`
	Was    string `json:"was"`
	Now    string `json:"now"`
}

// RuleDrift is a concept that names columns that are gone.
type RuleDrift struct {
	Concept string   `json:"concept"`
	Path    string   `json:"path"`
	Columns []string `json:"columns"`
}

// Drifted reports whether anything differs.
func (r Report) Drifted() bool {
	return r.Missing || len(r.TablesAdded)+len(r.TablesRemoved)+len(r.ColumnsAdded)+len(r.ColumnsRemoved)+
		len(r.ColumnsRetyped)+len(r.Rules)+len(r.Stale) > 0
}

// Compare compares the files of a bundle as it is (nil when there is none)
// with the files compiled from the sources now; staleness is decided
// against now.
func Compare(name string, current, compiled map[string][]byte, now time.Time) Report {
	r := Report{Bundle: name}
	if current == nil {
		r.Missing = true
		return r
	}
	// A file the sources would write as it is (on a recompile, most) is
	// not read: the columns it lists are the same on both sides, and a rule
	// compile writes names only columns its tables list
	// (TestCompiledBundlesHaveNoDrift). It stays in the bundle, empty, as a
	// link target; it is read only when a file that differs shares its
	// table's name or uses that table.
	unchanged := map[string]bool{}
	differs := map[string][]byte{}
	for p, data := range current {
		if next, ok := compiled[p]; ok && bytes.Equal(data, next) {
			unchanged[p], data = true, nil
		}
		differs[p] = data
	}
	wasRead := read(differs)
	wasByID, isByID := wasRead.tables, read(without(compiled, unchanged)).tables
	named := map[string]bool{}
	for _, byID := range []map[string]table{wasByID, isByID} {
		for id := range byID {
			named[tableName(id)] = true
		}
	}
	for _, rf := range wasRead.rules {
		for _, u := range rf.Uses {
			named[tableName(u.Concept)] = true
		}
	}
	shared := map[string][]byte{}
	for p := range unchanged {
		if named[tableName(okf.ConceptID(p))] {
			shared[p] = current[p]
		}
	}
	sameByID := read(shared).tables
	maps.Copy(wasByID, sameByID)
	maps.Copy(isByID, sameByID)
	was, is := byName(wasByID), byName(isByID)
	for _, t := range sortedKeys(is) {
		if _, ok := was[t]; !ok {
			r.TablesAdded = append(r.TablesAdded, t)
		}
	}
	for _, t := range sortedKeys(was) {
		after, ok := is[t]
		if !ok {
			r.TablesRemoved = append(r.TablesRemoved, t)
			continue
		}
		before := was[t]
		for _, c := range after.order {
			if _, ok := before.types[c]; !ok {
				r.ColumnsAdded = append(r.ColumnsAdded, t+"."+c)
			}
		}
		for _, c := range before.order {
			typ, ok := after.types[c]
			switch {
			case !ok:
				r.ColumnsRemoved = append(r.ColumnsRemoved, t+"."+c)
			case typ != before.types[c]:
				r.ColumnsRetyped = append(r.ColumnsRetyped, Retyped{t + "." + c, before.types[c], typ})
			}
		}
	}
	// What the bundle's concepts use, checked against the tables now.
	for _, id := range sortedKeys(wasRead.rules) {
		rf := wasRead.rules[id]
		var gone []string
		for _, u := range rf.Uses {
			table := u.Concept[strings.LastIndexByte(u.Concept, '/')+1:]
			cols, ok := is[table]
			for _, col := range u.Columns {
				if _, has := cols.types[strings.ToLower(col)]; !ok || !has {
					gone = append(gone, table+"."+col)
				}
			}
		}
		if len(gone) > 0 {
			r.Rules = append(r.Rules, RuleDrift{Concept: id, Path: id + ".md", Columns: gone})
		}
	}
	sort.Slice(r.Rules, func(i, j int) bool { return r.Rules[i].Concept < r.Rules[j].Concept })
	rep := okf.Validate(bundleOf(dated(current, wasRead.dated, unchanged)), okf.Options{Now: now})
	for _, f := range rep.Findings {
		if f.Code == "stale" {
			r.Stale = append(r.Stale, strings.TrimSuffix(f.Path, ".md"))
		}
	}
	return r
}

// table is a table's columns, lower case, in schema order, with the type
// each row states.
type table struct {
	order []string
	types map[string]string
}

// concepts is what the concepts of a bundle's files state, by concept id.
type concepts struct {
	tables map[string]table
	rules  map[string]*okf.RuleFacts
	// dated are the concepts that state a stale_after.
	dated map[string]bool
}

// read reads the concepts of a bundle's files by okf.ParseFacts, the one
// contract of what compile writes.
func read(files map[string][]byte) concepts {
	b := bundleOf(files)
	out := concepts{tables: map[string]table{}, rules: map[string]*okf.RuleFacts{}, dated: map[string]bool{}}
	for _, d := range b.Concepts() {
		if s, _ := d.Text("stale_after"); strings.TrimSpace(s) != "" {
			out.dated[d.ID()] = true
		}
		f, rf := okf.ParseFacts(b, d, okf.Snake(d.Type()))
		if rf != nil {
			out.rules[d.ID()] = rf
		}
		if f == nil {
			continue
		}
		t, body := table{types: map[string]string{}}, d.Body()
		for _, col := range f.Columns {
			n := strings.ToLower(col.Name)
			t.order = append(t.order, n)
			t.types[n] = col.Type.Text(body)
		}
		out.tables[d.ID()] = t
	}
	return out
}

// tableName is the name of the table a concept id stands for, lower case.
func tableName(id string) string { return strings.ToLower(id[strings.LastIndexByte(id, '/')+1:]) }

// byName keys tables by their name, the last id in order winning.
func byName(byID map[string]table) map[string]table {
	out := map[string]table{}
	for _, id := range sortedKeys(byID) {
		out[tableName(id)] = byID[id]
	}
	return out
}

func without(files map[string][]byte, drop map[string]bool) map[string][]byte {
	out := map[string][]byte{}
	for p, data := range files {
		if !drop[p] {
			out[p] = data
		}
	}
	return out
}

// dated returns the files of the concepts that may state a stale_after:
// those of the files read that do (ids), and the unchanged files whose
// text could. Validate finds a concept stale from its own frontmatter
// alone, so these are all it needs to see.
func dated(files map[string][]byte, ids, unchanged map[string]bool) map[string][]byte {
	out := map[string][]byte{}
	for p, data := range files {
		if ids[okf.ConceptID(p)] || unchanged[p] && mayBeDated(data) {
			out[p] = data
		}
	}
	return out
}

// mayBeDated reports whether a document's frontmatter could have a
// stale_after key: written so, or spelled by a YAML escape, the only way
// to write a key other than as its characters (\x, \u and \U spell a
// character, a backslash before a line break joins two lines).
func mayBeDated(doc []byte) bool {
	if bytes.Contains(doc, []byte("stale_after")) {
		return true
	}
	for rest := doc; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 || i+1 == len(rest) {
			return false
		}
		switch rest[i+1] {
		case 'x', 'u', 'U', '\n', '\r':
			return true
		}
		rest = rest[i+1:]
	}
}

func bundleOf(files map[string][]byte) *okf.Bundle {
	var docs []*okf.Document
	for _, p := range slices.Sorted(maps.Keys(files)) {
		docs = append(docs, okf.Parse(p, files[p]))
	}
	return okf.NewBundle(docs)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Text writes a report for a person, a line a finding.
func (r Report) Text() string {
	var b strings.Builder
	if r.Missing {
		fmt.Fprintf(&b, "%s: no bundle yet: compile it first\n", r.Bundle)
		return b.String()
	}
	line := func(what string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(&b, "%s: %s: %s\n", r.Bundle, what, strings.Join(items, ", "))
		}
	}
	line("tables added", r.TablesAdded)
	line("tables removed", r.TablesRemoved)
	line("columns added", r.ColumnsAdded)
	line("columns removed", r.ColumnsRemoved)
	for _, c := range r.ColumnsRetyped {
		fmt.Fprintf(&b, "%s: column retyped: %s was %s, now %s\n", r.Bundle, c.Column, c.Was, c.Now)
	}
	for _, u := range r.Rules {
		fmt.Fprintf(&b, "%s: %s names %s, no longer in the database\n", r.Bundle, u.Path, strings.Join(u.Columns, ", "))
	}
	line("past stale_after", r.Stale)
	if b.Len() == 0 {
		fmt.Fprintf(&b, "%s: no drift\n", r.Bundle)
	}
	return b.String()
}
