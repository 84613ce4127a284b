package search

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/readmodel"
)

// Worked examples. A context pack may hold a query that answers a question
// like the one asked: a verified query concept (type SQL Query, not a
// draft) whose title, description or questions resemble it, or a pattern
// of a table concept's Common query patterns section (Google's bundles
// carry them). A model that sees working SQL over the right tables adapts
// it rather than guessing joins and filters.

// Example defaults, set by the sweep recorded in BENCHMARKS.md ("Verified
// queries").
const (
	// DefaultPackExamples is how many worked examples a pack holds, budget
	// allowing.
	DefaultPackExamples = 1
	// MinExampleCoverage is the share of the question's term weight an
	// example's text must hold to resemble it.
	MinExampleCoverage = 0.2
	// DefaultExampleTables is the share of an example's tables the pack
	// must show: all of them, so that the example's SQL is read beside the
	// schema rows and joins it uses.
	DefaultExampleTables = 1.0
	// SameQuestionCoverage is the share of the question an example's text
	// holds when it answers the same question, perhaps with other values:
	// such an example is taken whatever tables the pack shows.
	SameQuestionCoverage = 0.8
)

// example is one worked example of a bundle.
type example struct {
	concept  int    // the query concept, or the table concept of a pattern
	question string // the first question it answers, "" for a pattern
	sql      string
	terms    map[string]bool
	tables   map[int]bool // the bundle's tables its SQL names
}

// exampleIndex is a bundle's worked examples and their terms' document
// frequencies.
type exampleIndex struct {
	examples []example
	df       map[string]int
}

// exampleIndex returns the worked examples of a bundle, built on first
// use.
func (ix *Index) exampleIndex(bundle string) *exampleIndex {
	return perBundle(&ix.packs, &ix.packs.examples, bundle, func() *exampleIndex { return ix.buildExampleIndex(bundle) })
}

func (ix *Index) buildExampleIndex(bundle string) *exampleIndex {
	ei := &exampleIndex{df: map[string]int{}}
	tables := map[string]int{}
	if sp, ok := ix.span(bundle); ok {
		for i := sp.lo; i < sp.hi; i++ {
			if c := &ix.snap.Concepts[i]; c.IsTable() {
				tables[strings.ToLower(tableName(c))] = int(i)
			}
		}
		for i := sp.lo; i < sp.hi; i++ {
			ei.add(ix.snap, int(i))
		}
	}
	for k := range ei.examples {
		e := &ei.examples[k]
		for t := range e.terms {
			ei.df[t]++
		}
		e.tables = map[int]bool{}
		sql := strings.ToLower(e.sql)
		for _, at := range sqlWords.Get().FindAllStringIndex(sql, -1) {
			// In a qualified name (project.dataset.table) only the last
			// part names a table.
			if at[1] < len(sql) && sql[at[1]] == '.' {
				continue
			}
			if t, ok := tables[sql[at[0]:at[1]]]; ok {
				e.tables[t] = true
			}
		}
	}
	return ei
}

// add adds a concept's examples: a verified query concept's SQL, or the
// patterns of a Common query patterns section.
func (ei *exampleIndex) add(s *readmodel.Snapshot, i int) {
	c := &s.Concepts[i]
	terms := func(texts ...string) map[string]bool {
		m := map[string]bool{}
		for _, t := range texts {
			columnTerms(t, func(term string) { m[term] = true })
		}
		return m
	}
	if q := c.Query(); q != nil {
		if c.Status == "draft" || c.Status == "deprecated" {
			return
		}
		e := example{concept: i, sql: q.SQL, terms: terms(append([]string{c.Title, c.Summary}, q.Questions...)...)}
		if len(q.Questions) > 0 {
			e.question = q.Questions[0]
		}
		ei.examples = append(ei.examples, e)
		return
	}
	sec, ok := c.Section("common_query_patterns")
	if !ok {
		return
	}
	body := string(s.Body(c))
	for _, b := range okf.FencedBlocks(body[sec.Start:sec.End]) {
		if sql := strings.TrimSpace(b.Text); b.Info == "sql" && sql != "" {
			ei.examples = append(ei.examples, example{concept: i, sql: sql, terms: terms(c.Title, sql)})
		}
	}
}

// sqlWords are the words of a SQL text that may name a table.
var sqlWords = lazy.Regexp{Expr: `[a-z_][a-z0-9_]*`}

// match returns the examples resembling a question, best first: those
// holding at least minCoverage of its terms' weight (a term weighing more
// the fewer examples hold it) and whose tables overlap the pack's by at
// least minTables (the share of their tables the pack holds), ranked by
// that share, then by coverage; an example that answers the same question
// (SameQuestionCoverage) comes first whatever its tables.
func (ei *exampleIndex) match(question string, minCoverage float64, tables map[int]bool, minTables float64) []int {
	if len(ei.examples) == 0 {
		return nil
	}
	// The question's terms in order: summed in a map's order, the shares
	// would differ in their last bits from one run to the next.
	seen := map[string]bool{}
	var q []string
	columnTerms(question, func(t string) {
		if !seen[t] {
			seen[t] = true
			q = append(q, t)
		}
	})
	sort.Strings(q)
	n := float64(len(ei.examples))
	weight := func(t string) float64 { return math.Log(1 + (n+1)/(float64(ei.df[t])+0.5)) }
	total := 0.0
	for _, t := range q {
		total += weight(t)
	}
	if total == 0 {
		return nil
	}
	type scored struct {
		i             int
		share, tables float64
	}
	var hits []scored
	for i, e := range ei.examples {
		held := 0.0
		for _, t := range q {
			if e.terms[t] {
				held += weight(t)
			}
		}
		share := held / total
		overlap := heldShare(e.tables, tables)
		if share >= SameQuestionCoverage || share >= minCoverage && overlap >= minTables {
			hits = append(hits, scored{i, share, overlap})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if same := hits[a].share >= SameQuestionCoverage; same != (hits[b].share >= SameQuestionCoverage) {
			return same
		}
		if hits[a].tables != hits[b].tables {
			return hits[a].tables > hits[b].tables
		}
		return hits[a].share > hits[b].share
	})
	out := make([]int, len(hits))
	for k, h := range hits {
		out[k] = h.i
	}
	return out
}

// heldShare is the share of an example's tables that the pack holds: 1 when
// the example reads only tables the pack shows (or names none of the
// bundle's).
func heldShare(example, pack map[int]bool) float64 {
	if len(example) == 0 {
		return 1
	}
	both := 0
	for t := range example {
		if pack[t] {
			both++
		}
	}
	return float64(both) / float64(len(example))
}

// exampleText renders a worked example for a pack.
func (ix *Index) exampleText(e example) string {
	c := &ix.snap.Concepts[e.concept]
	if e.question == "" && !c.IsQuery() {
		return fmt.Sprintf("\n### A common query of %s (%s)\n```sql\n%s\n```\n", c.Title, readmodel.IDCell(c.ID), e.sql)
	}
	head := fmt.Sprintf("\n### %s (%s, a verified query: run_query runs it)\n", c.Title, readmodel.IDCell(c.ID))
	if e.question != "" {
		head += "Answers: " + oneLine(e.question) + "\n"
	}
	return head + "```sql\n" + e.sql + "\n```\n"
}
