package search

import (
	"fmt"
	"sort"
	"strings"

	"github.com/okf-tools/okf/readmodel"
)

// DefaultBudget is the token budget of a context pack when none is given.
const DefaultBudget = 2000

// PackOptions shape a context pack.
type PackOptions struct {
	// Budget is the most tokens the pack may cost; 0 means DefaultBudget.
	Budget int
	// Bundle limits the pack to one bundle.
	Bundle string
	// Count counts the tokens of a text. Required.
	Count func(string) int
	// Rules is how many rule hits to take; 0 means DefaultPackRules.
	Rules int
	// MinRelevance is the share of the best rule hit's score below which a
	// rule hit is not worth its tokens; 0 means DefaultMinRelevance.
	MinRelevance float64
}

// Pack is the knowledge a question most likely needs, in one text.
type Pack struct {
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	// Rules are the refs (bundle/id) of the rules whose definitions the
	// pack holds, in the order they appear.
	Rules []string `json:"rules"`
	// Tables are the refs of the tables whose schema rows it holds.
	Tables []string `json:"tables"`
	// Candidates are the refs of the concepts listed only by manifest row.
	Candidates []string `json:"candidates"`
}

// Context builds a context pack: the rules the question most likely needs
// with the rules they depend on, only the schema rows of the columns those
// rules use plus the join path between their tables, then manifest rows of
// the next candidates, all within the token budget.
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
	s := ix.snap
	hits := ix.Search(question, Options{K: 4 * nRules, Bundle: o.Bundle, NoExpand: true})

	p := &packer{ix: ix, count: o.Count, budget: budget, used: map[int]bool{}}
	p.add(fmt.Sprintf("# Knowledge for: %s\n", oneLine(question)))

	// Take the rules the question names, then rule hits best first, each
	// with the rules it depends on and the schema rows and joins they need,
	// while the whole still fits and a hit scores at least MinRelevance of
	// the best.
	var rules []int
	cols := map[int]map[string]bool{}
	body := ""
	taken, top := 0, 0.0
	type candidate struct {
		i     int
		score float64
		named bool
	}
	var cands []candidate
	for _, i := range ix.namedRules(question, o.Bundle) {
		cands = append(cands, candidate{i: i, named: true})
	}
	for _, h := range hits {
		cands = append(cands, candidate{i: ix.position0(h.Concept), score: h.Score})
	}
	for _, cand := range cands {
		if taken == nRules {
			break
		}
		i := cand.i
		if s.Concepts[i].IsTable() || contains(rules, i) {
			continue
		}
		if !cand.named {
			if top == 0 {
				top = cand.score
			} else if cand.score < minRel*top {
				break
			}
		}
		var group []int
		for _, j := range ix.dependsOn(i) {
			if !contains(rules, j) {
				group = append(group, j)
			}
		}
		tryCols := copyCols(cols)
		for _, j := range group {
			for t, cs := range ix.columnsUsed(j) {
				if tryCols[t] == nil {
					tryCols[t] = map[string]bool{}
				}
				for c := range cs {
					tryCols[t][c] = true
				}
			}
		}
		tryRules := append(append([]int(nil), rules...), group...)
		text, tables := ix.renderPack(tryRules, tryCols)
		if !p.fits(text, 0) {
			continue
		}
		rules, cols, body = tryRules, tryCols, text
		p.pack.Tables = tables
		taken++
	}
	// Tables the question itself points at, with their keys and joins.
	tablesTaken := 0
	for _, h := range hits {
		if tablesTaken == PackTables {
			break
		}
		i := ix.position0(h.Concept)
		if !h.Concept.IsTable() || cols[i] != nil || h.Score < minRel*top {
			continue
		}
		tryCols := copyCols(cols)
		tryCols[i] = map[string]bool{}
		text, tables := ix.renderPack(rules, tryCols)
		if !p.fits(text, 0) {
			continue
		}
		cols, body = tryCols, text
		p.pack.Tables = tables
		tablesTaken++
	}
	p.add(body)
	for _, j := range rules {
		p.used[j] = true
		p.pack.Rules = append(p.pack.Rules, ref(&s.Concepts[j]))
	}
	for _, t := range p.pack.Tables {
		if i, err := s.Lookup(t); err == nil {
			p.used[i] = true
		}
	}

	// The next candidates, as manifest rows, while the budget lasts.
	first := true
	for _, h := range hits {
		i := ix.position0(h.Concept)
		if p.used[i] {
			continue
		}
		line := readmodel.IDCell(h.Concept.ID) + "\t" + h.Concept.Bundle + "\t" + h.Concept.Kind + "\t" + h.Concept.Summary + "\n"
		if first {
			line = "\n## More candidates (id, bundle, kind, summary): read with get\n" + line
		}
		if !p.fits(line, 0) {
			break
		}
		first = false
		p.add(line)
		p.used[i] = true
		p.pack.Candidates = append(p.pack.Candidates, ref(h.Concept))
	}
	p.pack.Text = p.text.String()
	p.pack.Tokens = p.tokens
	return p.pack
}

// Pack defaults, set by the sweeps recorded in BENCHMARKS.md.
const (
	DefaultPackRules    = 6
	DefaultMinRelevance = 0.35
	// PackTables is how many table hits a pack adds beyond the tables its
	// rules use.
	PackTables = 2
)

// renderPack renders rules, then the schema rows of the columns they use
// and the joins that connect their tables. It returns the text and the refs
// of the tables shown.
func (ix *Index) renderPack(rules []int, cols map[int]map[string]bool) (string, []string) {
	s := ix.snap
	var text strings.Builder
	if len(rules) > 0 {
		text.WriteString("\n## Rules\n")
		for _, j := range rules {
			text.WriteString(ix.ruleText(j))
		}
	}
	cols = copyCols(cols)
	tables := sortedKeys(cols)
	joins := ix.joinPath(tables)
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
	tables = sortedKeys(cols)
	var refs []string
	if len(tables) > 0 {
		text.WriteString("\n## Columns\n")
		for _, t := range tables {
			text.WriteString(ix.schemaRows(t, cols[t]))
			refs = append(refs, ref(&s.Concepts[t]))
		}
	}
	if len(joins) > 0 {
		text.WriteString("\n## Joins\n")
		for _, j := range joins {
			fmt.Fprintf(&text, "* %s\n", ix.joinText(j))
		}
	}
	return text.String(), refs
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

func copyCols(m map[int]map[string]bool) map[int]map[string]bool {
	out := make(map[int]map[string]bool, len(m))
	for t, cs := range m {
		out[t] = make(map[string]bool, len(cs))
		for c := range cs {
			out[t][c] = true
		}
	}
	return out
}

type packer struct {
	ix     *Index
	count  func(string) int
	budget int
	tokens int
	text   strings.Builder
	pack   Pack
	used   map[int]bool
}

// fits reports whether text fits with reserve tokens left over.
func (p *packer) fits(text string, reserve int) bool {
	return p.tokens+p.count(text)+reserve <= p.budget
}

func (p *packer) add(text string) {
	p.text.WriteString(text)
	p.tokens += p.count(text)
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
	return fmt.Sprintf("\n### %s (%s)\n%s\n", c.Title, readmodel.IDCell(c.ID), def)
}

func ref(c *readmodel.Concept) string { return c.Bundle + "/" + c.ID }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// position0 returns a concept's position in the snapshot.
func (ix *Index) position0(c *readmodel.Concept) int {
	i, _ := ix.snap.LookupIn(c.Bundle, c.ID)
	return i
}

// namedRules returns the rules whose title the question spells out, in
// full or by the abbreviation in its brackets ("Resource Utilization Ratio
// (RUR)"), longest title first. A question that names a rule needs it
// however little else of the rule's text it shares. Plurals match singulars
// ("active customers" names "Active Customer").
func (ix *Index) namedRules(question, bundle string) []int {
	ix.titleOnce.Do(func() {
		ix.titleWords = make([][2][]string, len(ix.snap.Concepts))
		for i := range ix.snap.Concepts {
			c := &ix.snap.Concepts[i]
			if c.IsTable() {
				continue
			}
			name, abbr, _ := strings.Cut(c.Title, "(")
			ix.titleWords[i] = [2][]string{nameWords(name), nameWords(abbr)}
		}
	})
	q := map[string]bool{}
	for _, t := range Tokens(question) {
		q[singular(t)] = true
	}
	type named struct{ i, words int }
	var out []named
	for i, forms := range ix.titleWords {
		if bundle != "" && ix.snap.Concepts[i].Bundle != bundle {
			continue
		}
		for _, words := range forms {
			if len(words) > 0 && allIn(words, q) {
				out = append(out, named{i, len(words)})
				break
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].words > out[b].words })
	idx := make([]int, len(out))
	for k, n := range out {
		idx[k] = n.i
	}
	return idx
}

// nameWords returns the words of a title that name something: singular,
// without framing words.
func nameWords(title string) []string {
	var out []string
	for _, t := range Tokens(title) {
		if !questionWords[t] {
			out = append(out, singular(t))
		}
	}
	return out
}

func allIn(words []string, set map[string]bool) bool {
	for _, w := range words {
		if !set[w] {
			return false
		}
	}
	return true
}

// singular drops a plural "s" for comparing words: "customers" and
// "customer" compare equal; "status" and "class" are left alone.
func singular(t string) string {
	if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") {
		return t[:len(t)-1]
	}
	return t
}

// dependsOn returns a rule followed by the rules it depends on, depth
// first, each once, as its facts list them.
func (ix *Index) dependsOn(i int) []int {
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
				walk(d)
			}
		}
	}
	walk(i)
	return out
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
			out[t][strings.ToLower(col)] = true
		}
	}
	return out
}

// schemaRows renders a table's schema header and the rows of the columns
// in cols and of its key columns, as okf compile writes them.
func (ix *Index) schemaRows(t int, cols map[string]bool) string {
	c := &ix.snap.Concepts[t]
	grain := ""
	if c.Grain != "-" {
		grain = " (key " + c.Grain + ")"
	}
	out := fmt.Sprintf("\n### %s%s\n", tableName(c), grain)
	facts := c.Table()
	var rows []string
	for _, col := range facts.Columns {
		key := containsFold(facts.PrimaryKey, col.Name)
		if cols[strings.ToLower(col.Name)] || key {
			rows = append(rows, ix.schemaRow(c, facts, col, key))
		}
	}
	if len(rows) == 0 {
		return out
	}
	return out + "| Column | Type | Key | Meaning |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
}

// schemaRow renders a column's row: its name, type (with "not null" when
// it is not a key column), key and meaning.
func (ix *Index) schemaRow(c *readmodel.Concept, facts *readmodel.TableFacts, col readmodel.Column, key bool) string {
	typ := ix.snap.Text(c, col.Type)
	if col.NotNull && !key {
		typ += ", not null"
	}
	var keys []string
	if key {
		keys = append(keys, "primary key")
	}
	for _, fk := range facts.ForeignKeys {
		for i, fc := range fk.Columns {
			if strings.EqualFold(fc, col.Name) {
				keys = append(keys, "references "+fk.Table+"."+fk.RefColumns[i])
			}
		}
	}
	return fmt.Sprintf("| %s | %s | %s | %s |", code(col.Name), cell(typ), cell(strings.Join(keys, ", ")), cell(ix.snap.Text(c, col.Meaning)))
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

// join is one foreign key: from.fromCols reference to.toCols, or the other
// way round when reversed (an edge walked against its direction). Columns
// are lower case.
type join struct {
	from, to         int
	fromCols, toCols []string
	reversed         bool
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

// joins returns the foreign keys of a table that reach a concept of its
// bundle, resolved for every concept on the first call, since a context
// pack walks them all.
func (ix *Index) joins(t int) []join {
	ix.fkOnce.Do(func() {
		ix.fk = make([][]join, len(ix.snap.Concepts))
		for i := range ix.snap.Concepts {
			c := &ix.snap.Concepts[i]
			facts := c.Table()
			if facts == nil {
				continue
			}
			for _, fk := range facts.ForeignKeys {
				if to, ok := ix.snap.LookupIn(c.Bundle, fk.Concept); ok {
					ix.fk[i] = append(ix.fk[i], join{from: i, to: to, fromCols: lower(fk.Columns), toCols: lower(fk.RefColumns)})
				}
			}
		}
	})
	return ix.fk[t]
}

func lower(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	return out
}

// joinPath returns foreign keys that connect the given tables: starting
// from the first, it repeatedly adds the shortest path (breadth first over
// the foreign-key graph of their bundle) to the nearest table not yet
// connected. Tables no path reaches stay unconnected.
func (ix *Index) joinPath(tables []int) []join {
	if len(tables) < 2 {
		return nil
	}
	adj := map[int][]join{}
	bundle := ix.snap.Concepts[tables[0]].Bundle
	for i := range ix.snap.Concepts {
		if ix.snap.Concepts[i].Bundle != bundle {
			continue
		}
		for _, j := range ix.joins(i) {
			adj[j.from] = append(adj[j.from], j)
			adj[j.to] = append(adj[j.to], join{from: j.to, to: j.from, fromCols: j.toCols, toCols: j.fromCols, reversed: true})
		}
	}
	connected := map[int]bool{tables[0]: true}
	want := map[int]bool{}
	for _, t := range tables[1:] {
		want[t] = true
	}
	var out []join
	for len(want) > 0 {
		// Breadth first from every connected table at once.
		prev := map[int]join{}
		seen := map[int]bool{}
		var queue []int
		for _, t := range sortedSet(connected) {
			seen[t] = true
			queue = append(queue, t)
		}
		found := -1
		for len(queue) > 0 && found < 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, j := range adj[cur] {
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
	return out
}

func sortedKeys(m map[int]map[string]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sortedSet(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
