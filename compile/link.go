package compile

import (
	"fmt"
	"github.com/okf-tools/okf/internal/identwords"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// A use is one column of one table that a rule names.
type use struct {
	table  *Table
	column *Column
	// paths are the JSON key paths below the column the rule names.
	paths []string
}

// links is what the linker found for every rule.
type links struct {
	// direct maps a rule id to the columns its own text names, per table.
	direct map[int][]*use
	// explains maps a value illustration's id to the column its name is
	// (or the columns, all of one table, its name abbreviates).
	explains map[int][]*use
	// uses maps a rule id to the rules it builds on: its children and the
	// rules whose names or abbreviations its text spells, sorted by id.
	uses map[int][]int
	// reach maps a rule id to the tables it reaches through the rules it
	// uses (transitively), each with the columns those rules name.
	reach map[int]map[*Table]*reached
	// usedBy is the reverse of uses.
	usedBy map[int][]int
}

// reached is a table a rule reaches through other rules.
type reached struct {
	columns []*Column
	// via are the used rules, among the rule's own, that lead here.
	via []int
}

// linker resolves the text of rules against the database.
type linker struct {
	db      *Database
	gaps    *Gaps
	columns map[string][]*use // lower column name → its tables
	// leaves maps lower JSON leaf keys (and their documented former
	// names) to the columns holding them.
	leaves map[string][]*use
	// symbols maps abbreviations a column's meaning introduces in
	// brackets, "open-circuit voltage (Voc)", case-sensitively, to the
	// columns of the one table that uses them.
	symbols map[string][]*use
	// formers are the documented former names of columns and JSON keys,
	// split into words.
	formers []former
	// keys are the distinct ways rules are mentioned, longest first; an
	// abbreviation matches case-sensitively, a full name in lower case.
	keys   []nameKey
	owners map[nameKey][]int
}

type former struct {
	words []string
	use   *use
}

type nameKey struct {
	text   string
	abbrev bool
}

// ruleName is one way a rule can be mentioned.
type ruleName struct {
	text   string
	rule   int
	abbrev bool // matched case-sensitively; full names ignore case
}

func newLinker(db *Database, gaps *Gaps) *linker {
	l := &linker{db: db, gaps: gaps, columns: map[string][]*use{}, leaves: map[string][]*use{}, symbols: map[string][]*use{}}
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			k := strings.ToLower(c.Name)
			l.columns[k] = append(l.columns[k], &use{table: t, column: c})
			for _, sym := range symbols(c.Meaning) {
				l.symbols[sym] = append(l.symbols[sym], &use{table: t, column: c})
			}
			for _, alias := range formerNames(c.Meaning) {
				u := &use{table: t, column: c}
				l.formers = append(l.formers, former{identwords.Split(alias), u})
				if a := strings.ToLower(alias); a != k {
					l.columns[a] = append(l.columns[a], u)
				}
			}
			for _, f := range c.JSONFields {
				leaf := strings.ToLower(f.Path[strings.LastIndexByte(f.Path, '.')+1:])
				l.leaves[leaf] = append(l.leaves[leaf], &use{table: t, column: c, paths: []string{f.Path}})
				for _, alias := range formerNames(f.Meaning) {
					u := &use{table: t, column: c, paths: []string{f.Path}}
					l.formers = append(l.formers, former{identwords.Split(alias), u})
					a := strings.ToLower(alias)
					l.leaves[a] = append(l.leaves[a], u)
				}
			}
		}
	}
	for sym, uses := range l.symbols {
		if !oneTable(uses) {
			delete(l.symbols, sym) // a unit such as "(GB)", not a name
		}
	}
	var names []ruleName
	for _, r := range db.Rules {
		full, inner := splitName(r.Name)
		switch {
		case len(strings.Fields(full)) >= 2:
			names = append(names, ruleName{text: full, rule: r.ID})
		case codeLike(full):
			// "PowerRatedW (Panel Rated Power)": a rule named by an
			// identifier is named by it, spelled exactly, in others'
			// formulas.
			names = append(names, ruleName{text: full, rule: r.ID, abbrev: true})
		}
		switch {
		case isAbbrev(inner):
			names = append(names, ruleName{text: inner, rule: r.ID, abbrev: true})
		case len(strings.Fields(inner)) >= 2:
			// "SoilingLossPct (Soiling Loss Percentage)": the words in
			// brackets are the rule's name in prose.
			names = append(names, ruleName{text: inner, rule: r.ID})
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i].text) > len(names[j].text) })
	l.owners = map[nameKey][]int{}
	for _, n := range names {
		k := nameKey{text: n.text, abbrev: n.abbrev}
		if !n.abbrev {
			k.text = asciiLower(n.text)
		}
		if _, ok := l.owners[k]; !ok {
			l.keys = append(l.keys, k)
		}
		l.owners[k] = append(l.owners[k], n.rule)
	}
	return l
}

// splitName splits "Resource Utilization Ratio (RUR)" into the name and
// the text in its closing brackets.
func splitName(name string) (full, inner string) {
	start, inner, ok := trailingParen(name)
	if !ok {
		return strings.TrimSpace(name), ""
	}
	return strings.TrimSpace(name[:start]), strings.TrimSpace(inner)
}

// isAbbrev reports whether s looks like an abbreviation: a single word
// with at least two capitals or digits, such as RUR, CGPI, HSCI or PM25.
func isAbbrev(s string) bool {
	caps := 0
	for _, r := range s {
		if unicode.IsUpper(r) || unicode.IsDigit(r) {
			caps++
		}
	}
	return abbrevShaped(s) && caps >= 2
}

// link resolves every rule.
func (l *linker) link() *links {
	out := &links{
		direct: map[int][]*use{}, explains: map[int][]*use{}, uses: map[int][]int{},
		reach: map[int]map[*Table]*reached{}, usedBy: map[int][]int{},
	}
	for _, r := range l.db.Rules {
		text := r.Name + "\n" + r.Definition
		out.direct[r.ID] = l.columnsOf(r, text)
		if r.Kind == IllustrationKind {
			if us := l.explained(r); len(us) > 0 {
				out.explains[r.ID] = us
			}
		}
		uses := append([]int(nil), r.DependsOn...)
		for _, id := range l.namedRules(r) {
			if !slices.Contains(uses, id) {
				uses = append(uses, id)
			}
		}
		slices.Sort(uses)
		out.uses[r.ID] = uses
		for _, u := range uses {
			out.usedBy[u] = append(out.usedBy[u], r.ID)
		}
	}
	for id := range out.usedBy {
		slices.Sort(out.usedBy[id])
	}
	for _, r := range l.db.Rules {
		out.reach[r.ID] = l.reachOf(r.ID, out)
		if len(out.direct[r.ID]) == 0 && len(out.reach[r.ID]) == 0 && len(out.explains[r.ID]) == 0 {
			l.gaps.UnlinkedRules = append(l.gaps.UnlinkedRules, RuleRef{ID: r.ID, Name: r.Name})
		}
	}
	return out
}

// columnsOf returns the columns a rule's text names, grouped by table in
// schema order. A name several tables share is linked only when the rule
// names, unambiguously, other columns of exactly one of them; otherwise it
// is reported as ambiguous.
func (l *linker) columnsOf(r *Rule, text string) []*use {
	found := map[*Table]map[*Column][]string{}
	add := func(u *use, path string) {
		if found[u.table] == nil {
			found[u.table] = map[*Column][]string{}
		}
		paths := found[u.table][u.column]
		if path != "" && !slices.Contains(paths, path) {
			paths = append(paths, path)
		}
		found[u.table][u.column] = paths
	}
	var shared []string
	// A former name spelled out in prose, "Power Quality Index" for
	// what the docs once called PowerQualityIndex (identwords.Split lowers its
	// words).
	lower := asciiLower(text)
	for _, f := range l.formers {
		if len(f.words) >= 2 && len(findWord(lower, strings.Join(f.words, " "))) > 0 {
			add(f.use, firstPath(f.use))
		}
	}
	refs := pipeRefs(text)
	for _, ref := range refs {
		l.qualified(r, ref.names[1], ref.names[2], nil, add)
	}
	for _, w := range words(withoutPipeRefs(text, refs)) {
		parts := strings.Split(w, ".")
		if len(parts) > 1 && l.db.Table(parts[0]) != nil && l.columns[strings.ToLower(parts[0])] == nil {
			l.qualified(r, parts[0], parts[1], parts[2:], add)
			continue
		}
		// Each word of a dotted run may itself be a column ("a.b" in
		// prose); the first that is one takes the rest as a JSON path.
		for i, p := range parts {
			cands := l.columns[strings.ToLower(p)]
			if len(cands) == 0 {
				// A bare JSON key counts only when it reads as code (an
				// underscore, a digit or an inner capital), since keys
				// such as "communication" are also plain words.
				if leaf := l.leaves[strings.ToLower(p)]; len(leaf) == 1 && codeLike(p) {
					add(leaf[0], leaf[0].paths[0])
				}
				for _, u := range l.symbols[p] {
					add(u, "")
				}
				continue
			}
			if len(cands) > 1 {
				shared = append(shared, p)
				break
			}
			add(cands[0], jsonPath(cands[0].column, parts[i+1:]))
			break
		}
	}
	for _, name := range dedupFold(shared) {
		cands := l.columns[strings.ToLower(name)]
		if oneTable(cands) {
			for _, c := range cands {
				add(c, "")
			}
			continue
		}
		var inContext []*use
		for _, c := range cands {
			if found[c.table] != nil {
				inContext = append(inContext, c)
			}
		}
		if len(inContext) == 1 {
			add(inContext[0], "")
			continue
		}
		var tables []string
		for _, c := range cands {
			tables = append(tables, c.table.Name)
		}
		l.gaps.AmbiguousLinks = append(l.gaps.AmbiguousLinks, Ambiguity{
			Rule: RuleRef{ID: r.ID, Name: r.Name}, Word: name, Candidates: tables,
		})
	}
	var out []*use
	for _, t := range l.db.Tables {
		cols := found[t]
		for _, c := range t.Columns {
			if paths, ok := cols[c]; ok {
				out = append(out, &use{table: t, column: c, paths: paths})
			}
		}
	}
	return out
}

// qualified resolves "table.column" (and "db|table|column"): the column
// of that table, or a gap when the table has no such column.
func (l *linker) qualified(r *Rule, table, column string, rest []string, add func(*use, string)) {
	t := l.db.Table(table)
	if t == nil {
		return
	}
	c := t.Column(column)
	if c == nil {
		l.gaps.MissingColumns = append(l.gaps.MissingColumns, MissingColumn{
			Rule: RuleRef{ID: r.ID, Name: r.Name}, Table: t.Name, Column: column,
		})
		return
	}
	add(&use{table: t, column: c}, jsonPath(c, rest))
}

// jsonPath returns the documented JSON path of c spelled by parts, or "".
func jsonPath(c *Column, parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	want := strings.ToLower(strings.Join(parts, "."))
	for _, f := range c.JSONFields {
		if p := strings.ToLower(f.Path); p == want || strings.HasPrefix(p, want+".") {
			return strings.Join(parts, ".")
		}
	}
	return ""
}

// explained returns the column a value illustration's name stands for:
// "hazlevel", "LatMs (Latency)", "ArtifactsCore.ConserveStatus",
// "db|table|column" or a JSON path such as "impactMetrics.communication".
// A name that looks like a column reference but matches none is a gap.
func (l *linker) explained(r *Rule) []*use {
	name := strings.TrimSpace(r.Name)
	if refs := pipeRefs(name); refs != nil {
		if t := l.db.Table(refs[0].names[1]); t != nil {
			if c := t.Column(refs[0].names[2]); c != nil {
				return []*use{{table: t, column: c}}
			}
		}
		return nil
	}
	head := name
	start, _, paren := trailingParen(name)
	if paren {
		head = name[:start]
	}
	head = strings.TrimSpace(head)
	if strings.ContainsAny(head, " \t") {
		return nil
	}
	parts := strings.Split(head, ".")
	if t := l.db.Table(parts[0]); t != nil && len(parts) > 1 {
		if c := t.Column(parts[1]); c != nil {
			return []*use{{table: t, column: c, paths: nonEmpty(jsonPath(c, parts[2:]))}}
		}
		return nil
	}
	if cands := l.columns[strings.ToLower(parts[0])]; len(cands) == 1 {
		c := cands[0]
		return []*use{{table: c.table, column: c.column, paths: nonEmpty(jsonPath(c.column, parts[1:]))}}
	}
	if leaf := l.leaves[strings.ToLower(head)]; len(parts) == 1 && len(leaf) == 1 {
		return leaf
	}
	if us := l.abbreviated(head); len(parts) == 1 && us != nil {
		return us
	}
	if len(parts) == 1 && paren && firstWord(head) == head {
		l.gaps.MissingColumns = append(l.gaps.MissingColumns, MissingColumn{
			Rule: RuleRef{ID: r.ID, Name: r.Name}, Column: head,
		})
	}
	return nil
}

// codeLike reports whether a word reads as an identifier rather than
// prose: it holds an underscore, a digit, or a capital after its first
// letter.
func codeLike(w string) bool {
	for i, r := range w {
		if r == '_' || unicode.IsDigit(r) || i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// abbreviated returns the columns (or JSON keys) whose names abbreviate a
// CamelCase name piece by piece, each piece a prefix of the next word
// ("powratew" for "PowerRatedW", "soillosspct" for "SoilingLossPct"), or
// failing that, whose documented former names begin with its words. It
// returns nil unless they are all of one table.
func (l *linker) abbreviated(name string) []*use {
	words := identwords.Split(name)
	if len(words) < 2 {
		return nil
	}
	var found []*use
	for key, uses := range l.columns {
		if abbreviates(key, words) {
			found = append(found, uses...)
		}
	}
	for key, uses := range l.leaves {
		if abbreviates(key, words) {
			found = append(found, uses...)
		}
	}
	if len(found) == 0 {
		// "FillFactor" names what the docs once called FillFactorInitial
		// and FillFactorCurrent: its words begin those former names.
		for _, f := range l.formers {
			if len(f.words) > len(words) && slices.Equal(f.words[:len(words)], words) {
				found = append(found, f.use)
			}
		}
	}
	if !oneTable(found) {
		return nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].column.Name < found[j].column.Name })
	return found
}

func firstPath(u *use) string {
	if len(u.paths) == 0 {
		return ""
	}
	return u.paths[0]
}

// oneTable reports whether uses is non-empty and all in one table.
func oneTable(uses []*use) bool {
	for _, u := range uses {
		if u.table != uses[0].table {
			return false
		}
	}
	return len(uses) > 0
}

// abbreviates reports whether key is the words, in order, each cut to a
// non-empty prefix.
func abbreviates(key string, words []string) bool {
	if len(words) == 0 {
		return key == ""
	}
	for n := min(len(words[0]), len(key)); n >= 1; n-- {
		if key[:n] == words[0][:n] && abbreviates(key[n:], words[1:]) {
			return true
		}
	}
	return false
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// namedRules returns the other rules whose full name or abbreviation the
// rule's definition spells, longest names first so that "Resource
// Utilization Ratio Classification" is not read as "Resource Utilization
// Ratio". A name several rules share is ambiguous and reported.
func (l *linker) namedRules(r *Rule) []int {
	text := r.Definition
	lower := asciiLower(text)
	taken := make([]bool, len(text))
	var ids []int
	for _, key := range l.keys {
		owners := l.owners[key]
		hay := lower
		if key.abbrev {
			hay = text
		}
		for _, span := range findWord(hay, key.text) {
			if slices.Contains(taken[span[0]:span[1]], true) {
				continue
			}
			for i := span[0]; i < span[1]; i++ {
				taken[i] = true
			}
			others := slices.DeleteFunc(slices.Clone(owners), func(id int) bool { return id == r.ID })
			if len(others) == 0 {
				continue
			}
			if len(others) > 1 {
				var names []string
				for _, id := range others {
					names = append(names, fmt.Sprintf("rule %d", id))
				}
				l.gaps.AmbiguousLinks = append(l.gaps.AmbiguousLinks, Ambiguity{
					Rule: RuleRef{ID: r.ID, Name: r.Name}, Word: key.text, Candidates: names,
				})
				continue
			}
			if !slices.Contains(ids, others[0]) {
				ids = append(ids, others[0])
			}
		}
	}
	return ids
}

// findWord returns the spans where word occurs in hay, bounded by
// non-word characters on both sides. To ignore case, a caller passes both
// through asciiLower.
func findWord(hay, word string) [][2]int {
	var out [][2]int
	for from := 0; ; {
		i := strings.Index(hay[from:], word)
		if i < 0 {
			return out
		}
		start, end := from+i, from+i+len(word)
		if !isWordByte(hay, start-1) && !isWordByte(hay, end) {
			out = append(out, [2]int{start, end})
		}
		from = start + 1
	}
}

// asciiLower lowers ASCII letters only, so that byte offsets in the result
// are offsets in the original.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// reachOf returns the tables rule id reaches through the rules it uses,
// transitively, with the columns those rules name there; tables the rule
// names itself are left out.
func (l *linker) reachOf(id int, ls *links) map[*Table]*reached {
	out := map[*Table]*reached{}
	own := map[*Table]bool{}
	for _, u := range ls.direct[id] {
		own[u.table] = true
	}
	for _, u := range ls.explains[id] {
		own[u.table] = true
	}
	for _, first := range ls.uses[id] {
		seen := map[int]bool{id: true}
		stack := []int{first}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[cur] {
				continue
			}
			seen[cur] = true
			cols := append(slices.Clone(ls.direct[cur]), ls.explains[cur]...)
			for _, u := range cols {
				if own[u.table] {
					continue
				}
				r := out[u.table]
				if r == nil {
					r = &reached{}
					out[u.table] = r
				}
				if !slices.Contains(r.columns, u.column) {
					r.columns = append(r.columns, u.column)
				}
				if !slices.Contains(r.via, first) {
					r.via = append(r.via, first)
				}
			}
			stack = append(stack, ls.uses[cur]...)
		}
	}
	for _, r := range out {
		slices.Sort(r.via)
	}
	return out
}

func dedupFold(words []string) []string {
	var out []string
	for _, w := range words {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, w) }) {
			out = append(out, w)
		}
	}
	return out
}
