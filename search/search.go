// Package search ranks the concepts of a snapshot for a question, with no
// model in the loop: BM25 over each concept's names, manifest cells and body,
// then a capped one-hop expansion over the link graph. Results are manifest
// rows with a position hint, never bodies, so an agent narrows with search
// and then reads only the sections it chose. The package also builds context
// packs: the rules, columns and joins a question needs, under a token budget,
// from the facts the snapshot carries (readmodel.TableFacts and RuleFacts),
// never from the markdown.
package search

import (
	"bytes"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

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
}

// DefaultWeights: a concept's names (id and title) count four times a word
// of body text and its other manifest cells twice, so a query that names a
// concept lands on it rather than on a neighbour that mentions it. The
// values were chosen by the sweeps recorded in BENCHMARKS.md.
var DefaultWeights = Weights{Name: 4, Cell: 2, Body: 1}

type posting struct {
	doc int32
	tf  float32
}

// Index is a BM25 index over one snapshot. It is safe for concurrent
// searches.
type Index struct {
	snap     *readmodel.Snapshot
	terms    map[string]int32
	postings [][]posting
	docLen   []float32
	avgLen   float32
	links    [][]int32 // outbound links of each concept, as concept indexes
	norm     []float32 // k1·(1−b+b·len/avg) of each concept
	scratch  sync.Pool // *scratch, reused across searches

	fkOnce sync.Once
	fk     [][]join // the foreign keys of each concept, resolved on first use

	titleOnce  sync.Once
	titleWords [][2][]string // each rule's title words, full and abbreviated, read on first use
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

// topK returns the k best candidates that pass keep, best first, with a
// bounded heap rather than a sort of every candidate.
func topK(cands []int32, scores []float64, k int, keep func(int32) bool) []int32 {
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
		if !keep(d) {
			continue
		}
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
		shards[w] = &shard{terms: map[string]int32{}}
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
	for i := range s.Concepts {
		total += float64(ix.docLen[i])
		c := &s.Concepts[i]
		for _, link := range c.Links {
			if t, ok := s.LookupIn(c.Bundle, link); ok {
				ix.links[i] = append(ix.links[i], int32(t))
			}
		}
	}
	if n := len(s.Concepts); n > 0 {
		ix.avgLen = float32(total / float64(n))
	}
	ix.norm = make([]float32, len(s.Concepts))
	for i, l := range ix.docLen {
		ix.norm[i] = float32(k1 * (1 - b + b*float64(l)/float64(ix.avgLen)))
	}
	ix.scratch.New = func() any { return &scratch{scores: make([]float64, len(s.Concepts))} }
	return ix
}

// shard indexes a contiguous run of concepts with its own dictionary.
type shard struct {
	terms   map[string]int32
	names   []string // local term id → term
	entries []entry  // the (term, frequency) pairs of each concept in turn
	lo      int      // the first concept
	ends    []int    // where each concept's entries end
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
	var counts []float32 // per local term id, for the current concept
	var touched []int32
	var buf []byte
	doc := 0
	add := func(text []byte, weight float32) {
		buf = tokenize(text, buf, func(tok []byte, _ int) {
			id, ok := sh.terms[string(tok)]
			if !ok {
				id = int32(len(sh.names))
				name := string(tok)
				sh.terms[name] = id
				sh.names = append(sh.names, name)
				counts = append(counts, 0)
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
		add([]byte(c.ID), w.Name)
		add([]byte(c.Title), w.Name)
		add([]byte(c.Kind), w.Cell)
		add([]byte(c.Grain), w.Cell)
		add([]byte(c.Summary), w.Cell)
		add(s.Body(c), w.Body)
		for _, id := range touched {
			sh.entries = append(sh.entries, entry{term: id, tf: counts[id]})
			counts[id] = 0
		}
		sh.ends = append(sh.ends, len(sh.entries))
		touched = touched[:0]
	}
}

// Options shape a search.
type Options struct {
	// K is the number of direct hits, and the cap on expanded rows; 0 means 8.
	K int
	// Bundle limits the search to one bundle.
	Bundle string
	// NoExpand turns the link expansion off.
	NoExpand bool
}

// DefaultK is the number of hits when Options.K is 0.
const DefaultK = 8

// Hit is one result: a concept, reached directly or through links.
type Hit struct {
	Concept *readmodel.Concept `json:"concept"`
	// Score is the BM25 score of a direct hit, 0 for an expanded one.
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

// Search ranks concepts for a query: the top K direct hits by BM25, then up
// to K concepts they link to, ranked by how many hits point at each.
func (ix *Index) Search(query string, o Options) []Hit {
	k := o.K
	if k <= 0 {
		k = DefaultK
	}
	qterms, framing := ix.queryTerms(query)
	if len(qterms) == 0 || len(ix.snap.Concepts) == 0 {
		return nil
	}
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)
	scores := sc.scores
	n := float64(len(ix.snap.Concepts))
	cands := sc.cands[:0]
	for i, t := range qterms {
		ps := ix.postings[t]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if i >= len(qterms)-framing {
			idf *= FramingWeight
		}
		for _, p := range ps {
			if scores[p.doc] == 0 {
				cands = append(cands, p.doc)
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + float64(ix.norm[p.doc]))
		}
	}
	top := topK(cands, scores, k, func(d int32) bool {
		return o.Bundle == "" || ix.snap.Concepts[d].Bundle == o.Bundle
	})
	hits := make([]Hit, 0, 2*len(top))
	for _, d := range top {
		c := &ix.snap.Concepts[d]
		hits = append(hits, Hit{Concept: c, Score: scores[d], Pos: ix.position(c, qterms)})
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

// queryTerms returns the distinct known terms of a query: its content
// words first, then the words that only frame a question ("what is the
// ..."), counting how many of those end the list; a query of framing words
// alone counts none as framing. When the query has content words but the
// knowledge knows none of them, it returns nothing, so a question about
// something else entirely finds nothing rather than whatever shares its
// framing.
func (ix *Index) queryTerms(query string) ([]int32, int) {
	var out, framing []int32
	content := false // the query has a word that is not framing, known or not
	seen := map[int32]bool{}
	tokenize([]byte(query), nil, func(tok []byte, _ int) {
		framed := questionWords[string(tok)]
		content = content || !framed
		id, ok := ix.terms[string(tok)]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		if framed {
			framing = append(framing, id)
		} else {
			out = append(out, id)
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

// FramingWeight scales the score of the words that only frame a question
// when it has others, so "what is an active customer" ranks by "active
// customer"; set by the sweep recorded in BENCHMARKS.md.
const FramingWeight = 0.5

// questionWords are English words that frame a question rather than name
// what it is about: "what is the weather in Zanzibar" must not match a rule
// that says "what an order is worth".
var questionWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can could did do does for from how
		i in is it its of on or that the their there these they this to was were what when where
		which who whom whose why will with would you your`) {
		m[w] = true
	}
	return m
}()

// expand returns up to k concepts the hits link to, in the same bundle, that
// are not hits themselves: most-pointed-at first, then by the rank of the
// best hit pointing at them.
func (ix *Index) expand(hits []int32, k int) []Hit {
	s := ix.snap
	isHit := map[int32]bool{}
	for _, d := range hits {
		isHit[d] = true
	}
	type target struct {
		doc       int32
		via, best int
	}
	byDoc := map[int32]*target{}
	var order []*target
	for rank, d := range hits {
		for _, td := range ix.links[d] {
			if isHit[td] {
				continue
			}
			if byDoc[td] == nil {
				byDoc[td] = &target{doc: td, best: rank}
				order = append(order, byDoc[td])
			}
			byDoc[td].via++
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].via != order[j].via {
			return order[i].via > order[j].via
		}
		if order[i].best != order[j].best {
			return order[i].best < order[j].best
		}
		return order[i].doc < order[j].doc
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
func (ix *Index) position(c *readmodel.Concept, qterms []int32) int {
	want := map[int32]bool{}
	for _, t := range qterms {
		want[t] = true
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
