package search

import (
	"sort"
	"strings"
)

// join is one foreign key: from.fromCols reference to.toCols, or the other
// way round when reversed (an edge walked against its direction). Columns
// are lower case.
type join struct {
	from, to         int
	fromCols, toCols []string
	reversed         bool
}

// joinGraph is the foreign keys between the tables of the snapshot, both
// ways, by table: a context pack walks them to connect the tables it
// shows. A key joins tables of one bundle only: that is where a link
// resolves.
type joinGraph struct {
	adj map[int][]join
}

// joinGraph returns the index's foreign-key graph, read from the tables'
// facts on first use.
func (ix *Index) joinGraph() *joinGraph {
	ix.fkOnce.Do(func() {
		g := &joinGraph{adj: map[int][]join{}}
		for i := range ix.snap.Concepts {
			c := &ix.snap.Concepts[i]
			facts := c.Table()
			if facts == nil {
				continue
			}
			for _, fk := range facts.ForeignKeys {
				to, ok := ix.snap.LookupIn(c.Bundle, fk.Concept)
				if !ok || !ix.snap.Concepts[to].IsTable() || len(fk.Columns) != len(fk.RefColumns) {
					continue
				}
				j := join{from: i, to: to, fromCols: lower(fk.Columns), toCols: lower(fk.RefColumns)}
				g.adj[i] = append(g.adj[i], j)
				g.adj[to] = append(g.adj[to], join{from: to, to: i, fromCols: j.toCols, toCols: j.fromCols, reversed: true})
			}
		}
		ix.joins = g
	})
	return ix.joins
}

func lower(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	return out
}

// connect returns foreign keys that connect the given tables: a Steiner
// tree by the usual approximation, then the other keys between its tables. Starting from the first table,
// it repeatedly adds the shortest path (breadth first, every table
// connected so far a start) to the nearest table not yet connected, so
// bridging tables join the tree where the chosen tables need them. Tables
// no path reaches stay unconnected.
func (g *joinGraph) connect(tables []int) []join {
	if len(tables) < 2 {
		return nil
	}
	connected := map[int]bool{tables[0]: true}
	want := map[int]bool{}
	for _, t := range tables[1:] {
		want[t] = true
	}
	var out []join
	for len(want) > 0 {
		prev := map[int]join{}
		seen := map[int]bool{}
		queue := sortedSet(connected)
		for _, t := range queue {
			seen[t] = true
		}
		found := -1
		for len(queue) > 0 && found < 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, j := range g.adj[cur] {
				if seen[j.to] {
					continue
				}
				seen[j.to] = true
				prev[j.to] = j
				if want[j.to] {
					found = j.to
					break
				}
				queue = append(queue, j.to)
			}
		}
		if found < 0 {
			break
		}
		for t := found; !connected[t]; t = prev[t].from {
			out = append(out, prev[t])
			connected[t] = true
			delete(want, t)
		}
	}
	// Every other key between two tables of the tree too: a query joins
	// them directly where the tree goes round another table.
	in := map[[2]int]bool{}
	for _, j := range out {
		in[[2]int{min(j.from, j.to), max(j.from, j.to)}] = true
	}
	for _, t := range sortedSet(connected) {
		for _, j := range g.adj[t] {
			e := [2]int{min(j.from, j.to), max(j.from, j.to)}
			if !j.reversed && connected[j.to] && !in[e] {
				in[e] = true
				out = append(out, j)
			}
		}
	}
	return out
}

// joinText renders the key as "referencing.column = referenced.column",
// one equation a column pair, joined by AND.
func (ix *Index) joinText(j join) string {
	from, to := tableName(&ix.snap.Concepts[j.from]), tableName(&ix.snap.Concepts[j.to])
	eqs := make([]string, len(j.fromCols))
	for k := range j.fromCols {
		a, b := from+"."+j.fromCols[k], to+"."+j.toCols[k]
		if j.reversed {
			a, b = b, a
		}
		eqs[k] = a + " = " + b
	}
	return strings.Join(eqs, " AND ")
}

func sortedSet(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
