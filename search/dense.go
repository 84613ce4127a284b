package search

import "math"

// Dense similarity, when a snapshot has embeddings (package embed): each
// concept's vector is compared with the question's, and the similarity
// is added to the BM25 score on BM25's own scale, so that context packs,
// which take a hit by its share of the best score, read fused scores as
// they read plain ones. For a concept d of the searched range,
//
//	score(d) += DenseWeight · top · max(0, (cos(q, d) − DenseFloor) / (1 − DenseFloor))
//
// where top is the best BM25 score of the search and cos the cosine of
// the two vectors. A concept BM25 did not score but whose vector is near
// the question's enters the candidates; a concept as near as can be
// gains half the best BM25 score, enough to lift a paraphrased match
// among the hits without outranking a concept that both matches the
// question's words and resembles it. The fusion runs before the layer
// weights and the name boosts, which apply to fused scores as to plain
// ones. A search that BM25 finds nothing for (top is 0) finds nothing
// still: there is no scale to add similarity on, and a question sharing
// no word with the knowledge is most likely about something else.
//
// The constants are set from first principles, not yet by a sweep: no
// embedding model could be reached where they were written (issue 26).
const (
	// DenseWeight is what the most similar concept gains, as a share of
	// the best BM25 score.
	DenseWeight = 0.5
	// DenseFloor is the cosine at and below which a concept gains
	// nothing: unrelated texts score 0.1 to 0.3 with common models, and
	// noise should neither reorder the hits nor add candidates.
	DenseFloor = 0.3
)

// denseIndex is the concepts' vectors.
type denseIndex struct {
	vecs [][]float32 // each concept's, nil for one without
	inv  []float32   // 1/|v| of each concept's vector
	dim  int
}

// SetVectors gives the index each concept's embedding, in snapshot
// order; a nil entry is a concept without one, as is one whose dimension
// is not the first vector's. It must be called before the index is
// searched, not during.
func (ix *Index) SetVectors(v [][]float32) {
	if len(v) != len(ix.snap.Concepts) {
		panic("search: SetVectors takes one vector a concept")
	}
	d := &denseIndex{vecs: make([][]float32, len(v)), inv: make([]float32, len(v))}
	for i, x := range v {
		if len(x) == 0 || d.dim != 0 && len(x) != d.dim {
			continue
		}
		n := math.Sqrt(dot(x, x))
		if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			continue
		}
		d.dim = len(x)
		d.vecs[i], d.inv[i] = x, float32(1/n)
	}
	if d.dim == 0 {
		d = nil
	}
	ix.dense = d
}

// HasVectors reports whether any concept of the index has a vector.
func (ix *Index) HasVectors() bool { return ix.dense != nil }

// fuseDense adds to the scores of the concepts of [lo, hi) their
// similarity to the query vector q (see DenseWeight), and returns the
// candidates with the concepts it made score. Without vectors, with a q
// of another dimension, or with no BM25 score to scale by, it changes
// nothing.
func (ix *Index) fuseDense(q []float32, lo, hi int32, scores []float64, cands []int32) []int32 {
	d := ix.dense
	if d == nil || len(q) != d.dim {
		return cands
	}
	top := best(cands, scores)
	qn := math.Sqrt(dot(q, q))
	if top <= 0 || qn == 0 || math.IsNaN(qn) || math.IsInf(qn, 0) {
		return cands
	}
	scale := DenseWeight * top / (1 - DenseFloor)
	for i := lo; i < hi; i++ {
		v := d.vecs[i]
		if v == nil {
			continue
		}
		cos := min(1, dot(q, v)*float64(d.inv[i])/qn)
		if !(cos > DenseFloor) {
			continue
		}
		if scores[i] == 0 {
			cands = append(cands, i)
		}
		scores[i] += scale * (cos - DenseFloor)
	}
	return cands
}

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}
