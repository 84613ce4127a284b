package eval

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/queries"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
	"github.com/okf-tools/okf/sqlguard"
)

// Strategies are the ways an agent can read knowledge, in report order:
// raw pastes the raw documentation, navigator reads index files then the
// needed files, manifest reads the manifest then the needed concepts, schema
// pastes every table's schema and no business knowledge (the baseline),
// search searches then reads what it found, context reads one context pack,
// and auto pastes the raw documentation when a session is cheaper that way
// (engine.AutoPastesRaw) and reads packs otherwise.
var Strategies = []string{"raw", "navigator", "manifest", "schema", "search", "context", "auto"}

// CacheRate is the share of the price a cached prompt token costs when a
// later call re-reads the conversation, as the langonrock benchmarks bill it.
const CacheRate = 0.10

// Corpus is the knowledge of the databases under evaluation.
type Corpus struct {
	Snap  *readmodel.Snapshot
	Index *search.Index
	// Docs holds every document's bytes by bundle, then path.
	Docs map[string]map[string][]byte
	// RuleConcept maps bundle → rule id → concept id.
	RuleConcept map[string]map[int]string
	// Raw holds, per database, the raw documentation an agent would be
	// pasted (empty when not given).
	Raw map[string]string

	tables map[string]bundleTables
}

var ruleTitleRe = lazy.Regexp{Expr: `\brule (\d+)\s*$`}

// LoadCorpus reads a folder of bundles (one subfolder a database), indexes
// it with the given search weights and,
// when rawDir is not empty, the raw LiveSQLBench documents of each
// database (<rawDir>/<db>/<db>_schema.txt, _column_meaning_base.json,
// _kb.jsonl).
func LoadCorpus(bundlesDir, rawDir string, w search.Weights) (*Corpus, error) {
	entries, err := os.ReadDir(bundlesDir)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Docs: map[string]map[string][]byte{}, RuleConcept: map[string]map[int]string{}, Raw: map[string]string{}}
	var docs []readmodel.Doc
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := e.Name()
		b, err := okf.Load(filepath.Join(bundlesDir, name))
		if err != nil {
			return nil, err
		}
		c.Docs[name] = map[string][]byte{}
		c.RuleConcept[name] = map[int]string{}
		for _, d := range b.Docs {
			docs = append(docs, readmodel.Doc{Bundle: name, Path: d.Path, Content: d.Raw})
			c.Docs[name][d.Path] = d.Raw
			if id, ok := ruleID(d); ok {
				c.RuleConcept[name][id] = d.ID()
			}
		}
		if rawDir != "" {
			raw, err := readRaw(rawDir, name)
			if err != nil {
				return nil, err
			}
			c.Raw[name] = raw
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no bundles (expected one subfolder a database)", bundlesDir)
	}
	c.Snap, _ = readmodel.Build("eval", docs)
	c.Index = search.BuildWeighted(c.Snap, w)
	c.tables = tablesOf(c.Snap)
	return c, nil
}

// readRaw reads the raw LiveSQLBench documents of a database: "" when
// rawDir has no folder for it (another benchmark's database), an error when
// the folder lacks one of the three files.
func readRaw(rawDir, db string) (string, error) {
	if _, err := os.Stat(filepath.Join(rawDir, db)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	var raw strings.Builder
	for _, suffix := range []string{"_schema.txt", "_column_meaning_base.json", "_kb.jsonl"} {
		data, err := os.ReadFile(filepath.Join(rawDir, db, db+suffix))
		if err != nil {
			return "", fmt.Errorf("raw documents of %s: %w", db, err)
		}
		raw.Write(data)
		raw.WriteString("\n")
	}
	return raw.String(), nil
}

// ruleID reads the LiveSQLBench rule id of a concept: a rule_id key, or a
// source titled "... rule N".
func ruleID(d *okf.Document) (int, bool) {
	if s, ok := d.Text("rule_id"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			return n, true
		}
	}
	src := d.Field("sources")
	if src == nil {
		return 0, false
	}
	for _, e := range src.Content {
		for i := 0; i+1 < len(e.Content); i += 2 {
			if e.Content[i].Value == "title" {
				if m := ruleTitleRe.Get().FindStringSubmatch(e.Content[i+1].Value); m != nil {
					n, _ := strconv.Atoi(m[1])
					return n, true
				}
			}
		}
	}
	return 0, false
}

// Outcome is one strategy's result on one question.
type Outcome struct {
	Question string `json:"question"`
	Database string `json:"database"`
	Strategy string `json:"strategy"`
	// GoldRules and FoundRules count the rules the question needs and
	// those the strategy put in front of the agent.
	GoldRules  int `json:"gold_rules"`
	FoundRules int `json:"found_rules"`
	GoldTables int `json:"gold_tables"`
	// FoundTables counts gold tables whose schema the agent saw.
	FoundTables int `json:"found_tables"`
	// GoldColumns counts the columns the gold SQL reads; FoundColumns
	// those whose schema row the agent saw.
	GoldColumns  int `json:"gold_columns"`
	FoundColumns int `json:"found_columns"`
	// Literals counts the distinct string values the gold SQL compares
	// columns against that the question (and its evidence, with
	// Options.Evidence) does not spell; LiteralsFound those the agent was
	// shown exactly as stored, MissingLiterals the others.
	Literals        int      `json:"literals"`
	LiteralsFound   int      `json:"literals_found"`
	MissingLiterals []string `json:"missing_literals,omitempty"`
	// Complete is set when the agent saw every gold rule, table and
	// column: all the question's SQL needs.
	Complete bool `json:"complete"`
	// Missing lists the gold refs the agent did not see.
	Missing []string `json:"missing,omitempty"`
	// MissedRules are the gold rules a context pack missed, each with the
	// rank a search for the question gives it, so that a miss reads as
	// the pack's cut or as search's.
	MissedRules []MissedRule `json:"missed_rules,omitempty"`
	// Examples counts the worked examples a context pack held, and
	// ExampleOnTables is set when one of them reads exactly the tables the
	// gold SQL reads.
	Examples        int  `json:"examples"`
	ExampleOnTables bool `json:"example_on_tables"`
	// RR is the reciprocal rank of the first gold rule (ranked strategies).
	RR float64 `json:"rr"`
	// Tokens the agent reads for this question, and the calls it makes.
	Tokens int `json:"tokens"`
	Calls  int `json:"calls"`
	// turns are the texts each call adds, keyed for deduplication across
	// a session: content already in context is not read again.
	turns []turn
}

// MissedRule is a gold rule a pack missed and its rank (1-based) among
// the MissDepth hits of a search for the question in its bundle, without
// link expansion; 0 when search does not find it.
type MissedRule struct {
	Rule       string `json:"rule"`
	SearchRank int    `json:"search_rank"`
}

// MissDepth is how deep a missed rule is looked for: far enough past the
// hits a pack weighs to tell a near miss from a rule search cannot find.
const MissDepth = 50

type turn struct {
	items []item
}

type item struct {
	key    string
	tokens int
	// text is what the call shows, read for literal recall and dropped
	// once counted, so that a run does not hold every text it shows.
	text string
}

// shown is the item of a call that shows text.
func shown(key, text string, count func(string) int) item {
	return item{key, count(text), text}
}

// Options tune a retrieval evaluation.
type Options struct {
	K      int // search depth; 0 means search.DefaultK
	Budget int // context pack budget; 0 means search.DefaultBudget
	// Weights rank search hits (LoadCorpus indexes with them).
	Weights search.Weights
	Count   func(string) int
	Now     time.Time
	// Pack tunes context packs (Budget and Count are filled in).
	Pack search.PackOptions
	// Evidence appends a question's evidence (BIRD's hint) to its text.
	Evidence bool
	// Mixed asks every question of the whole corpus, without naming its
	// database: search and packs choose among all bundles.
	Mixed bool
	// QueryVector embeds a question for dense similarity, when the
	// corpus has vectors (Corpus.Embed); nil ranks by BM25 alone.
	QueryVector func(text string) []float32
}

// DefaultOptions are what okf eval retrieval starts from: the search's
// and the context packs' defaults spelled out, so that a sweep varies
// each from where okf serves it.
func DefaultOptions() Options {
	return Options{K: search.DefaultK, Budget: search.DefaultBudget, Weights: search.DefaultWeights, Pack: search.PackOptions{
		Rules: search.DefaultPackRules, MinRelevance: search.DefaultMinRelevance,
		Columns: search.DefaultPackColumns, ColumnRelevance: search.DefaultColumnRelevance,
		HedgeRules: search.DefaultHedgeRules, HedgeRelevance: search.DefaultHedgeRelevance, HedgeFirst: search.DefaultHedgeFirst,
		NewTableRelevance: search.DefaultNewTableRelevance,
	}}
}

// vector is a question's embedding, nil without an embedder.
func (o Options) vector(text string) []float32 {
	if o.QueryVector == nil {
		return nil
	}
	return o.QueryVector(text)
}

// Skip is a question left out of an evaluation, and why.
type Skip struct {
	Question string `json:"question"`
	Reason   string `json:"reason"`
}

// Retrieval evaluates every strategy on every question whose database the
// corpus holds. Questions of other databases, and questions whose gold SQL
// does not parse, are returned as skipped.
func Retrieval(c *Corpus, qs []Question, o Options) (outcomes []Outcome, skipped []Skip, err error) {
	k := o.K
	if k <= 0 {
		k = search.DefaultK
	}
	if o.Budget <= 0 {
		o.Budget = search.DefaultBudget
	}
	for _, q := range qs {
		if _, ok := c.Docs[q.Database]; !ok {
			skipped = append(skipped, Skip{q.ID, "no bundle for database " + q.Database})
			continue
		}
		g, err := c.goldOf(q)
		if err != nil {
			skipped = append(skipped, Skip{q.ID, err.Error()})
			continue
		}
		text := q.Text
		if o.Evidence && q.Evidence != "" {
			text += "\n" + q.Evidence
		}
		literals := unspelled(q.SQL, text)
		scope := q.Database
		if o.Mixed {
			scope = ""
		}
		for _, s := range Strategies {
			if (s == "raw" || s == "auto") && c.Raw[q.Database] == "" {
				continue
			}
			out := Outcome{Question: q.ID, Database: q.Database, Strategy: s}
			seen := map[string]bool{}
			everything := func() {
				for _, r := range g.all() {
					seen[r] = true
				}
				for col := range g.columns {
					seen[col] = true
				}
			}
			switch s {
			case "raw", "auto":
				everything()
				out.turns = []turn{{[]item{shown("raw", c.Raw[q.Database], o.Count)}}}
			case "navigator":
				everything()
				out.turns = c.navigatorTurns(q.Database, g, o.Count)
			case "manifest":
				everything()
				m, _ := c.Snap.ManifestAt(scope, o.Now)
				out.turns = []turn{{[]item{shown("manifest:"+scope, string(m), o.Count)}}, c.getTurn(g.all(), o.Count)}
			case "schema":
				for t := range g.tables {
					seen[t] = true
				}
				for col := range g.columns {
					seen[col] = true
				}
				text, _ := engine.SchemaText(c.Snap, q.Database)
				out.turns = []turn{{[]item{shown("schema:"+q.Database, text, o.Count)}}}
			case "search":
				c.searchOutcome(&out, seen, text, scope, g, k, o)
			case "context":
				po := o.Pack
				po.Budget, po.Bundle, po.Count, po.QueryVector = o.Budget, scope, o.Count, o.vector(text)
				pack := c.Index.Context(text, po)
				for _, r := range append(append(pack.Rules, pack.Tables...), pack.Columns...) {
					seen[r] = true
				}
				out.Examples = len(pack.Examples)
				for _, r := range pack.Examples {
					out.ExampleOnTables = out.ExampleOnTables || c.readsTables(r, g.tables)
				}
				out.turns = []turn{{[]item{{"context:" + q.ID, pack.Tokens, pack.Text}}}}
			}
			out.credit(g, seen)
			out.creditLiterals(literals)
			if s == "context" {
				out.MissedRules = c.rankMissed(out.Missing, g, text, q.Database, o)
			}
			for _, t := range out.turns {
				out.Calls++
				for i := range t.items {
					out.Tokens += t.items[i].tokens
					t.items[i].text = ""
				}
			}
			outcomes = append(outcomes, out)
		}
	}
	return decideAuto(outcomes, o.Budget), skipped, nil
}

// credit counts what of the gold the agent saw, and what it missed.
func (o *Outcome) credit(g gold, seen map[string]bool) {
	o.GoldRules, o.GoldTables, o.GoldColumns = len(g.rules), len(g.tables), len(g.columns)
	for _, set := range []struct {
		refs  map[string]bool
		found *int
	}{{g.rules, &o.FoundRules}, {g.tables, &o.FoundTables}, {g.columns, &o.FoundColumns}} {
		for _, r := range sortedKeys(set.refs) {
			if seen[r] {
				*set.found++
			} else {
				o.Missing = append(o.Missing, r)
			}
		}
	}
	o.Complete = len(o.Missing) == 0
}

// unspelled returns the values a question's gold SQL compares columns
// against that its text does not hold (case-sensitive): those the agent
// has to be shown.
func unspelled(sqls []string, text string) []string {
	var out []string
	for _, sql := range sqls {
		for _, v := range comparedLiterals(sql) {
			if !strings.Contains(text, v) {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// creditLiterals counts which of literals the texts of the outcome's
// calls show.
func (o *Outcome) creditLiterals(literals []string) {
	o.Literals = len(literals)
	for _, v := range literals {
		if slices.ContainsFunc(o.turns, func(t turn) bool {
			return slices.ContainsFunc(t.items, func(it item) bool { return shows(it.text, v) })
		}) {
			o.LiteralsFound++
		} else {
			o.MissingLiterals = append(o.MissingLiterals, v)
		}
	}
}

// rankMissed ranks the gold rules among missing as a search for text in
// their bundle ranks them: a pack searches one bundle, routed to when the
// question does not name it (Options.Mixed).
func (c *Corpus) rankMissed(missing []string, g gold, text, bundle string, o Options) []MissedRule {
	var out []MissedRule
	for _, r := range missing {
		if g.rules[r] {
			out = append(out, MissedRule{Rule: r})
		}
	}
	if out == nil {
		return nil
	}
	hits := c.Index.Search(text, search.Options{K: MissDepth, Bundle: bundle, NoExpand: true, QueryVector: o.vector(text)})
	for i := range out {
		out[i].SearchRank = 1 + slices.IndexFunc(hits, func(h search.Hit) bool { return h.Concept.Bundle+"/"+h.Concept.ID == out[i].Rule })
	}
	return out
}

// decideAuto makes each database's auto outcomes its raw ones or its
// context ones, as engine.AutoPastesRaw decides for a session of all the
// database's questions with packs at the budget: what an agent knows
// before it asks.
func decideAuto(outcomes []Outcome, budget int) []Outcome {
	questions, rawTokens := map[string]int{}, map[string]int{}
	for _, o := range outcomes {
		if o.Strategy == "raw" {
			questions[o.Database]++
			rawTokens[o.Database] = o.Tokens
		}
	}
	context := map[string]Outcome{}
	for _, o := range outcomes {
		if o.Strategy == "context" {
			context[o.Question] = o
		}
	}
	for i, o := range outcomes {
		if o.Strategy != "auto" || engine.AutoPastesRaw(rawTokens[o.Database], budget, questions[o.Database]) {
			continue
		}
		pack := context[o.Question]
		pack.Strategy = "auto"
		outcomes[i] = pack
	}
	return outcomes
}

// getTurn is one batched read of whole concept bodies.
func (c *Corpus) getTurn(refs []string, count func(string) int) turn {
	var t turn
	for _, r := range refs {
		if sl, err := c.Snap.Get(r, readmodel.GetOptions{}); err == nil {
			t.items = append(t.items, shown("get:"+r, sl.Text, count))
		}
	}
	return t
}

// navigatorTurns reads like an ideal index navigator: the root index, the
// index of each folder holding a needed concept, then exactly the needed
// files, whole.
func (c *Corpus) navigatorTurns(db string, g gold, count func(string) int) []turn {
	docs := c.Docs[db]
	turns := []turn{{[]item{shown("nav:"+db+"/index.md", string(docs["index.md"]), count)}}}
	folders := map[string]bool{}
	var files []string
	for _, r := range g.all() {
		p := strings.TrimPrefix(r, db+"/") + ".md"
		if _, ok := docs[p]; !ok {
			continue
		}
		files = append(files, p)
		folders[filepath.ToSlash(filepath.Dir(p))] = true
	}
	var idx turn
	for _, f := range sortedKeys(folders) {
		if d, ok := docs[f+"/index.md"]; ok {
			idx.items = append(idx.items, shown("nav:"+db+"/"+f+"/index.md", string(d), count))
		}
	}
	if len(idx.items) > 0 {
		turns = append(turns, idx)
	}
	var read turn
	for _, f := range files {
		read.items = append(read.items, shown("nav:"+db+"/"+f, string(docs[f]), count))
	}
	return append(turns, read)
}

// searchOutcome runs a search, credits the gold concepts among its rows,
// and has the agent read the gold concepts it found: a gold table's whole
// schema, so all its gold columns.
func (c *Corpus) searchOutcome(out *Outcome, seen map[string]bool, text, scope string, g gold, k int, o Options) {
	hits := c.Index.Search(text, search.Options{K: k, Bundle: scope, QueryVector: o.vector(text)})
	var rows strings.Builder
	var found []string
	for rank, h := range hits {
		r := h.Concept.Bundle + "/" + h.Concept.ID
		rows.WriteString(c.Snap.Row(h.Concept, o.Now) + "\n")
		switch {
		case g.rules[r]:
			if out.RR == 0 {
				out.RR = 1 / float64(rank+1)
			}
			found = append(found, r)
		case g.tables[r]:
			found = append(found, r)
		default:
			continue
		}
		seen[r] = true
	}
	for col := range g.columns {
		if seen[col[:strings.LastIndexByte(col, '.')]] {
			seen[col] = true
		}
	}
	out.turns = []turn{{[]item{shown("search:"+out.Question, rows.String(), o.Count)}}, c.getTurn(found, o.Count)}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Summary aggregates outcomes per database and strategy.
type Summary struct {
	Database string  `json:"database"`
	Strategy string  `json:"strategy"`
	N        int     `json:"questions"`
	Recall   float64 `json:"rule_recall"`
	TRecall  float64 `json:"table_recall"`
	CRecall  float64 `json:"column_recall"`
	// LRecall is literal recall, LiteralsFound over Literals (the
	// outcomes' summed): nil when no question has a literal to be shown.
	LRecall       *float64 `json:"literal_recall"`
	Literals      int      `json:"literals"`
	LiteralsFound int      `json:"literals_found"`
	// Complete is the share of questions for which the agent saw every
	// gold rule, table and column.
	Complete float64 `json:"complete"`
	// Examples is the share of questions whose pack held a worked example,
	// and ExampleOnTables the share with one reading exactly the gold
	// SQL's tables.
	Examples        float64 `json:"examples"`
	ExampleOnTables float64 `json:"example_on_tables"`
	// MRR is the mean reciprocal rank over the questions that need rules.
	MRR float64 `json:"mrr"`
	// Tokens is the mean of what the agent reads per question.
	Tokens float64 `json:"tokens_per_question"`
	// Billed is what a session of all the database's questions in one
	// conversation costs, re-reading earlier context at CacheRate.
	Billed int `json:"session_billed_tokens"`
	Calls  int `json:"session_calls"`
}

// Summarize groups outcomes by database and strategy, plus an "all" row
// per strategy. Recall is micro-averaged: found over needed, summed.
func Summarize(outcomes []Outcome) []Summary {
	type key struct{ db, s string }
	groups := map[key][]Outcome{}
	var keys []key
	for _, o := range outcomes {
		for _, db := range []string{o.Database, "all"} {
			k := key{db, o.Strategy}
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], o)
		}
	}
	rank := map[string]int{}
	for i, s := range Strategies {
		rank[s] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i].db == "all") != (keys[j].db == "all") {
			return keys[j].db == "all"
		}
		if keys[i].db != keys[j].db {
			return keys[i].db < keys[j].db
		}
		return rank[keys[i].s] < rank[keys[j].s]
	})
	var out []Summary
	for _, k := range keys {
		g := groups[k]
		s := Summary{Database: k.db, Strategy: k.s, N: len(g)}
		var gold, found, gt, ft, gc, fc, complete, ranked, examples, onTables int
		for _, o := range g {
			if o.Examples > 0 {
				examples++
			}
			if o.ExampleOnTables {
				onTables++
			}
			if o.GoldRules > 0 {
				ranked++
			}
			gold += o.GoldRules
			found += o.FoundRules
			gt += o.GoldTables
			ft += o.FoundTables
			gc += o.GoldColumns
			fc += o.FoundColumns
			s.Literals += o.Literals
			s.LiteralsFound += o.LiteralsFound
			if o.Complete {
				complete++
			}
			s.MRR += o.RR
			s.Tokens += float64(o.Tokens)
		}
		s.Recall = ratio(found, gold)
		s.TRecall = ratio(ft, gt)
		s.CRecall = ratio(fc, gc)
		if s.Literals > 0 {
			r := ratio(s.LiteralsFound, s.Literals)
			s.LRecall = &r
		}
		s.Complete = ratio(complete, len(g))
		s.Examples = float64(examples) / float64(len(g))
		s.ExampleOnTables = float64(onTables) / float64(len(g))
		s.MRR /= float64(max(1, ranked))
		s.Tokens /= float64(len(g))
		s.Billed, s.Calls = session(g)
		out = append(out, s)
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// session bills the outcomes of each database as one conversation: every
// call re-reads the context so far at CacheRate and pays in full for what
// it adds; content already in context is not added again, and a read that
// would add nothing is not made. Each question also ends with one call that
// writes the answer over the whole context.
func session(outcomes []Outcome) (billed, calls int) {
	byDB := map[string][]Outcome{}
	for _, o := range outcomes {
		byDB[o.Database] = append(byDB[o.Database], o)
	}
	var total float64
	for _, db := range sortedDBs(byDB) {
		seen := map[string]bool{}
		context := 0
		for _, o := range byDB[db] {
			for _, t := range o.turns {
				added := 0
				for _, it := range t.items {
					if !seen[it.key] {
						seen[it.key] = true
						added += it.tokens
					}
				}
				if added == 0 {
					continue
				}
				total += float64(added) + CacheRate*float64(context)
				context += added
				calls++
			}
			total += CacheRate * float64(context)
			calls++
		}
	}
	return int(total + 0.5), calls
}

func sortedDBs(m map[string][]Outcome) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteTable writes summaries as an aligned text table. When any pack held
// a worked example, two columns say how often: with an example, and with
// one on the gold SQL's tables.
func WriteTable(w io.Writer, sums []Summary) error {
	examples := slices.ContainsFunc(sums, func(s Summary) bool { return s.Examples > 0 })
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	head := "database\tstrategy\tquestions\trule recall\ttable recall\tcolumn recall\tliteral recall\tcomplete\tMRR\ttokens/question\tsession billed\tsession calls\t"
	if examples {
		head += "example\texample on gold tables\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range sums {
		mrr := "-"
		if s.Strategy == "search" {
			mrr = fmt.Sprintf("%.2f", s.MRR)
		}
		literals := "-"
		if s.LRecall != nil {
			literals = fmt.Sprintf("%.1f%%", 100**s.LRecall)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t%s\t%.1f%%\t%s\t%.0f\t%d\t%d\t",
			s.Database, s.Strategy, s.N, 100*s.Recall, 100*s.TRecall, 100*s.CRecall, literals, 100*s.Complete, mrr, s.Tokens, s.Billed, s.Calls)
		if examples {
			fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t", 100*s.Examples, 100*s.ExampleOnTables)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// WriteMisses writes, after the summary table, each question whose
// context pack missed a gold rule, with the rank search gives the rule:
// nothing when every pack held every gold rule.
func WriteMisses(w io.Writer, outcomes []Outcome) error {
	var b strings.Builder
	for _, o := range outcomes {
		if o.Strategy != "context" || len(o.MissedRules) == 0 {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nGold rules a context pack missed, and their rank in a search of their bundle for the question (top %d, no link expansion):\n", MissDepth)
		}
		fmt.Fprintf(&b, "  %s:", o.Question)
		for i, m := range o.MissedRules {
			if i > 0 {
				b.WriteString(",")
			}
			if m.SearchRank == 0 {
				fmt.Fprintf(&b, " %s (not found by search)", m.Rule)
			} else {
				fmt.Fprintf(&b, " %s (search rank %d)", m.Rule, m.SearchRank)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readsTables reports whether the query concept ref's SQL reads exactly
// the given tables (refs), as the gold SQL's are resolved.
func (c *Corpus) readsTables(ref string, tables map[string]bool) bool {
	i, err := c.Snap.Lookup(ref)
	if err != nil {
		return false
	}
	q := c.Snap.Concepts[i].Query()
	if q == nil {
		return false
	}
	sql, _ := queries.Bind(q.SQL, sqlguard.DialectPostgres)
	read, ddl, err := Question{ID: ref, SQL: []string{sql}}.Tables()
	if err != nil {
		return false
	}
	bt := c.tables[c.Snap.Concepts[i].Bundle]
	got := map[string]bool{}
	for _, t := range append(read, ddl...) {
		if r, ok := bt.refs[t]; ok {
			got[r] = true
		}
	}
	return maps.Equal(got, tables)
}

// MissingRules lists the gold rules of a question that a context pack of
// bundle lacks: the concept id of each, or "rule N (not in the bundle)"
// for a rule the bundle has no concept for.
func (c *Corpus) MissingRules(bundle string, q Question, pack search.Pack) []string {
	var missed []string
	for _, id := range q.Rules {
		cid, ok := c.RuleConcept[bundle][id]
		switch {
		case !ok:
			missed = append(missed, fmt.Sprintf("rule %d (not in the bundle)", id))
		case !slices.Contains(pack.Rules, bundle+"/"+cid):
			missed = append(missed, cid)
		}
	}
	return missed
}
