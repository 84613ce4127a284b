package search

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/readmodel"
)

// DefaultBudget is the token budget of a context pack when none is given.
const DefaultBudget = 2000

// PackOptions shape a context pack.
type PackOptions struct {
	// Budget is the most tokens the pack may cost; 0 means DefaultBudget.
	Budget int
	// Bundle limits the pack to one bundle; "" routes the question to the
	// bundle it most likely belongs to.
	Bundle string
	// Count counts the tokens of a text. Required.
	Count func(string) int
	// Rules is how many rule hits to take; 0 means DefaultPackRules.
	Rules int
	// MinRelevance is the share of the best rule hit's score below which a
	// rule hit is not worth its tokens; 0 means DefaultMinRelevance.
	MinRelevance float64
	// Columns is how many of the question's own columns to take; 0 means
	// DefaultPackColumns. ColumnRelevance is the share of the best column's
	// score a column needs; 0 means DefaultColumnRelevance.
	Columns         int
	ColumnRelevance float64
	// NewTableRelevance is the share a column needs to bring its own table
	// into a pack with rules; 0 means DefaultNewTableRelevance.
	NewTableRelevance float64
	// HedgeRules and HedgeRelevance replace Rules and MinRelevance for a
	// question that names no rule; 0 means DefaultHedgeRules and
	// DefaultHedgeRelevance. HedgeFirst is how many of those rules come
	// before the question's own columns; 0 means DefaultHedgeFirst.
	HedgeRules     int
	HedgeRelevance float64
	HedgeFirst     int
	// Examples is how many worked examples to take; 0 means
	// DefaultPackExamples, a negative number none. ExampleCoverage is the
	// share of the question's term weight an example must hold; 0 means
	// MinExampleCoverage. ExampleTables is the share of an example's
	// tables the pack must show; 0 means DefaultExampleTables.
	Examples        int
	ExampleCoverage float64
	ExampleTables   float64
	// QueryVector is the question's embedding, for the search that finds
	// the pack's rules and tables (Options.QueryVector).
	QueryVector []float32
}

// Pack is the knowledge a question most likely needs, in one text.
type Pack struct {
	Text string `json:"text"`
	// Tokens is the text's o200k token count, summed over its pieces
	// (rules, rows, joins, candidates) as the packer counts them: within a
	// few tokens of counting the whole text at once, which would cost as
	// much as making the pack.
	Tokens int `json:"tokens"`
	// Rules are the refs (bundle/id) of the rules whose definitions the
	// pack holds, in the order they appear.
	Rules []string `json:"rules"`
	// Tables are the refs of the tables whose schema rows it holds.
	Tables []string `json:"tables"`
	// Columns are the columns whose schema rows it holds, as the table's
	// ref, a dot and the column's name.
	Columns []string `json:"columns"`
	// Examples are the refs of the concepts whose SQL the pack holds as
	// worked examples: verified queries, or tables' common query patterns.
	Examples []string `json:"examples"`
	// Values are the stored values the question names that the pack
	// shows, each as its column's ref, "=" and the value as stored.
	Values []string `json:"values"`
	// Candidates are the refs of the concepts listed only by manifest row.
	Candidates []string `json:"candidates"`
	// Routing is the evidence for the bundle a pack without
	// PackOptions.Bundle was made from: each bundle's score, best first.
	Routing []BundleScore `json:"routing,omitempty"`
}

// Pack defaults, set by the sweeps recorded in BENCHMARKS.md ("Context
// packs that hold what the SQL needs").
const (
	DefaultPackRules    = 4
	DefaultMinRelevance = 0.65
	// PackTables is how many table hits a pack adds beyond the tables its
	// rules and the question's columns use.
	PackTables = 2
	// DefaultPackColumns is how many of the question's own columns
	// (matched by name and meaning) a pack adds, and
	// DefaultColumnRelevance the share of the best column's score a column
	// needs. Swept once packs showed stored values (issue 27), on BIRD
	// superhero without and with its evidence (column recall, complete,
	// tokens): 0.1 98.1%, 90.8%, 573 and 100%, 100%, 728; 0.15 97.5%,
	// 87.7%, 448 and 100%, 100%, 597; 0.2 the same at 392 and 536; the
	// LiveSQLBench train questions lose one column of 0.15's in 75.
	DefaultPackColumns     = 32
	DefaultColumnRelevance = 0.15
	// DefaultNewTableRelevance is the share of the best column's score a
	// question's column needs to bring a table of its own into a pack that
	// has rules: there the rules name most of the tables, and a new table
	// costs its keys and joins too. A pack without rules takes its tables
	// from the question's columns at DefaultColumnRelevance.
	DefaultNewTableRelevance = 0.35
	// PackValues is how many stored values the question names a pack
	// shows.
	PackValues = 8
	// PackCandidates is how many more candidates a pack lists by manifest
	// row, budget allowing; a pack that hedges lists up to HedgeCandidates
	// when they are rules it considered, so that the agent sees what else
	// the question may have meant.
	PackCandidates  = 1
	HedgeCandidates = 3
	// A question that names no rule describes it in its own words, and
	// search ranks the rule it means among a few that score alike: the
	// pack hedges, taking more of the best rule hits, at a lower share of
	// the best, and before the question's columns. The sweep on the
	// paraphrased train questions (rule recall, complete, tokens): at 0.65
	// (no hedge) 87.1%, 77.3%, 1,247; 0.5 94.4%, 81.3%, 1,346; 0.4 96.0%,
	// 84.0%, 1,455; 0.3 the same at 1,494. Three rules 94.4%; five 96.8%
	// at 1,540, over the 1,500 a pack may average. Once illustrations of
	// one column's values wait for the rules: the first two
	// before the columns 96.8%, 84.0%, 1,474; three 96.8%, 85.3%, 1,474
	// (written questions 100%, 92.0%, 1,457); four the same at 1,499.
	// Once packs show JSON fields (fieldRows), 0.4 costs 1,503 tokens;
	// 0.45 holds the same rules and complete packs at 1,400 (tables
	// 96.8% → 96.1%, columns 95.4% → 95.0%); 0.5 96.0%, 84.0%, 1,354;
	// five rules at 0.45 the same as four at 1,447.
	DefaultHedgeRules     = 4
	DefaultHedgeRelevance = 0.45
	DefaultHedgeFirst     = 3
)

// Context builds a context pack for a question, within one bundle: the
// rules the question names or most likely needs, with the rules they
// depend on; the schema rows of the columns those rules use and of the
// columns the question itself names; the key columns and bridging tables
// of the joins that connect those tables; a worked example, a verified
// query resembling the question; then manifest rows of the next
// candidates, all within the token budget.
func (ix *Index) Context(question string, o PackOptions) Pack {
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	nRules := o.Rules
	if nRules <= 0 {
		nRules = DefaultPackRules
	}
	minRel := o.MinRelevance
	if minRel <= 0 {
		minRel = DefaultMinRelevance
	}
	nCols, colRel := o.Columns, o.ColumnRelevance
	if nCols <= 0 {
		nCols = DefaultPackColumns
	}
	if colRel <= 0 {
		colRel = DefaultColumnRelevance
	}
	newRel := o.NewTableRelevance
	if newRel <= 0 {
		newRel = DefaultNewTableRelevance
	}
	nExamples := o.Examples
	if nExamples == 0 {
		nExamples = DefaultPackExamples
	}
	// The question is the caller's own: a pack does not repeat it.
	p := &packer{ix: ix, count: o.Count, budget: budget, header: "# Knowledge pack\n", facts: map[int]*okf.TableFacts{}, joins: map[string]joinSet{}}
	bundle := o.Bundle
	if bundle == "" {
		bundle, p.pack.Routing = ix.route(question)
	}
	sel := selection{cols: map[int]map[string]bool{}}
	if bundle == "" {
		return p.finish(sel, nil)
	}
	hits := ix.Search(question, Options{K: 4 * nRules, Bundle: bundle, NoExpand: true, noPos: true, QueryVector: o.QueryVector})

	// First the rules the question names and its best rule hit, each with
	// the rules it depends on and the columns they use; then the columns
	// the question names; then the other rule hits scoring at least
	// MinRelevance of the best, up to Rules in all; then table hits. Each
	// is taken when the whole still fits.
	var rules []int
	named := ix.namedRules(question, bundle)
	rules = append(rules, named...)
	ruleRel, nFirst := minRel, 1
	if len(named) == 0 {
		nRules, ruleRel, nFirst = or(o.HedgeRules, DefaultHedgeRules), orFloat(o.HedgeRelevance, DefaultHedgeRelevance), or(o.HedgeFirst, DefaultHedgeFirst)
	}
	top := 0.0
	var later []int
	for _, h := range hits {
		i := ix.position0(h.Concept)
		if h.Concept.IsTable() || h.Concept.IsQuery() || contains(rules, i) {
			continue
		}
		if top == 0 {
			top = h.Score
		} else if h.Score < ruleRel*top {
			break
		}
		if len(named) == 0 && len(rules) > 0 && h.Concept.Kind == illustrationKind && namesColumn(h.Concept.Title) {
			// A question that names no rule and scores an illustration
			// of one column's values high asks about that column: the
			// best illustration says so, and the rules computing with it
			// are likelier what it means than more illustrations, whose
			// columns' rows say what they say. Paraphrased train
			// questions: 96.0% of rules without the wait, 96.8% with.
			later = append(later, i)
			continue
		}
		rules = append(rules, i)
	}
	rules = append(rules, later...)
	first := min(len(rules), len(named)+nFirst)
	taken := 0
	takeRules := func(rules []int, deps bool) {
		for _, i := range rules {
			if taken == nRules+len(named) {
				return
			}
			if contains(sel.rules, i) {
				continue
			}
			try := sel.clone()
			group, shown := []int{i}, []int(nil)
			if deps {
				group, shown = ix.dependsOn(i)
			}
			for _, j := range group {
				if contains(try.rules, j) {
					continue
				}
				try.rules = append(try.rules, j)
				for t, cs := range ix.columnsUsed(j) {
					try.add(t, cs)
				}
			}
			for _, j := range shown {
				for t, cs := range ix.columnsUsed(j) {
					try.add(t, cs)
				}
			}
			if p.fits(try) {
				sel = try
				taken++
			}
		}
	}
	takeRules(rules[:first], true)

	cols := ix.columnIndex(bundle).match(question)
	// A column that a table of a higher layer also has, and that matched
	// too, is that table's column before it was built: the higher one
	// answers as well, and the pack shows it alone.
	var highest map[string]uint8
	if ix.layers != nil {
		highest = map[string]uint8{}
		for _, c := range cols {
			name, r := strings.ToLower(c.name), ix.layer(c.table)
			if h, ok := highest[name]; !ok || r < h {
				highest[name] = r
			}
		}
	}
	for k, c := range cols {
		if k == nCols || c.score < colRel*cols[0].score {
			break
		}
		if sel.has(c.table, c.name) || len(sel.rules) > 0 && sel.cols[c.table] == nil && c.score < newRel*cols[0].score ||
			highest != nil && ix.layer(c.table) > highest[strings.ToLower(c.name)] {
			continue
		}
		try := sel.clone()
		try.add(c.table, map[string]bool{strings.ToLower(c.name): true})
		if p.fits(try) {
			sel = try
		}
	}

	// The stored spelling of what the question filters on, with its
	// column: the longest phrases first, at most PackValues; in a bundle
	// with layers, not from a table below those the pack already shows,
	// which answer the question as they are.
	shownLayer := uint8(len(layerWeights))
	for t := range sel.cols {
		shownLayer = min(shownLayer, ix.layer(t))
	}
	for _, m := range ix.valueIndex(bundle).match(question) {
		if len(sel.values) == PackValues {
			break
		}
		if ix.layer(m.table) > shownLayer || slices.ContainsFunc(sel.values, func(v valueMatch) bool { return v.storedValue == m.storedValue }) {
			continue
		}
		try := sel.clone()
		try.add(m.table, map[string]bool{strings.ToLower(m.column): true})
		try.values = append(try.values, m)
		if p.fits(try) {
			sel = try
		}
	}

	p.examples = ix.exampleIndex(bundle)
	coverage, exTables := o.ExampleCoverage, o.ExampleTables
	if coverage <= 0 {
		coverage = MinExampleCoverage
	}
	if exTables <= 0 {
		exTables = DefaultExampleTables
	}
	tableSet := map[int]bool{}
	for t := range sel.cols {
		tableSet[t] = true
	}
	for _, e := range p.examples.match(question, coverage, tableSet, exTables) {
		if len(sel.examples) >= nExamples {
			break
		}
		try := sel.clone()
		try.examples = append(try.examples, e)
		if p.fits(try) {
			sel = try
		}
	}

	takeRules(rules[first:], true)

	tablesTaken := 0
	// A table hit of a lower layer than a hit that scored higher answers
	// the question no better than that one: the pack leaves it out.
	layerAbove := uint8(len(layerWeights))
	for _, h := range hits {
		if tablesTaken == PackTables {
			break
		}
		i := ix.position0(h.Concept)
		if !h.Concept.IsTable() {
			continue
		}
		outranked := ix.layer(i) > layerAbove
		layerAbove = min(layerAbove, ix.layer(i))
		if outranked || sel.cols[i] != nil || h.Score < minRel*top {
			continue
		}
		try := sel.clone()
		try.add(i, nil)
		if p.fits(try) {
			sel = try
			tablesTaken++
		}
	}
	if len(named) == 0 {
		// Rules first: the candidates say which rules the pack considered.
		hits = slices.Clone(hits)
		slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(ruleFirst(a), ruleFirst(b)) })
		p.candidates = HedgeCandidates
	}
	return p.finish(sel, hits)
}

// ruleFirst orders rule hits before the others.
func ruleFirst(h Hit) int {
	if h.Concept.IsTable() || h.Concept.IsQuery() {
		return 1
	}
	return 0
}

// selection is what a pack shows: rules, in order, and the columns of each
// table shown (lower case; a table with none shows its key).
type selection struct {
	rules    []int
	cols     map[int]map[string]bool
	examples []int // in the bundle's exampleIndex
	values   []valueMatch
}

func (s selection) clone() selection {
	out := selection{rules: append([]int(nil), s.rules...), cols: make(map[int]map[string]bool, len(s.cols)),
		examples: append([]int(nil), s.examples...), values: append([]valueMatch(nil), s.values...)}
	for t, cs := range s.cols {
		out.cols[t] = make(map[string]bool, len(cs))
		for c := range cs {
			out.cols[t][c] = true
		}
	}
	return out
}

func (s selection) add(table int, cols map[string]bool) {
	if s.cols[table] == nil {
		s.cols[table] = map[string]bool{}
	}
	for c := range cols {
		s.cols[table][c] = true
	}
}

func (s selection) has(table int, col string) bool { return s.cols[table][strings.ToLower(col)] }

// layout is a selection rendered: the pieces of its text in order, and the
// refs of the tables and columns it shows.
type layout struct {
	pieces          []piece
	tables, columns []string
}

// piece is a part of a pack's text and its token count.
type piece struct {
	text   string
	tokens int
}

// layout renders a selection: its rules, then the schema rows of its
// columns and of the key columns of the joins that connect its tables,
// then those joins.
func (p *packer) layout(sel selection) layout {
	ix := p.ix
	var l layout
	if len(sel.rules) > 0 {
		l.pieces = append(l.pieces, p.piece("\n## Rules\n"))
		for _, j := range sel.rules {
			l.pieces = append(l.pieces, p.rule(j))
		}
	}
	cols := sel.clone().cols
	joins, listed := p.connect(sortedKeys(cols))
	for _, j := range joins {
		for _, end := range []struct {
			t    int
			cols []string
		}{{j.from, j.fromCols}, {j.to, j.toCols}} {
			if cols[end.t] == nil {
				cols[end.t] = map[string]bool{}
			}
			for _, c := range end.cols {
				cols[end.t][c] = true
			}
		}
	}
	if len(cols) > 0 {
		l.pieces = append(l.pieces, p.piece("\n## Columns\n"))
		for _, t := range sortedKeys(cols) {
			r := ref(&ix.snap.Concepts[t])
			l.tables = append(l.tables, r)
			for _, n := range p.schemaRows(t, cols[t], sel.cols[t], listed[t], &l.pieces) {
				l.columns = append(l.columns, r+"."+n)
			}
		}
	}
	if len(sel.values) > 0 {
		l.pieces = append(l.pieces, p.piece("\n## Stored values the question names\n"))
		for _, m := range sel.values {
			l.pieces = append(l.pieces, p.piece(ix.valueLine(m)))
		}
	}
	if len(joins) > 0 {
		l.pieces = append(l.pieces, p.piece("\n## Joins\n"))
		for _, j := range joins {
			l.pieces = append(l.pieces, p.piece("* "+ix.joinText(j)+"\n"))
		}
	}
	if len(sel.examples) > 0 {
		l.pieces = append(l.pieces, p.piece("\n## Worked example: SQL that answers a question like this one\n"))
		for _, e := range sel.examples {
			l.pieces = append(l.pieces, p.piece(ix.exampleText(p.examples.examples[e])))
		}
	}
	return l
}

// packer keeps a pack within its budget. Pieces of text are counted once
// and their counts summed: a pack tries many selections, and counting
// tokens is most of a pack's cost. The pack's own count is exact.
type packer struct {
	ix     *Index
	count  func(string) int
	budget int
	header string
	pack   Pack
	// A pack lays out many selections of the same few tables: their facts
	// are decoded, and the joins between them found, once a pack.
	facts map[int]*okf.TableFacts
	joins map[string]joinSet // by the tables' indexes, sorted
	// examples are the worked examples of the pack's bundle.
	examples *exampleIndex
	// candidates is how many candidates the pack lists, when more than
	// PackCandidates.
	candidates int
}

type rowKey struct {
	table   int
	column  string
	meaning bool
	// listed names the tables whose key from this column the pack lists
	// as a join, which the row then leaves out.
	listed string
}

// listedKey keys a foreign key from a column to a table.
func listedKey(column, table string) string {
	return strings.ToLower(column) + ">" + strings.ToLower(table)
}

// joinSet is the joins that connect a set of tables, and the key columns
// whose joins they list, by referencing table: such a column's row does
// not repeat its key.
type joinSet struct {
	joins  []join
	listed map[int]map[string]bool
}

// connect returns the joinSet of tables. Most selections a pack tries add
// a column to a table it already shows, so the sets are kept per pack.
func (p *packer) connect(tables []int) ([]join, map[int]map[string]bool) {
	key := fmt.Sprint(tables)
	if js, ok := p.joins[key]; ok {
		return js.joins, js.listed
	}
	ix := p.ix
	joins := ix.joinGraph().connect(tables)
	listed := map[int]map[string]bool{}
	for _, j := range joins {
		from, fromCols, to := j.from, j.fromCols, j.to
		if j.reversed {
			from, fromCols, to = j.to, j.toCols, j.from
		}
		if listed[from] == nil {
			listed[from] = map[string]bool{}
		}
		for _, c := range fromCols {
			listed[from][listedKey(c, tableName(&ix.snap.Concepts[to]))] = true
		}
	}
	p.joins[key] = joinSet{joins, listed}
	return joins, listed
}

// piece counts a text of a pack, from the index's cache when it was
// counted before. Only texts the snapshot makes (headers, joins, candidate
// rows) come here, so the cache is bounded by the snapshot; rules and
// schema rows have caches of their own, keyed without hashing their text.
func (p *packer) piece(text string) piece {
	if n, ok := p.ix.packs.tokens.Load(text); ok {
		return piece{text, n.(int)}
	}
	n := p.count(text)
	p.ix.packs.tokens.Store(text, n)
	return piece{text, n}
}

// rule is a rule's text, counted once an index.
func (p *packer) rule(i int) piece {
	if r, ok := p.ix.packs.rules.Load(i); ok {
		return r.(piece)
	}
	text := p.ix.ruleText(i)
	r := piece{text, p.count(text)}
	p.ix.packs.rules.Store(i, r)
	return r
}

func (p *packer) cost(pieces []piece) int {
	n := 0
	for i, s := range pieces {
		n += s.tokens
		// A piece that opens with a blank line after one that ends a line:
		// a tokenizer may read the two newlines as one token (o200k does).
		if i > 0 && strings.HasPrefix(s.text, "\n") && strings.HasSuffix(pieces[i-1].text, "\n") {
			n += p.piece("\n\n").tokens - 2*p.piece("\n").tokens
		}
	}
	return n
}

// fits reports whether a selection fits the budget.
func (p *packer) fits(sel selection) bool {
	return p.cost(append([]piece{p.piece(p.header)}, p.layout(sel).pieces...)) <= p.budget
}

// finish renders the selection and lists the next candidates while the
// budget and PackCandidates allow.
func (p *packer) finish(sel selection, hits []Hit) Pack {
	l := p.layout(sel)
	pieces := append([]piece{p.piece(p.header)}, l.pieces...)
	used := p.cost(pieces)
	shown := map[int]bool{}
	for _, j := range sel.rules {
		shown[j] = true
		p.pack.Rules = append(p.pack.Rules, ref(&p.ix.snap.Concepts[j]))
	}
	for _, t := range l.tables {
		if i, err := p.ix.snap.Lookup(t); err == nil {
			shown[i] = true
		}
	}
	p.pack.Tables, p.pack.Columns = l.tables, l.columns
	for _, m := range sel.values {
		p.pack.Values = append(p.pack.Values, p.ix.valueRef(m))
	}
	for _, e := range sel.examples {
		c := &p.ix.snap.Concepts[p.examples.examples[e].concept]
		shown[p.examples.examples[e].concept] = true
		p.pack.Examples = appendNewRef(p.pack.Examples, ref(c))
	}
	for _, h := range hits {
		if n := len(p.pack.Candidates); n == max(p.candidates, PackCandidates) || n >= PackCandidates && ruleFirst(h) > 0 {
			break
		}
		i := p.ix.position0(h.Concept)
		if shown[i] {
			continue
		}
		line := readmodel.IDCell(h.Concept.ID) + "\t" + h.Concept.Bundle + "\t" + h.Concept.Kind + "\t" + h.Concept.Summary + "\n"
		if len(p.pack.Candidates) == 0 {
			line = "\n## More candidates (id, bundle, kind, summary): read with get\n" + line
		}
		if n := p.cost(append(pieces, p.piece(line))); n <= p.budget {
			pieces, used = append(pieces, p.piece(line)), n
		} else {
			break
		}
		shown[i] = true
		p.pack.Candidates = append(p.pack.Candidates, ref(h.Concept))
	}
	var text strings.Builder
	for _, s := range pieces {
		text.WriteString(s.text)
	}
	p.pack.Text = text.String()
	p.pack.Tokens = used
	return p.pack
}

// or is n, or def when n is 0.
func or(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// orFloat is x, or def when x is 0.
func orFloat(x, def float64) float64 {
	if x == 0 {
		return def
	}
	return x
}

// tableName is the last segment of a table concept's id.
func tableName(c *readmodel.Concept) string {
	return c.ID[strings.LastIndexByte(c.ID, '/')+1:]
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ruleText renders a rule: its title and id, then its definition.
func (ix *Index) ruleText(i int) string {
	s := ix.snap
	c := &s.Concepts[i]
	body := string(s.Body(c))
	def := body
	for _, slug := range []string{"definition", "computation", "body"} {
		if sec, ok := c.Section(slug); ok {
			def = body[sec.Start:sec.End]
			break
		}
	}
	def = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(def), "# Definition"))
	return fmt.Sprintf("\n### %s (%s)%s\n%s\n", c.Title, readmodel.IDCell(c.ID), alsoCalled(c), def)
}

// alsoCalled is a rule heading's note of the rule's aliases, which the
// question may have used for it; "" when it has none. A table's are left
// to search: a pack shows many tables, each a heading.
func alsoCalled(c *readmodel.Concept) string {
	if len(c.Aliases) == 0 {
		return ""
	}
	return ", also called " + strings.Join(c.Aliases, "; ")
}

func ref(c *readmodel.Concept) string { return c.Bundle + "/" + c.ID }

func appendNewRef(refs []string, r string) []string {
	for _, x := range refs {
		if x == r {
			return refs
		}
	}
	return append(refs, r)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// position0 returns a concept's position in the snapshot.
func (ix *Index) position0(c *readmodel.Concept) int {
	i, _ := ix.snap.LookupIn(c.Bundle, c.ID)
	return i
}

// namedRules returns the rules of a bundle that the question names: their
// title's words in order, or their abbreviation as the title writes it
// (see Index.naming), in snapshot order.
func (ix *Index) namedRules(question, bundle string) []int {
	sp, ok := ix.span(bundle)
	if !ok {
		return nil
	}
	_, named := ix.naming(question, sp.lo, sp.hi)
	out := make([]int, 0, len(named))
	for _, d := range named {
		if c := &ix.snap.Concepts[d]; !c.IsTable() && !c.IsQuery() {
			out = append(out, int(d))
		}
	}
	return out
}

// singular drops a plural "s" for comparing words: "customers" and
// "customer" compare equal; "status" and "class" are left alone.
func singular(t string) string {
	if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") {
		return t[:len(t)-1]
	}
	return t
}

// illustrationKind is the kind of a "Value Illustration" concept.
const illustrationKind = "value_illustration"

// namesColumn reports whether an illustration's title is a column's name
// ("PollRateHz (Polling Rate)", "DataFlow.SuccessPct"): one identifier
// before any gloss in parentheses, where a concept's title is words.
func namesColumn(title string) bool {
	name, _, _ := strings.Cut(title, " (")
	return name != "" && !strings.ContainsAny(strings.TrimSpace(name), " \t")
}

// dependsOn returns a rule followed by the rules it depends on, depth
// first, each once, as its facts list them, and apart the illustrations of
// a column's values they depend on, whose columns the pack shows instead.
func (ix *Index) dependsOn(i int) (rules, columns []int) {
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(j int) {
		if seen[j] {
			return
		}
		seen[j] = true
		out = append(out, j)
		c := &ix.snap.Concepts[j]
		rule := c.Rule()
		if rule == nil {
			return
		}
		for _, id := range rule.DependsOn {
			if d, ok := ix.snap.LookupIn(c.Bundle, id); ok && !ix.snap.Concepts[d].IsTable() {
				if dc := &ix.snap.Concepts[d]; dc.Kind == illustrationKind && namesColumn(dc.Title) {
					// An illustration of a column's values says what the
					// column's row already shows: a rule that depends on
					// it needs the row, not the illustration. One of a
					// concept of its own ("Sensitivity Weight Values") it
					// needs whole.
					if !contains(columns, d) {
						columns = append(columns, d)
					}
					continue
				}
				walk(d)
			}
		}
	}
	walk(i)
	return out, columns
}

// columnsUsed returns the columns a rule uses: table → lower-case columns.
func (ix *Index) columnsUsed(i int) map[int]map[string]bool {
	out := map[int]map[string]bool{}
	c := &ix.snap.Concepts[i]
	rule := c.Rule()
	if rule == nil {
		return out
	}
	for _, u := range rule.Uses {
		t, ok := ix.snap.LookupIn(c.Bundle, u.Concept)
		if !ok || !ix.snap.Concepts[t].IsTable() {
			continue
		}
		if out[t] == nil {
			out[t] = map[string]bool{}
		}
		for _, col := range u.Columns {
			col = strings.ToLower(col)
			out[t][col] = true
			if !slices.ContainsFunc(u.Paths, func(p string) bool { return strings.HasPrefix(strings.ToLower(p), col+".") }) {
				out[t][col+wholeColumn] = true
			}
		}
		for _, p := range u.Paths {
			out[t][strings.ToLower(p)] = true
		}
	}
	return out
}

// wholeColumn, after a column's name among a selection's columns, marks a
// column a rule uses whole: a JSON column whose paths it does not name,
// where any of its documented fields may be what it reads.
const wholeColumn = ".*"

// schemaRows appends to pieces a table's schema header and the rows of
// the columns in cols and of its key columns, as okf compile writes them,
// and returns the names of the columns shown. Only the rows of the columns
// asked for have their meaning: a key column shown for a join says what it
// is in its Key cell.
func (p *packer) schemaRows(t int, cols, asked, listed map[string]bool, pieces *[]piece) []string {
	ix := p.ix
	c := &ix.snap.Concepts[t]
	// The key's columns are rows of their own, marked primary key.
	*pieces = append(*pieces, p.piece("\n### "+tableName(c)+"\n"))
	facts := p.facts[t]
	if facts == nil {
		facts = c.Table()
		p.facts[t] = facts
	}
	var names []string
	for _, col := range facts.Columns {
		key := containsFold(facts.PrimaryKey, col.Name)
		if !cols[strings.ToLower(col.Name)] && !key {
			continue
		}
		// A JSON column's fields say what it holds: its row then says
		// no more than its name and type.
		fields := p.fieldRows(t, c, facts, col.Name, cols)
		k := rowKey{table: t, column: col.Name, meaning: asked[strings.ToLower(col.Name)] && len(fields) == 0}
		for _, fk := range facts.ForeignKeys {
			if containsFold(fk.Columns, col.Name) && listed[listedKey(col.Name, fk.Table)] {
				k.listed += fk.Table + " "
			}
		}
		var row piece
		if r, ok := ix.packs.rows.Load(k); ok {
			row = r.(piece)
		} else {
			text := ix.schemaRow(c, facts, col, key, k.meaning, listed) + "\n"
			row = piece{text, p.count(text)}
			ix.packs.rows.Store(k, row)
		}
		*pieces = append(append(*pieces, row), fields...)
		names = append(names, col.Name)
	}
	return names
}

// fieldRows returns the rows of the documented JSON fields of a column
// that a selection uses: the paths its rules name, or every field of a
// column a rule uses whole. A JSON column's row alone says nothing of the
// keys a query must write, nor of the values stored under them.
func (p *packer) fieldRows(t int, c *readmodel.Concept, facts *okf.TableFacts, column string, cols map[string]bool) []piece {
	var rows []piece
	whole, asked := false, false
	for _, f := range facts.Fields {
		if len(f.Path) <= len(column) || f.Path[len(column)] != '.' || !strings.EqualFold(f.Path[:len(column)], column) {
			continue
		}
		if !asked {
			// Packs lay out many selections: the key is built once a
			// column, and only for a column that has fields.
			whole, asked = cols[strings.ToLower(column)+wholeColumn], true
		}
		if !whole && !cols[strings.ToLower(f.Path)] {
			continue
		}
		k := rowKey{table: t, column: f.Path, meaning: true}
		if r, ok := p.ix.packs.rows.Load(k); ok {
			rows = append(rows, r.(piece))
			continue
		}
		// Under its column's row, a field is its path inside the column.
		text := "  - " + code(f.Path[len(column)+1:])
		if m := trimMeaning(p.ix.snap.Text(c, f.Meaning)); m != "" {
			text += ": " + m
		}
		text += "\n"
		row := piece{text, p.count(text)}
		p.ix.packs.rows.Store(k, row)
		rows = append(rows, row)
	}
	return rows
}

// schemaRow renders a column's row: its name, type (with "not null" when
// it is not a key column; "not null" alone when the type is unknown), keys
// (but those listed as joins) and, when meaning is set, meaning.
func (ix *Index) schemaRow(c *readmodel.Concept, facts *okf.TableFacts, col okf.Column, key, meaning bool, listed map[string]bool) string {
	typ := ix.snap.Text(c, col.Type)
	if short, ok := shortTypes.Get()[strings.ToLower(typ)]; ok {
		typ = short
	}
	// What the row says of the column: its type, when known, "not null", and
	// its keys.
	var says []string
	if typ != "" {
		says = append(says, typ)
	}
	if col.NotNull && !key {
		says = append(says, "not null")
	}
	if key {
		says = append(says, "primary key")
	}
	for _, fk := range facts.ForeignKeys {
		for i, fc := range fk.Columns {
			if strings.EqualFold(fc, col.Name) && !listed[listedKey(fc, fk.Table)] {
				says = append(says, "references "+fk.Table+"."+fk.RefColumns[i])
			}
		}
	}
	m := ""
	if meaning {
		m = trimMeaning(ix.snap.Text(c, col.Meaning))
	}
	row := "- " + code(col.Name)
	if len(says) > 0 {
		row += " " + strings.Join(says, ", ")
	}
	if m != "" {
		row += ": " + m
	}
	return row
}

// shortTypes are shorter names of PostgreSQL's long type names, which
// information_schema spells out and SQL accepts either way.
var shortTypes = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"character varying":           "varchar",
		"character":                   "char",
		"timestamp without time zone": "timestamp",
		"timestamp with time zone":    "timestamptz",
		"time without time zone":      "time",
		"user-defined":                "user-defined",
	}
}}

// storedAs matches a meaning that opens by restating the column's type ("A
// NUMERIC(4,1) measuring ...", "VARCHAR(50) describing ...", "An enum
// (status_enum) indicating ..."): the row says it already.
var storedAs = lazy.Regexp{Expr: `^(?:(?:An?|The) )?(?:(?:ENUM|VARCHAR|CHAR|TEXT|SMALLINT|INTEGER|INT|BIGINT|NUMERIC|DECIMAL|REAL|FLOAT|DOUBLE PRECISION|BOOLEAN|DATE|TIMESTAMP|TIMESTAMPTZ|JSONB|JSON|UUID|SERIAL|BIGSERIAL)(?:\([0-9, ]*\))?|enum \([A-Za-z0-9_]+\))(?: (?:field|column|value)\.?)? `}

// keyedAs matches a meaning that opens by restating the column's key
// ("PRIMARY KEY identifying ...", "FOREIGN KEY referencing sites(zoneid), ..."),
// which the row shows from the facts.
var keyedAs = lazy.Regexp{Expr: `^(?:PRIMARY KEY |(?:FOREIGN KEY )?(?i:referenc(?:es|ing)) [A-Za-z0-9_."]+\([A-Za-z0-9_, "]*\)[,:]? )`}

// restated matches what a meaning says elsewhere that the row or the
// column's name already says: its data type as a labelled sentence, and
// the name the column was renamed from.
var restated = lazy.Regexp{Expr: ` ?Data type: [A-Za-z ]+(?:\([0-9, ]*\))?\.| ?\(was '[^']*'\)`}

// labelled matches a meaning written as labelled fields, "Full name: 'Site
// Code'. Explanation: ...", whose labels a pack drops: "Site Code: ...".
var labelled = lazy.Regexp{Expr: `^Full name: '([^']*)'\. Explanation: `}

// trimMeaning drops from a meaning what the row already says (the type,
// the key) and the labels of labelled fields: a pack shows many rows, and
// the rows' meanings are most of its columns' tokens.
func trimMeaning(m string) string {
	// Each pattern is tried only where it could match: the regular
	// expressions are most of the cost, and most meanings match none.
	if strings.HasPrefix(m, "Full name: ") {
		m = labelled.Get().ReplaceAllString(m, "$1: ")
	}
	if strings.Contains(m, "Data type: ") || strings.Contains(m, "(was '") {
		m = restated.Get().ReplaceAllString(m, "")
	}
	for _, re := range []*regexp.Regexp{storedAs.Get(), keyedAs.Get()} {
		if m == "" || !(m[0] >= 'A' && m[0] <= 'Z' || m[0] == 'e' || m[0] == 'r') {
			break
		}
		if loc := re.FindStringIndex(m); loc != nil && loc[1] < len(m) {
			m = m[loc[1]:]
		}
	}
	return m
}

// code wraps a name in a code span that survives backticks in the name.
func code(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return "`` " + s + " ``"
}

// cell escapes the pipes of a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func containsFold(xs []string, x string) bool {
	for _, y := range xs {
		if strings.EqualFold(y, x) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[int]map[string]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
