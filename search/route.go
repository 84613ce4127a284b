package search

import (
	"math"
	"sort"
)

// RouteHits is how many search hits across every bundle vote for a
// question's bundle, and RouteVocabularyWeight how much more the bundles'
// vocabularies count.
const (
	RouteHits             = 16
	RouteVocabularyWeight = 2
	// RouteEvidence is how many bundles' scores a pack reports.
	RouteEvidence = 3
)

// BundleScore is how strongly a question points at a bundle.
type BundleScore struct {
	Bundle string  `json:"bundle"`
	Score  float64 `json:"score"`
}

// route decides which bundle of the index a question belongs to, for a
// pack that names none. Each bundle scores the question's words it knows
// (stemmed, from its concepts' ids, titles and summaries and its tables'
// column names and meanings), each word weighted by how few bundles know
// it: a bundle's vocabulary, unlike its best few search hits, holds the
// words of a question that asks for columns by what they mean. A tenant of
// one bundle needs no scoring. It returns "" when no bundle knows a word
// of the question, and the best RouteEvidence scores, best first.
func (ix *Index) route(question string) (string, []BundleScore) {
	if len(ix.snap.Bundles) == 1 {
		return ix.snap.Bundles[0].Name, nil
	}
	v := ix.vocabulary()
	sums := map[string]float64{}
	seen := map[string]bool{}
	columnTerms(question, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		bs := v.of(t)
		if len(bs) == 0 {
			return
		}
		w := math.Log(1 + float64(len(v.names))/float64(len(bs)))
		for _, b := range bs {
			sums[v.names[b]] += w
		}
	})
	// The search's best hits, as a share of their total, count half as
	// much as the vocabulary's share: the hits find the rules a question
	// names, the vocabulary the columns it describes, and a few hits on a
	// common word ("power") would otherwise outvote a bundle that knows
	// the question's rarer words ("heroes"). The weights are the sweep's
	// in BENCHMARKS.md.
	hits := map[string]float64{}
	total, vocab := 0.0, 0.0
	for _, h := range ix.Search(question, Options{K: RouteHits, NoExpand: true, noPos: true}) {
		hits[h.Concept.Bundle] += h.Score
		total += h.Score
	}
	for _, s := range sums {
		vocab += s
	}
	for b := range hits {
		if _, ok := sums[b]; !ok {
			sums[b] = 0
		}
	}
	for b := range sums {
		sums[b] = RouteVocabularyWeight*sums[b]/math.Max(vocab, 1e-9) + hits[b]/math.Max(total, 1e-9)
	}
	out := make([]BundleScore, 0, len(sums))
	for b, s := range sums {
		out = append(out, BundleScore{Bundle: b, Score: math.Round(s*1000) / 1000})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Bundle < out[j].Bundle
	})
	if len(out) == 0 {
		return "", nil
	}
	return out[0].Bundle, out[:min(len(out), RouteEvidence)]
}

// vocabulary is the stemmed words each bundle knows.
type vocabulary struct {
	names   []string         // bundle names, in snapshot order
	ids     map[string]int32 // word → its entry in bundles
	bundles [][]int32        // the bundles that know each word, ascending
}

// of returns the bundles that know a word.
func (v *vocabulary) of(word string) []int32 {
	if i, ok := v.ids[word]; ok {
		return v.bundles[i]
	}
	return nil
}

// vocabulary returns the index's bundle vocabularies, read on first use.
func (ix *Index) vocabulary() *vocabulary {
	p := &ix.packs
	p.vocabOnce.Do(func() {
		v := &vocabulary{ids: map[string]int32{}}
		s := ix.snap
		var buf []byte
		for b, br := range s.Bundles {
			v.names = append(v.names, br.Name)
			add := func(text string) {
				buf = columnTermBytes(text, buf, func(t []byte) {
					i, ok := v.ids[string(t)]
					if !ok {
						i = int32(len(v.bundles))
						v.ids[string(t)] = i
						v.bundles = append(v.bundles, nil)
					}
					if l := v.bundles[i]; len(l) == 0 || l[len(l)-1] != int32(b) {
						v.bundles[i] = append(l, int32(b))
					}
				})
			}
			for i := range s.Concepts {
				c := &s.Concepts[i]
				if c.Bundle != br.Name {
					continue
				}
				add(c.ID)
				add(c.Title)
				add(c.Summary)
				if t := c.Table(); t != nil {
					for _, col := range t.Columns {
						add(col.Name)
						add(s.Text(c, col.Meaning))
					}
				}
			}
		}
		p.vocab = v
	})
	return p.vocab
}
