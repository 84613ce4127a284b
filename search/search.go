// Package search ranks the concepts of a snapshot for a question, with no
// model in the loop: BM25 over each concept's names, manifest cells and body,
// scaled by the layer a table states (marts above what they are built
// from), raised for the concepts the question names, then a capped one-hop
// expansion over the link graph. Results are manifest rows with a position
// hint, never bodies, so an agent narrows with search and then reads only
// the sections it chose. The package also builds context packs: the rules,
// columns and joins a question needs, under a token budget, from the facts
// the snapshot carries (okf.TableFacts and RuleFacts), never from the
// markdown.
package search

import (
	"bytes"
	"cmp"
	"github.com/okf-tools/okf/internal/identwords"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/readmodel"
)

// BM25 parameters: the textbook values.
const (
	k1 = 1.2
	b  = 0.75
)

// Weights scale how much a term counts in each part of a concept.
type Weights struct {
	Name, Cell, Body float32
	// Uses weighs the meanings of the columns a rule names itself (as its
	// tables' schemas state them): a rule's formula writes `hubutilpct`,
	// a person asks how busy the hub is, and the column's meaning says
	// "hub utilization percent".
	Uses float32
	// Cover is what a rule gains, as a share of the best plain score,
	// when the query holds every word of its title, though not as its
	// name: in another order and other forms ("efficiency corrected for
	// the weather"). A person who avoids a rule's name still describes it
	// with its words.
	Cover float32
}

// DefaultWeights: a concept's names (id and title) count four times a word
// of body text and its other manifest cells twice, so a query that names a
// concept lands on it rather than on a neighbour that mentions it. The
// values were chosen by the sweeps recorded in BENCHMARKS.md. Uses and
// Cover by issue 26's, on the paraphrased train questions (context rule
// recall, complete packs, tokens; search MRR): Uses 0 gives 93.5%, 80.0%,
// 1,496, 0.66; 0.25 95.2%, 82.7%; 0.5 96.0%, 84.0%, 1,455, 0.76; 1 and 2
// no more in packs, and lose written questions' columns. Cover 0 gives
// 95.2%, 82.7%; 0.25 96.0%, 84.0%; 0.5 the same and one written question
// fewer; 1 94.4%.
var DefaultWeights = Weights{Name: 4, Cell: 2, Body: 1, Uses: 0.5, Cover: 0.25}

type posting struct {
	doc int32
	tf  float32
}

// Index is a BM25 index over one snapshot. It is safe for concurrent
// searches.
type Index struct {
	snap     *readmodel.Snapshot
	terms    map[string]int32
	postings [][]posting // each term's, in concept order
	docLen   []float32
	avgLen   float32
	links    [][]int32 // outbound links of each concept, as concept indexes
	norm     []float32 // k1·(1−b+b·len/avg) of each concept
	scratch  sync.Pool // *scratch, reused across searches

	// bundles are the runs of concepts of each bundle (a snapshot keeps a
	// bundle's concepts together), and bnorm is norm with the average
	// length of the concept's own bundle: a search of one bundle takes its
	// statistics from that bundle alone, so its ranking does not move when
	// other bundles join the tenant.
	bundles []span
	bnorm   []float32

	// names holds the keys concepts are named by (see nameKey); maxPhrase
	// is the most words of a rule's title.
	names     nameTable
	maxPhrase int

	fkOnce sync.Once
	joins  *joinGraph // the foreign keys between tables, resolved on first use

	packs packData // what context packs read, built on first use

	// layers is each concept's layer rank (see layerRank); nil when no
	// concept names a layer.
	layers []uint8

	// titleWords are the rules by each stemmed word of their titles, and
	// titleLen each rule's number of such words (0 for a concept whose
	// title covering a question does not count): see CoverBoost.
	titleWords map[uint64][]int32
	titleLen   []uint8
	cover      float32 // Weights.Cover

	dense *denseIndex // the concepts' embeddings (dense.go); nil without
}

// span is the run [lo, hi) of the concepts of one bundle.
type span struct {
	bundle string
	lo, hi int32
}

// scratch is the per-search working memory: a score per concept (kept at
// zero between searches) and the list of concepts that scored.
type scratch struct {
	scores []float64
	cands  []int32
}

// better orders results: higher score first, then earlier concept.
func better(scores []float64, a, c int32) bool {
	if scores[a] != scores[c] {
		return scores[a] > scores[c]
	}
	return a < c
}

// topK returns the k best candidates, best first, with a bounded heap
// rather than a sort of every candidate.
func topK(cands []int32, scores []float64, k int) []int32 {
	h := make([]int32, 0, k+1) // min-heap: the worst kept result on top
	worse := func(i, j int) bool { return better(scores, h[j], h[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(r, l) {
				m = r
			}
			if !worse(m, i) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, d := range cands {
		if len(h) == k {
			if !better(scores, d, h[0]) {
				continue
			}
			h[0] = d
			down(0)
			continue
		}
		h = append(h, d)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(i, p) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	sort.Slice(h, func(i, j int) bool { return better(scores, h[i], h[j]) })
	return h
}

// Snapshot returns the snapshot the index was built from.
func (ix *Index) Snapshot() *readmodel.Snapshot { return ix.snap }

// Build indexes a snapshot with the default weights.
func Build(s *readmodel.Snapshot) *Index { return BuildWeighted(s, DefaultWeights) }

// BuildWeighted indexes a snapshot with the given field weights.
func BuildWeighted(s *readmodel.Snapshot, w Weights) *Index {
	ix := &Index{
		cover:  w.Cover,
		snap:   s,
		docLen: make([]float32, len(s.Concepts)),
		links:  make([][]int32, len(s.Concepts)),
	}
	// Tokenizing is most of the work: split the concepts into contiguous
	// shards, one per core, each with its own term dictionary, then merge
	// the dictionaries in shard order, which numbers terms exactly as one
	// sequential pass would.
	weights := w
	workers := max(1, min(runtime.GOMAXPROCS(0), 4, len(s.Concepts)/256))
	shards := make([]*shard, workers)
	var wg sync.WaitGroup
	per := (len(s.Concepts) + workers - 1) / workers
	for w := range shards {
		lo, hi := w*per, min(len(s.Concepts), (w+1)*per)
		shards[w] = &shard{terms: map[string]int32{}, once: map[int32]bool{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			shards[w].index(s, lo, hi, ix.docLen, weights)
		}()
	}
	wg.Wait()

	ix.terms = make(map[string]int32, len(shards[0].names)*2)
	var nEntries int
	remaps := make([][]int32, workers)
	for w, sh := range shards {
		remap := make([]int32, len(sh.names))
		for local, name := range sh.names {
			id, ok := ix.terms[name]
			if !ok {
				id = int32(len(ix.terms))
				ix.terms[name] = id
			}
			remap[local] = id
		}
		remaps[w] = remap
		nEntries += len(sh.entries)
	}
	df := make([]int32, len(ix.terms))
	for w, sh := range shards {
		for _, e := range sh.entries {
			df[remaps[w][e.term]]++
		}
	}
	backing := make([]posting, nEntries)
	ix.postings = make([][]posting, len(ix.terms))
	at := 0
	for t, n := range df {
		ix.postings[t] = backing[at : at : at+int(n)]
		at += int(n)
	}
	var total float64
	for w, sh := range shards {
		k := 0
		for doc, end := range sh.ends {
			for ; k < end; k++ {
				e := sh.entries[k]
				t := remaps[w][e.term]
				ix.postings[t] = append(ix.postings[t], posting{doc: int32(sh.lo + doc), tf: e.tf})
			}
		}
		sh.entries = nil
	}
	var bundleTotal float64
	ix.norm = make([]float32, len(s.Concepts))
	ix.bnorm = make([]float32, len(s.Concepts))
	for i := range s.Concepts {
		total += float64(ix.docLen[i])
		c := &s.Concepts[i]
		for _, link := range c.Links {
			if t, ok := s.LookupIn(c.Bundle, link); ok {
				ix.links[i] = append(ix.links[i], int32(t))
			}
		}
		if i == 0 || c.Bundle != s.Concepts[i-1].Bundle {
			ix.bundles = append(ix.bundles, span{bundle: c.Bundle, lo: int32(i)})
			bundleTotal = 0
		}
		bundleTotal += float64(ix.docLen[i])
		if i+1 == len(s.Concepts) || s.Concepts[i+1].Bundle != c.Bundle {
			sp := &ix.bundles[len(ix.bundles)-1]
			sp.hi = int32(i + 1)
			lengthNorms(ix.bnorm[sp.lo:sp.hi], ix.docLen[sp.lo:sp.hi], bundleTotal)
		}
	}
	ix.avgLen = lengthNorms(ix.norm, ix.docLen, total)
	for i := range s.Concepts {
		if r := layerRank(s.Concepts[i].Layer); r > 0 {
			if ix.layers == nil {
				ix.layers = make([]uint8, len(s.Concepts))
			}
			ix.layers[i] = r
		}
	}
	nKeys := 0
	for _, sh := range shards {
		nKeys += len(sh.keys)
	}
	ix.names = newNameTable(nKeys)
	for _, sh := range shards {
		for _, k := range sh.keys {
			ix.names.add(k)
		}
		sh.keys = nil
		ix.maxPhrase = max(ix.maxPhrase, sh.maxPhrase)
	}
	ix.indexTitleWords()
	ix.scratch.New = func() any { return &scratch{scores: make([]float64, len(s.Concepts))} }
	return ix
}

// indexTitleWords keys each rule by the stemmed words of its title (its
// name before a bracketed abbreviation), words of three letters or more,
// for a title of two such words or more.
func (ix *Index) indexTitleWords() {
	ix.titleWords = map[uint64][]int32{}
	ix.titleLen = make([]uint8, len(ix.snap.Concepts))
	var buf []byte
	var words []uint64
	for i := range ix.snap.Concepts {
		c := &ix.snap.Concepts[i]
		if c.IsTable() || c.IsQuery() {
			continue
		}
		name, _ := abbreviated(c.Title)
		words = words[:0]
		buf = tokenize(textBytes(name), buf, func(tok []byte, _ int) {
			if h, ok := coverKey(tok); ok && !slices.Contains(words, h) {
				words = append(words, h)
			}
		})
		if len(words) < 2 || len(words) > math.MaxUint8 {
			continue
		}
		ix.titleLen[i] = uint8(len(words))
		for _, h := range words {
			ix.titleWords[h] = append(ix.titleWords[h], int32(i))
		}
	}
}

// coverKey hashes a word for title coverage, stemmed; words shorter than
// three letters ("of", "to") do not count.
func coverKey(tok []byte) (uint64, bool) {
	if len(tok) < 3 {
		return 0, false
	}
	return mixAll(seed(coverWord), stem(tok)), true
}

// covered returns the rules of [lo, hi) every word of whose title the
// query holds, in any order and form ("efficiency corrected for the
// weather" covers Weather Corrected Efficiency), in concept order.
func (ix *Index) covered(query string, lo, hi int32) []int32 {
	var words []uint64
	tokenize([]byte(query), nil, func(tok []byte, _ int) {
		if h, ok := coverKey(tok); ok && !slices.Contains(words, h) {
			words = append(words, h)
		}
	})
	var seen map[int32]uint8
	var out []int32
	for _, h := range words {
		for _, d := range ix.titleWords[h] {
			if d < lo || d >= hi {
				continue
			}
			if seen == nil {
				seen = map[int32]uint8{}
			}
			if seen[d]++; seen[d] == ix.titleLen[d] {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// lengthNorms writes k1·(1−b+b·len/avg) for each length into norm, avg
// being the lengths' mean (total over their number), and returns avg.
func lengthNorms(norm, lens []float32, total float64) float32 {
	if len(lens) == 0 {
		return 0
	}
	avg := float32(total / float64(len(lens)))
	for i, l := range lens {
		norm[i] = float32(k1 * (1 - b + b*float64(l)/float64(avg)))
	}
	return avg
}

// shard indexes a contiguous run of concepts with its own dictionary.
type shard struct {
	terms   map[string]int32
	names   []string // local term id → term
	entries []entry  // the (term, frequency) pairs of each concept in turn
	lo      int      // the first concept
	ends    []int    // where each concept's entries end

	keys      []nameKey // the names of its concepts
	maxPhrase int

	// meanings are the column meanings of the tables its rules use, by
	// table concept and lower-case column name.
	meanings map[int]map[string]okf.Span
	trimmed  map[meaningKey]string
	once     map[int32]bool // the terms a rule's column meanings gave
}

// entry is a term and its weighted frequency in one concept.
type entry struct {
	term int32
	tf   float32
}

// index tokenizes concepts [lo, hi), writing their lengths into docLen.
func (sh *shard) index(s *readmodel.Snapshot, lo, hi int, docLen []float32, w Weights) {
	sh.lo = lo
	sh.ends = make([]int, 0, hi-lo)
	// A table has two keys, its id's last segment and its title.
	sh.keys = make([]nameKey, 0, 2*(hi-lo))
	var counts []float32 // per local term id, for the current concept
	var touched []int32
	var buf []byte
	doc := 0
	// add indexes a text and hashes its tokens from offset name.from on into
	// name, when given: a concept's names are keyed as they are indexed.
	// once, when set, counts each term once a concept, however often the
	// text repeats it.
	var once map[int32]bool
	add := func(text []byte, weight float32, name *nameHash) {
		buf = tokenize(text, buf, func(tok []byte, off int) {
			if name != nil && off >= name.from {
				name.add(tok)
			}
			id, ok := sh.terms[string(tok)]
			if !ok {
				id = int32(len(sh.names))
				name := string(tok)
				sh.terms[name] = id
				sh.names = append(sh.names, name)
				counts = append(counts, 0)
			}
			if once != nil {
				if once[id] {
					return
				}
				once[id] = true
			}
			if counts[id] == 0 {
				touched = append(touched, id)
			}
			counts[id] += weight
			docLen[doc] += weight
		})
	}
	for doc = lo; doc < hi; doc++ {
		c := &s.Concepts[doc]
		segment, title := nameHash{h: seed(exactName), from: strings.LastIndexByte(c.ID, '/') + 1}, nameHash{h: seed(exactName)}
		add(textBytes(c.ID), w.Name, &segment)
		add(textBytes(c.Title), w.Name, &title)
		for _, a := range c.Aliases {
			add(textBytes(a), w.Name, nil)
		}
		add(textBytes(c.Kind), w.Cell, nil)
		add(textBytes(c.Grain), w.Cell, nil)
		add(textBytes(c.Summary), w.Cell, nil)
		add(s.Body(c), w.Body, nil)
		if w.Uses > 0 {
			// The meanings of a rule's columns repeat their tables' words;
			// each counts once, so that a rule is not found for the
			// table it reads.
			once = sh.once
			sh.meaningsUsed(s, c, func(text []byte) { add(text, w.Uses, nil) })
			clear(sh.once)
			once = nil
		}
		for _, id := range touched {
			sh.entries = append(sh.entries, entry{term: id, tf: counts[id]})
			counts[id] = 0
		}
		sh.ends = append(sh.ends, len(sh.entries))
		touched = touched[:0]
		var words int
		sh.keys, words = appendNameKeys(sh.keys, c, int32(doc), segment, title)
		sh.maxPhrase = max(sh.maxPhrase, words)
	}
}

// meaningsUsed calls f with the meaning of each column a rule names
// itself, as its table's schema states it; columns it reaches through
// other rules are theirs to be found by. Each table's facts are decoded
// once a shard.
func (sh *shard) meaningsUsed(s *readmodel.Snapshot, c *readmodel.Concept, f func(text []byte)) {
	r := c.Rule()
	if r == nil {
		return
	}
	for _, u := range r.Uses {
		if len(u.Through) > 0 {
			continue
		}
		t, ok := s.LookupIn(c.Bundle, u.Concept)
		if !ok {
			continue
		}
		cols, ok := sh.meanings[t]
		if !ok {
			cols = map[string]okf.Span{}
			if facts := s.Concepts[t].Table(); facts != nil {
				for _, col := range facts.Columns {
					cols[strings.ToLower(col.Name)] = col.Meaning
				}
			}
			if sh.meanings == nil {
				sh.meanings = map[int]map[string]okf.Span{}
			}
			sh.meanings[t] = cols
		}
		for _, name := range u.Columns {
			if sp, ok := cols[strings.ToLower(name)]; ok && sp[1] > sp[0] {
				f(textBytes(sh.meaning(s, t, sp)))
			}
		}
	}
}

// meaning returns a column's meaning as a pack shows it: without the type
// or key it may restate, words of SQL, not of the rule. Rules share
// columns, so each is trimmed once a shard.
func (sh *shard) meaning(s *readmodel.Snapshot, t int, sp okf.Span) string {
	k := meaningKey{t, sp}
	m, ok := sh.trimmed[k]
	if !ok {
		m = trimMeaning(s.Text(&s.Concepts[t], sp))
		if sh.trimmed == nil {
			sh.trimmed = map[meaningKey]string{}
		}
		sh.trimmed[k] = m
	}
	return m
}

// meaningKey is a column's meaning: its table concept and its span.
type meaningKey struct {
	table int
	span  okf.Span
}

// Options shape a search.
type Options struct {
	// K is the number of direct hits, and the cap on expanded rows; 0 means 8.
	K int
	// Bundle limits the search to one bundle.
	Bundle string
	// NoExpand turns the link expansion off.
	NoExpand bool
	// QueryVector is the query's embedding, fused with BM25 when the
	// index has vectors (dense.go); nil ranks by BM25 alone.
	QueryVector []float32

	// noPos leaves Hit.Pos at -1: context packs and routing only rank,
	// and finding the position reads each hit's body.
	noPos bool
}

// DefaultK is the number of hits when Options.K is 0.
const DefaultK = 8

// Hit is one result: a concept, reached directly or through links.
type Hit struct {
	Concept *readmodel.Concept `json:"concept"`
	// Score is the BM25 score of a direct hit, raised when the query names
	// the concept (NamedBoost, ExactBoost); 0 for an expanded one.
	Score float64 `json:"score"`
	// Pos is the body offset where the query's terms cluster densest, or -1
	// when only the concept's names or cells matched (and for expanded rows).
	Pos int `json:"pos"`
	// Via counts the direct hits that link to an expanded concept.
	Via int `json:"via"`
}

// Expanded reports whether the hit came from the link expansion.
func (h Hit) Expanded() bool { return h.Via > 0 }

// Result is a hit as tools hand it out: the concept's manifest row as read
// at a given time, its score, and where in its body to read.
type Result struct {
	ID       string  `json:"id"`
	Bundle   string  `json:"bundle"`
	Row      string  `json:"row"`
	Score    float64 `json:"score"`
	Pos      int     `json:"pos"`
	Expanded bool    `json:"expanded"`
}

// Results renders hits as results, their rows read at now.
func (ix *Index) Results(hits []Hit, now time.Time) []Result {
	out := make([]Result, len(hits))
	for i, h := range hits {
		out[i] = Result{h.Concept.ID, h.Concept.Bundle, ix.snap.Row(h.Concept, now), h.Score, h.Pos, h.Expanded()}
	}
	return out
}

// Search ranks concepts for a query: the top K direct hits by BM25, raised
// for the concepts the query names (see NamedBoost and ExactBoost), then up
// to K concepts they link to, ranked by how many hits point at each. With
// Options.Bundle, only that bundle's concepts are scored, and with that
// bundle's own statistics.
func (ix *Index) Search(query string, o Options) []Hit {
	k := o.K
	if k <= 0 {
		k = DefaultK
	}
	lo, hi, norm := int32(0), int32(len(ix.snap.Concepts)), ix.norm
	if o.Bundle != "" {
		sp, ok := ix.span(o.Bundle)
		if !ok {
			return nil
		}
		lo, hi, norm = sp.lo, sp.hi, ix.bnorm
	}
	qterms, framing := ix.queryTerms(query, lo, hi)
	exact, named := ix.naming(query, lo, hi)
	if len(qterms) == 0 && len(exact) == 0 {
		return nil
	}
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)
	scores := sc.scores
	n := float64(hi - lo)
	cands := sc.cands[:0]
	for i, t := range qterms {
		df := float64(len(t.ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if i >= len(qterms)-framing {
			idf *= FramingWeight
		}
		for _, p := range t.ps {
			if scores[p.doc] == 0 {
				cands = append(cands, p.doc)
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + float64(norm[p.doc]))
		}
	}
	if ix.dense != nil && o.QueryVector != nil {
		cands = ix.fuseDense(o.QueryVector, lo, hi, scores, cands)
	}
	if ix.layers != nil {
		for _, d := range cands {
			scores[d] *= layerWeights[ix.layers[d]]
		}
	}
	raise := func(docs []int32, by float64) {
		for _, d := range docs {
			if scores[d] == 0 {
				cands = append(cands, d)
			}
			scores[d] += by
		}
	}
	if len(named) > 0 && len(cands) > 0 {
		raise(named, NamedBoost*best(cands, scores))
	}
	if ix.cover > 0 && len(cands) > 0 {
		if cover := ix.covered(query, lo, hi); len(cover) > 0 {
			raise(slices.DeleteFunc(cover, func(d int32) bool { return slices.Contains(named, d) }), float64(ix.cover)*best(cands, scores))
		}
	}
	if len(exact) > 0 {
		// As if the best were 1 when nothing else scored, so that a name
		// sharing no word with the knowledge ("disaster_events" for the
		// table disasterevents) still finds its concept.
		raise(exact, ExactBoost*max(1, best(cands, scores)))
	}
	top := topK(cands, scores, k)
	hits := make([]Hit, 0, 2*len(top))
	for _, d := range top {
		c := &ix.snap.Concepts[d]
		pos := -1
		if !o.noPos {
			pos = ix.position(c, qterms)
		}
		hits = append(hits, Hit{Concept: c, Score: scores[d], Pos: pos})
	}
	// Leave the scratch scores at zero for the next search.
	for _, d := range cands {
		scores[d] = 0
	}
	sc.cands = cands
	if !o.NoExpand {
		hits = append(hits, ix.expand(top, k)...)
	}
	return hits
}

// A concept's layer (readmodel.Concept.Layer: okf compile writes it for
// a dbt project's tables) scales its score, so that of two tables that
// answer a question equally well, the one people query (a mart, or a
// table of no stated layer) ranks above the staging table it is built
// from, and that above the data as loaded. A table the query names
// exactly still ranks first (ExactBoost is added after).
const (
	StagingWeight = 0.7
	SourceWeight  = 0.5
)

// layerWeights are the weights by layer rank.
var layerWeights = [...]float64{1, StagingWeight, SourceWeight}

// layerRank orders layers from the one people query (0, also for none or
// one search does not know) down to the data as loaded (2).
func layerRank(layer string) uint8 {
	switch layer {
	case "staging":
		return 1
	case "source":
		return 2
	}
	return 0
}

// layer returns the layer rank of the concept at position i.
func (ix *Index) layer(i int) uint8 {
	if ix.layers == nil {
		return 0
	}
	return ix.layers[i]
}

// NamedBoost is what a rule the query names word for word (its title, the
// title before a bracketed abbreviation, or the abbreviation) gains, as a
// share of the best plain score: a question that names a rule needs it,
// however long the question and however little else of the rule's text it
// shares. Set by the sweep recorded in BENCHMARKS.md ("Search ranking").
const NamedBoost = 1.0

// ExactBoost is what a concept the whole query names exactly (its id, its
// id's last segment, which is a table's name, or its title) gains, as a
// multiple of the best score otherwise: more than 1, so it ranks above
// every concept not so named even when it shares no word with the query.
const ExactBoost = 2.0

// best returns the highest score among the candidates.
func best(cands []int32, scores []float64) float64 {
	var m float64
	for _, d := range cands {
		m = max(m, scores[d])
	}
	return m
}

// span returns the run of a bundle's concepts.
func (ix *Index) span(bundle string) (span, bool) {
	for _, sp := range ix.bundles {
		if sp.bundle == bundle {
			return sp, true
		}
	}
	return span{}, false
}

// qterm is a query term and its postings among the searched concepts.
type qterm struct {
	id int32
	ps []posting
}

// queryTerms returns the distinct terms of a query that concepts [lo, hi)
// hold: its content words first, then the words that only frame a question
// ("what is the ..."), counting how many of those end the list; a query of
// framing words alone counts none as framing. When the query has content
// words but those concepts hold none of them, it returns nothing, so a
// question about something else entirely finds nothing rather than
// whatever shares its framing.
func (ix *Index) queryTerms(query string, lo, hi int32) ([]qterm, int) {
	var out, framing []qterm
	content := false // the query has a word that is not framing, known or not
	seen := map[int32]bool{}
	framingWords := questionWords.Get()
	tokenize([]byte(query), nil, func(tok []byte, _ int) {
		framed := framingWords[string(tok)]
		content = content || !framed
		id, ok := ix.terms[string(tok)]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		ps := within(ix.postings[id], lo, hi)
		switch {
		case len(ps) == 0:
		case framed:
			framing = append(framing, qterm{id, ps})
		default:
			out = append(out, qterm{id, ps})
		}
	})
	switch {
	case !content:
		return framing, 0
	case len(out) == 0:
		// Every word that says what the question is about is unknown here:
		// nothing in the knowledge answers it, however its framing matches.
		return nil, 0
	}
	return append(out, framing...), len(framing)
}

// within returns the postings of concepts [lo, hi), postings being in
// concept order.
func within(ps []posting, lo, hi int32) []posting {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= lo })
	j := i + sort.Search(len(ps)-i, func(j int) bool { return ps[i+j].doc >= hi })
	return ps[i:j]
}

// FramingWeight scales the score of the words that only frame a question
// when it has others, so "what is an active customer" ranks by "active
// customer"; set by the sweep recorded in BENCHMARKS.md.
const FramingWeight = 0.5

// questionWords are English words that frame a question rather than name
// what it is about: "what is the weather in Zanzibar" must not match a rule
// that says "what an order is worth".
var questionWords = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return setOf(`a an and are as at be by can could did do does for from how
		i in is it its of on or that the their there these they this to was were what when where
		which who whom whose why will with would you your`)
}}

// A nameKey is a hash of one name of a concept. A concept is named exactly
// by its id, its id's last segment, its title and, for a rule, its title
// before a bracketed abbreviation, each as its tokens run together, so that
// case, punctuation and "_" or "-" do not count (an id is keyed by its last
// segment and checked whole when a query has a "/"); and a rule is named
// inside a question by its title's words (before any bracket), singular, in
// order, or by its abbreviation written as the title writes it. The hashes
// are 64 bits, so two names collide about once in 10^10 searches of a
// tenant of 20,000 concepts, and keeping them rather than the names keeps
// the index small.
type nameKey struct {
	h   uint64
	doc int32
}

// nameTable is an open-addressing hash table of name keys, linearly
// probed; a slot holds its concept's index plus one, 0 marking it empty.
// Building it is one pass, where sorting the keys took 4% of a build.
type nameTable struct {
	slots []nameKey
	mask  uint64
}

// newNameTable makes a table for n keys, at most three quarters full.
func newNameTable(n int) nameTable {
	size := 1
	for size*3 < n*4 {
		size *= 2
	}
	return nameTable{slots: make([]nameKey, size), mask: uint64(size - 1)}
}

func (t *nameTable) add(k nameKey) {
	for i := k.h & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].doc == 0 {
			t.slots[i] = nameKey{k.h, k.doc + 1}
			return
		}
	}
}

// find appends the concepts of [lo, hi) keyed h.
func (t *nameTable) find(h uint64, lo, hi int32, out []int32) []int32 {
	for i := h & t.mask; t.slots[i].doc != 0; i = (i + 1) & t.mask {
		if d := t.slots[i].doc - 1; t.slots[i].h == h && lo <= d && d < hi {
			out = append(out, d)
		}
	}
	return out
}

// nameHash hashes the tokens of a name from offset from on.
type nameHash struct {
	h    uint64
	from int
	ok   bool
}

func (n *nameHash) add(tok []byte) { n.h, n.ok = mixAll(n.h, tok), true }

// The kinds of name, each hashed from its own seed.
const (
	exactName byte = iota
	titleWords
	abbreviation
	coverWord
)

const fnvPrime = 1099511628211

// seed starts the FNV-1a hash of a name of the given kind.
func seed(kind byte) uint64 { return mix(14695981039346656037, kind) }

func mix(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func mixAll(h uint64, s []byte) uint64 {
	for _, c := range s {
		h = mix(h, c)
	}
	return h
}

// exactKey hashes a text's tokens run together; ok is false when it has
// none.
func exactKey(text string) (uint64, bool) {
	n := nameHash{h: seed(exactName)}
	tokenize([]byte(text), nil, func(tok []byte, _ int) { n.add(tok) })
	return n.h, n.ok
}

// phraseKey hashes words separated by spaces.
func phraseKey(words []string) uint64 {
	h := seed(titleWords)
	for i, w := range words {
		if i > 0 {
			h = mix(h, ' ')
		}
		h = mixAll(h, []byte(w))
	}
	return h
}

// abbreviated returns a title's name and, when its brackets hold one word
// with a capital, such as "RUR" in "Resource Utilization Ratio (RUR)", that
// abbreviation.
func abbreviated(title string) (name, abbr string) {
	name, rest, ok := strings.Cut(title, "(")
	if !ok {
		return title, ""
	}
	rest, _, _ = strings.Cut(rest, ")")
	if rest = strings.TrimSpace(rest); isAbbreviation(rest) {
		return name, rest
	}
	return name, ""
}

// isAbbreviation reports whether a word is ASCII letters and digits with a
// capital letter.
func isAbbreviation(w string) bool {
	upper := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return upper
}

// acronym reports whether a word is capitals and digits, a capital first.
func acronym(w string) bool {
	if w == "" || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func abbreviationKey(w string) uint64 { return mixAll(seed(abbreviation), []byte(singular(w))) }

// appendNameKeys appends the keys of a concept's names, given the hashes
// of its id's last segment and of its title, and returns the most words
// of a name a question may hold (0 for a table without aliases, whose
// title is its name). Aliases are names of every kind: a question holding
// one names the concept, a table too.
func appendNameKeys(keys []nameKey, c *readmodel.Concept, doc int32, segment, title nameHash) ([]nameKey, int) {
	start := len(keys)
	add := func(h uint64) {
		for _, k := range keys[start:] {
			if k.h == h {
				return
			}
		}
		keys = append(keys, nameKey{h, doc})
	}
	for _, n := range []nameHash{segment, title} {
		if n.ok {
			add(n.h)
		}
	}
	most := 0
	phrase := func(text string) {
		name, abbr := abbreviated(text)
		if acronym(strings.TrimSpace(name)) {
			// Named only as written: an alias "PER" is not the word "per".
			add(abbreviationKey(strings.TrimSpace(name)))
			return
		}
		if h, ok := exactKey(name); ok {
			add(h)
		}
		var words []string
		for _, t := range Tokens(name) {
			words = append(words, singular(t))
		}
		if len(words) > 0 {
			add(phraseKey(words))
		}
		if abbr != "" {
			add(abbreviationKey(abbr))
		}
		most = max(most, len(words))
	}
	if !c.IsTable() {
		phrase(c.Title)
		if namesColumn(c.Title) {
			name, _, _ := strings.Cut(c.Title, " (")
			// "SensitivityData.LightSensitivity": the column's name, in
			// words, names it.
			col := name[strings.LastIndexByte(name, '.')+1:]
			if words := identwords.Split(col); len(words) > 1 {
				phrase(strings.Join(words, " "))
			}
		}
	}
	for _, a := range c.Aliases {
		phrase(a)
	}
	return keys, most
}

// naming returns the concepts of [lo, hi) that a query names: exactly (the
// whole query is one of the concept's names), and the rules whose title
// words or abbreviation it holds, each list in concept order.
func (ix *Index) naming(query string, lo, hi int32) (exact, named []int32) {
	whole, ok := exactKey(query)
	if !ok {
		return nil, nil
	}
	exact = ix.names.find(whole, lo, hi, nil)
	if cut := strings.LastIndexByte(query, '/'); cut >= 0 {
		// An id: its last segment is keyed, the whole is checked here.
		if h, ok := exactKey(query[cut+1:]); ok {
			for _, d := range ix.names.find(h, lo, hi, nil) {
				if id, _ := exactKey(ix.snap.Concepts[d].ID); id == whole {
					exact = append(exact, d)
				}
			}
		}
	}
	slices.Sort(exact)
	exact = slices.Compact(exact)
	if ix.maxPhrase == 0 {
		return exact, nil
	}
	var words []string
	tokenize([]byte(query), nil, func(tok []byte, off int) {
		words = append(words, singular(string(tok)))
		// An abbreviation counts only as the title writes it: "PER" names
		// the Physical Endurance Rating, "per" does not.
		if raw := query[off:min(len(query), off+len(tok))]; isAbbreviation(raw) {
			named = ix.names.find(abbreviationKey(raw), lo, hi, named)
		}
	})
	for i := range words {
		for n := 1; n <= ix.maxPhrase && i+n <= len(words); n++ {
			named = ix.names.find(phraseKey(words[i:i+n]), lo, hi, named)
		}
	}
	slices.Sort(named)
	return exact, slices.Compact(named)
}

// expand returns up to k concepts the hits link to, in the same bundle, that
// are not hits themselves: first the rules a rule hit depends on, since a
// rule is read with the rules its definition uses, then the most-pointed-at,
// then by the rank of the best hit pointing at them.
func (ix *Index) expand(hits []int32, k int) []Hit {
	s := ix.snap
	isHit := map[int32]bool{}
	for _, d := range hits {
		isHit[d] = true
	}
	type target struct {
		doc             int32
		deps, via, best int
	}
	byDoc := map[int32]*target{}
	var order []*target
	for rank, d := range hits {
		var deps []string
		if r := s.Concepts[d].Rule(); r != nil {
			deps = r.DependsOn
		}
		for _, td := range ix.links[d] {
			if isHit[td] {
				continue
			}
			t := byDoc[td]
			if t == nil {
				t = &target{doc: td, best: rank}
				byDoc[td] = t
				order = append(order, t)
			}
			t.via++
			if slices.Contains(deps, s.Concepts[td].ID) {
				t.deps++
			}
		}
	}
	sort.Slice(order, func(i, j int) bool {
		a, c := order[i], order[j]
		return cmp.Or(cmp.Compare(c.deps, a.deps), cmp.Compare(c.via, a.via), cmp.Compare(a.best, c.best), cmp.Compare(a.doc, c.doc)) < 0
	})
	if len(order) > k {
		order = order[:k]
	}
	out := make([]Hit, len(order))
	for i, t := range order {
		out[i] = Hit{Concept: &s.Concepts[t.doc], Pos: -1, Via: t.via}
	}
	return out
}

// window is the span within which query terms count as clustered.
const window = 600

// position returns the start of the body line where the most query-term
// occurrences fall within one window, or -1 if the body has none.
func (ix *Index) position(c *readmodel.Concept, qterms []qterm) int {
	want := map[int32]bool{}
	for _, t := range qterms {
		want[t.id] = true
	}
	body := ix.snap.Body(c)
	var offs []int
	var ids []int32
	tokenize(body, nil, func(tok []byte, off int) {
		if id, ok := ix.terms[string(tok)]; ok && want[id] {
			offs = append(offs, off)
			ids = append(ids, id)
		}
	})
	if len(offs) == 0 {
		return -1
	}
	best, bestScore := 0, -1
	seen := map[int32]int{}
	distinct := 0
	lo := 0
	for hi := range offs {
		if seen[ids[hi]] == 0 {
			distinct++
		}
		seen[ids[hi]]++
		for offs[hi]-offs[lo] > window {
			seen[ids[lo]]--
			if seen[ids[lo]] == 0 {
				distinct--
			}
			lo++
		}
		// Distinct terms first, then the number of occurrences.
		if score := distinct*1000 + (hi - lo + 1); score > bestScore {
			best, bestScore = offs[lo], score
		}
	}
	return bytes.LastIndexByte(body[:best], '\n') + 1
}
