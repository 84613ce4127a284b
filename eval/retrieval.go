package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
)

// Strategies are the ways an agent can read knowledge, in report order.
var Strategies = []string{"raw", "navigator", "manifest", "search", "context"}

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
}

var ruleTitleRe = regexp.MustCompile(`\brule (\d+)\s*$`)

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
			var raw strings.Builder
			for _, suffix := range []string{"_schema.txt", "_column_meaning_base.json", "_kb.jsonl"} {
				p := filepath.Join(rawDir, name, name+suffix)
				data, err := os.ReadFile(p)
				if err != nil {
					return nil, fmt.Errorf("raw documents of %s: %w", name, err)
				}
				raw.Write(data)
				raw.WriteString("\n")
			}
			c.Raw[name] = raw.String()
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no bundles (expected one subfolder a database)", bundlesDir)
	}
	c.Snap, _ = readmodel.Build("eval", docs)
	c.Index = search.BuildWeighted(c.Snap, w)
	return c, nil
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
				if m := ruleTitleRe.FindStringSubmatch(e.Content[i+1].Value); m != nil {
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
	// RR is the reciprocal rank of the first gold rule (ranked strategies).
	RR float64 `json:"rr"`
	// Tokens the agent reads for this question, and the calls it makes.
	Tokens int `json:"tokens"`
	Calls  int `json:"calls"`
	// turns are the texts each call adds, keyed for deduplication across
	// a session: content already in context is not read again.
	turns []turn
}

type turn struct {
	items []item
}

type item struct {
	key    string
	tokens int
}

// Options tune a retrieval evaluation.
type Options struct {
	K      int // search depth; 0 means search.DefaultK
	Budget int // context pack budget; 0 means search.DefaultBudget
	Count  func(string) int
	Now    time.Time
	// Pack tunes context packs (Budget and Count are filled in).
	Pack search.PackOptions
}

// Retrieval evaluates every strategy on every question whose database the
// corpus holds. Questions of other databases are returned as skipped.
func Retrieval(c *Corpus, qs []Question, o Options) (outcomes []Outcome, skipped []string, err error) {
	k := o.K
	if k <= 0 {
		k = search.DefaultK
	}
	for _, q := range qs {
		if _, ok := c.Docs[q.Database]; !ok {
			skipped = append(skipped, q.ID)
			continue
		}
		tables, err := q.Tables()
		if err != nil {
			return nil, nil, err
		}
		gold := goldSet(c, q, tables)
		for _, s := range Strategies {
			if s == "raw" && c.Raw[q.Database] == "" {
				continue
			}
			out := Outcome{Question: q.ID, Database: q.Database, Strategy: s, GoldRules: len(gold.rules), GoldTables: len(gold.tables)}
			switch s {
			case "raw":
				out.FoundRules, out.FoundTables = len(gold.rules), len(gold.tables)
				out.turns = []turn{{[]item{{"raw", o.Count(c.Raw[q.Database])}}}}
			case "navigator":
				out.FoundRules, out.FoundTables = len(gold.rules), len(gold.tables)
				out.turns = c.navigatorTurns(q.Database, gold, o.Count)
			case "manifest":
				out.FoundRules, out.FoundTables = len(gold.rules), len(gold.tables)
				m, _ := c.Snap.ManifestAt(q.Database, o.Now)
				out.turns = []turn{{[]item{{"manifest", o.Count(string(m))}}}, c.getTurn(q.Database, gold.all(), o.Count)}
			case "search":
				c.searchOutcome(&out, q, gold, k, o)
			case "context":
				po := o.Pack
				po.Budget, po.Bundle, po.Count = o.Budget, q.Database, o.Count
				pack := c.Index.Context(q.Text, po)
				for _, r := range pack.Rules {
					if gold.rules[r] {
						out.FoundRules++
					}
				}
				for _, t := range pack.Tables {
					if gold.tables[t] {
						out.FoundTables++
					}
				}
				out.turns = []turn{{[]item{{"context:" + q.ID, pack.Tokens}}}}
			}
			for _, t := range out.turns {
				out.Calls++
				for _, it := range t.items {
					out.Tokens += it.tokens
				}
			}
			outcomes = append(outcomes, out)
		}
	}
	return outcomes, skipped, nil
}

type goldRefs struct {
	rules, tables map[string]bool // refs bundle/id
}

func (g goldRefs) all() []string {
	var out []string
	for r := range g.rules {
		out = append(out, r)
	}
	for t := range g.tables {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func goldSet(c *Corpus, q Question, tables []string) goldRefs {
	g := goldRefs{rules: map[string]bool{}, tables: map[string]bool{}}
	for _, id := range q.Rules {
		if cid, ok := c.RuleConcept[q.Database][id]; ok {
			g.rules[q.Database+"/"+cid] = true
		} else {
			// A rule the bundle lacks still counts as needed.
			g.rules[fmt.Sprintf("%s/missing-rule-%d", q.Database, id)] = true
		}
	}
	for _, t := range tables {
		g.tables[q.Database+"/tables/"+t] = true
	}
	return g
}

// getTurn is one batched read of whole concept bodies.
func (c *Corpus) getTurn(db string, refs []string, count func(string) int) turn {
	var t turn
	for _, r := range refs {
		if sl, err := c.Snap.Get(r, readmodel.GetOptions{}); err == nil {
			t.items = append(t.items, item{"get:" + r, count(sl.Text)})
		}
	}
	return t
}

// navigatorTurns reads like an ideal index navigator: the root index, the
// index of each folder holding a needed concept, then exactly the needed
// files, whole.
func (c *Corpus) navigatorTurns(db string, g goldRefs, count func(string) int) []turn {
	docs := c.Docs[db]
	turns := []turn{{[]item{{"nav:" + db + "/index.md", count(string(docs["index.md"]))}}}}
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
			idx.items = append(idx.items, item{"nav:" + db + "/" + f + "/index.md", count(string(d))})
		}
	}
	if len(idx.items) > 0 {
		turns = append(turns, idx)
	}
	var read turn
	for _, f := range files {
		read.items = append(read.items, item{"nav:" + db + "/" + f, count(string(docs[f]))})
	}
	return append(turns, read)
}

// searchOutcome runs a search, credits the gold concepts among its rows,
// and has the agent read the gold concepts it found.
func (c *Corpus) searchOutcome(out *Outcome, q Question, g goldRefs, k int, o Options) {
	hits := c.Index.Search(q.Text, search.Options{K: k, Bundle: q.Database})
	var rows strings.Builder
	var found []string
	for rank, h := range hits {
		r := h.Concept.Bundle + "/" + h.Concept.ID
		rows.WriteString(c.Snap.Row(h.Concept, o.Now) + "\n")
		switch {
		case g.rules[r]:
			out.FoundRules++
			if out.RR == 0 {
				out.RR = 1 / float64(rank+1)
			}
			found = append(found, r)
		case g.tables[r]:
			out.FoundTables++
			found = append(found, r)
		}
	}
	out.turns = []turn{{[]item{{"search:" + q.ID, o.Count(rows.String())}}}, c.getTurn(q.Database, found, o.Count)}
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
	MRR      float64 `json:"mrr"`
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
		var gold, found, gt, ft int
		for _, o := range g {
			gold += o.GoldRules
			found += o.FoundRules
			gt += o.GoldTables
			ft += o.FoundTables
			s.MRR += o.RR
			s.Tokens += float64(o.Tokens)
		}
		s.Recall = ratio(found, gold)
		s.TRecall = ratio(ft, gt)
		s.MRR /= float64(len(g))
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

// WriteTable writes summaries as an aligned text table.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstrategy\tquestions\trule recall\ttable recall\tMRR\ttokens/question\tsession billed\tsession calls\t")
	for _, s := range sums {
		mrr := "-"
		if s.Strategy == "search" {
			mrr = fmt.Sprintf("%.2f", s.MRR)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%s\t%.0f\t%d\t%d\t\n",
			s.Database, s.Strategy, s.N, 100*s.Recall, 100*s.TRecall, mrr, s.Tokens, s.Billed, s.Calls)
	}
	return tw.Flush()
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
