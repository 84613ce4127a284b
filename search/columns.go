package search

import (
	"bytes"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/okf-tools/okf/internal/lazy"
)

// A question names columns its rules do not: "show the manufacturer and
// model" needs deviceidentity.makername and modnum, "super power" needs
// superpower.power_name. The column index ranks a bundle's columns against
// a question by BM25 over each column's name and meaning, with statistics
// from that bundle's columns alone.

// tableColumn is one column of a table concept.
type tableColumn struct {
	table int    // the concept's position
	name  string // as the schema spells it
}

// columnIndex is the BM25 index of one bundle's columns.
type columnIndex struct {
	cols     []tableColumn
	postings map[string][]colPosting
	norm     []float64 // k1·(1−b+b·len/avg) of each column
	// compact is each column's name in lower case without separators,
	// where a question's word may hide: "denomination" in mktdenom.
	compact []string
	// weight scales each column's score by its table's layer; nil when no
	// table states one.
	weight []float64
}

type colPosting struct {
	col int32
	tf  float32
}

// packData is what context packs read besides the search index, built on
// first use and shared by concurrent packs.
type packData struct {
	mu       sync.Mutex
	columns  map[string]*columnIndex  // by bundle
	examples map[string]*exampleIndex // by bundle
	values   map[string]*valueIndex   // by bundle
	tokens   sync.Map                 // a rendered piece → its token count
	rows     sync.Map                 // a rowKey → its schema row, counted
	rules    sync.Map                 // a rule's concept index → its text, counted

	vocabOnce sync.Once
	vocab     *vocabulary
}

// columnIndex returns the column index of a bundle.
func (ix *Index) columnIndex(bundle string) *columnIndex {
	return perBundle(&ix.packs, &ix.packs.columns, bundle, func() *columnIndex { return ix.buildColumnIndex(bundle) })
}

// perBundle returns a bundle's entry of a cache of p, building it on
// first use under p's lock.
func perBundle[T any](p *packData, cache *map[string]*T, bundle string, build func() *T) *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := (*cache)[bundle]; ok {
		return v
	}
	if *cache == nil {
		*cache = map[string]*T{}
	}
	v := build()
	(*cache)[bundle] = v
	return v
}

// columnStopWords are words of column meanings that say how a value is
// stored, not what it is: they would match every question about a number.
var columnStopWords = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return setOf(`varchar char character varying text integer int smallint bigint numeric decimal real
	double precision float boolean bool timestamp date time jsonb json enum array serial uuid null not key primary
	foreign references referencing record records identifier identifying uniquely unique field value values column
	indicating indicates showing shows representing represents specifying specifies measuring measures describing
	describes capturing captures storing stores recording records reflecting reflects denoting denotes providing
	provides giving gives containing contains linking links`)
}}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// columnTerms are the index terms of a text: tokens stemmed, without
// framing and storage words.
func columnTerms(text string, fn func(term string)) {
	columnTermBytes(text, nil, func(t []byte) { fn(string(t)) })
}

// columnTermBytes is columnTerms with each term as bytes that fn must
// not keep, so that a caller that has seen most terms before allocates
// nothing for them. buf is scratch space, returned for reuse.
func columnTermBytes(text string, buf []byte, fn func(term []byte)) []byte {
	framing, stop := questionWords.Get(), columnStopWords.Get()
	return tokenize(textBytes(text), buf, func(tok []byte, _ int) {
		if len(tok) > 1 && !framing[string(tok)] && !stop[string(tok)] {
			fn(stem(tok))
		}
	})
}

// stem reduces an English word to a stem that its inflections share, so
// that "manufacturer name" matches "naming the manufacturer" and "rated
// power" matches "rate of power": plural s and ies; the nouns and adverbs
// ation, ment and ly make ("installed" and "installation", "highly
// engaged" and "high engagement": on the paraphrased train questions 84.0%
// of packs complete without them, 85.3% with); ing and ed, a doubled
// final consonant left by them, and a final e. It is cruder than Porter's
// and needs to be: both sides of a match are stemmed alike. It works in
// t's own bytes, which the tokenizer's buffer lends.
func stem(t []byte) []byte {
	switch {
	case len(t) > 4 && bytes.HasSuffix(t, []byte("ies")):
		t = append(t[:len(t)-3], 'y')
	case len(t) > 3 && t[len(t)-1] == 's' && !bytes.HasSuffix(t, []byte("ss")) && !bytes.HasSuffix(t, []byte("us")):
		t = t[:len(t)-1]
	}
	switch {
	case len(t) > 7 && bytes.HasSuffix(t, []byte("ation")):
		t = t[:len(t)-5]
	case len(t) > 6 && bytes.HasSuffix(t, []byte("ment")):
		t = t[:len(t)-4]
	case len(t) > 5 && bytes.HasSuffix(t, []byte("ly")):
		t = t[:len(t)-2]
	}
	switch {
	case len(t) > 5 && bytes.HasSuffix(t, []byte("ing")):
		t = t[:len(t)-3]
	case len(t) > 4 && bytes.HasSuffix(t, []byte("ed")):
		t = t[:len(t)-2]
	}
	if n := len(t); n > 3 && t[n-1] == t[n-2] && bytes.IndexByte([]byte("aeioulsz"), t[n-1]) < 0 {
		t = t[:n-1]
	}
	if len(t) > 3 && t[len(t)-1] == 'e' {
		t = t[:len(t)-1]
	}
	return t
}

func (ix *Index) buildColumnIndex(bundle string) *columnIndex {
	s := ix.snap
	ci := &columnIndex{postings: map[string][]colPosting{}}
	var lens []float64
	total := 0.0
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if c.Bundle != bundle {
			continue
		}
		facts := c.Table()
		if facts == nil {
			continue
		}
		for _, col := range facts.Columns {
			id := int32(len(ci.cols))
			ci.cols = append(ci.cols, tableColumn{table: i, name: col.Name})
			if ix.layers != nil {
				ci.weight = append(ci.weight, layerWeights[ix.layer(i)])
			}
			ci.compact = append(ci.compact, strings.Join(Tokens(col.Name), ""))
			tf := map[string]float32{}
			n := 0.0
			// The name counts twice: "power_name" is about power names
			// whatever its meaning says besides.
			columnTerms(col.Name, func(t string) { tf[t] += 2; n += 2 })
			columnTerms(s.Text(c, col.Meaning), func(t string) { tf[t]++; n++ })
			for t, f := range tf {
				ci.postings[t] = append(ci.postings[t], colPosting{col: id, tf: f})
			}
			lens = append(lens, n)
			total += n
		}
	}
	avg := total / math.Max(1, float64(len(lens)))
	ci.norm = make([]float64, len(lens))
	for i, l := range lens {
		ci.norm[i] = bm25K1 * (1 - bm25B + bm25B*l/math.Max(avg, 1))
	}
	return ci
}

// BM25 parameters of the column index: the usual values.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scoredColumn is a column and its score against a question.
type scoredColumn struct {
	tableColumn
	score float64
}

// Abbreviated names: a question's word of at least PrefixLen letters
// matches a column whose name holds the word's first PrefixLen letters
// (mktdenom for "denomination", readtimestamp for "timestamps"), at
// PrefixWeight of a whole word's score.
const (
	PrefixLen    = 5
	PrefixWeight = 0.7
)

// match returns the columns of the index the question's terms match, best
// first (ties by table, then name), each score scaled by its table's
// layer.
func (ci *columnIndex) match(question string) []scoredColumn {
	seen := map[string]bool{}
	scores := map[int32]float64{}
	n := float64(len(ci.cols))
	idf := func(df int) float64 { return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)) }
	var words []string
	framing, stop := questionWords.Get(), columnStopWords.Get()
	tokenize([]byte(question), nil, func(tok []byte, _ int) {
		if len(tok) >= PrefixLen && !framing[string(tok)] && !stop[string(tok)] {
			words = append(words, string(tok[:PrefixLen]))
		}
	})
	columnTerms(question, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		ps := ci.postings[t]
		if len(ps) == 0 {
			return
		}
		w := idf(len(ps))
		for _, p := range ps {
			tf := float64(p.tf)
			scores[p.col] += w * tf * (bm25K1 + 1) / (tf + ci.norm[p.col])
		}
	})
	for _, prefix := range dedup(words) {
		var hit []int32
		for id, name := range ci.compact {
			if strings.Contains(name, prefix) {
				hit = append(hit, int32(id))
			}
		}
		if len(hit) == 0 {
			continue
		}
		w := PrefixWeight * idf(len(hit))
		for _, id := range hit {
			scores[id] += w * (bm25K1 + 1) / (1 + ci.norm[id])
		}
	}
	out := make([]scoredColumn, 0, len(scores))
	for id, sc := range scores {
		if ci.weight != nil {
			sc *= ci.weight[id]
		}
		out = append(out, scoredColumn{ci.cols[id], sc})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		if out[a].table != out[b].table {
			return out[a].table < out[b].table
		}
		return out[a].name < out[b].name
	})
	return out
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
