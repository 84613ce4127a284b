// Package drift compares a bundle with what its sources say now: the
// tables and columns added, removed or retyped since the bundle was
// compiled, the rules that name a column that is gone, and the concepts
// past their stale_after. okf compile --check reports it, for CI.
package drift

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/readmodel"
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
	was, wasSnap := tables(name, current)
	is, _ := tables(name, compiled)
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
	for i := range wasSnap.Concepts {
		c := &wasSnap.Concepts[i]
		rf := c.Rule()
		if rf == nil {
			continue
		}
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
			r.Rules = append(r.Rules, RuleDrift{Concept: c.ID, Path: c.ID + ".md", Columns: gone})
		}
	}
	sort.Slice(r.Rules, func(i, j int) bool { return r.Rules[i].Concept < r.Rules[j].Concept })
	rep := okf.Validate(bundleOf(current), okf.Options{Now: now})
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

// tables reads the table concepts of a bundle's files by the read model's
// parser, the one contract of what compile writes.
func tables(name string, files map[string][]byte) (map[string]table, *readmodel.Snapshot) {
	var docs []readmodel.Doc
	for _, p := range slices.Sorted(maps.Keys(files)) {
		docs = append(docs, readmodel.Doc{Bundle: name, Path: p, Content: files[p]})
	}
	s, _ := readmodel.Build(name, docs)
	out := map[string]table{}
	for i := range s.Concepts {
		c := &s.Concepts[i]
		f := c.Table()
		if f == nil {
			continue
		}
		t := table{types: map[string]string{}}
		for _, col := range f.Columns {
			n := strings.ToLower(col.Name)
			t.order = append(t.order, n)
			t.types[n] = s.Text(c, col.Type)
		}
		out[strings.ToLower(c.ID[strings.LastIndexByte(c.ID, '/')+1:])] = t
	}
	return out, s
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
