package tokens

import "math"

// Byte-pair encoding, in tiktoken's order: a piece starts as its bytes,
// and of all adjacent parts whose joined bytes are a token, the pair with
// the lowest rank joins, the leftmost of equal ranks first, until no pair
// is a token. The parts left are the piece's tokens.
//
// Parts are kept as a list of the offsets where they start; a min-heap
// keyed by (rank, start) offers the pair to join next. Joining changes the
// pairs a part forms with its neighbours, so an offer whose part no longer
// has that rank is out of date and passed over.

const unjoinable = math.MaxUint32

// onStack is the piece length below which the lists live on the stack.
const onStack = 64

type offer struct {
	rank  uint32
	start int32
}

// mergeCount counts the tokens of a piece that is not one itself.
func (t *table) mergeCount(piece string) int {
	n := len(piece)
	var nextBuf, backBuf [onStack + 1]int32
	var rankBuf [onStack + 1]uint32
	var heapBuf [onStack]offer
	next, back, rank, heap := nextBuf[:0], backBuf[:0], rankBuf[:0], offers(heapBuf[:0])
	if n > onStack {
		next, back, rank, heap = make([]int32, 0, n+1), make([]int32, 0, n+1), make([]uint32, 0, n+1), make(offers, 0, n)
	}
	for i := 0; i <= n; i++ {
		next = append(next, int32(i+1))
		back = append(back, int32(i-1))
		rank = append(rank, unjoinable)
	}
	next[n] = -1

	// joined is the rank of the part at start joined with the one after it.
	joined := func(start int32) uint32 {
		mid := next[start]
		if mid < 0 || next[mid] < 0 {
			return unjoinable
		}
		if r, ok := t.rank(piece[start:next[mid]]); ok {
			return r
		}
		return unjoinable
	}
	for i := int32(0); int(i) < n-1; i++ {
		if r := joined(i); r != unjoinable {
			rank[i] = r
			heap = append(heap, offer{r, i})
		}
	}
	heap.order()
	parts := n
	for len(heap) > 0 {
		o := heap.take()
		if rank[o.start] != o.rank {
			continue // out of date
		}
		gone := next[o.start]
		after := next[gone]
		rank[gone] = unjoinable
		next[o.start] = after
		if after >= 0 {
			back[after] = o.start
		}
		parts--
		for _, p := range [2]int32{o.start, back[o.start]} {
			if p < 0 {
				continue
			}
			if rank[p] = joined(p); rank[p] != unjoinable {
				heap.offer(offer{rank[p], p})
			}
		}
	}
	return parts
}

// offers is a binary min-heap by rank, then start.
type offers []offer

func (h offers) before(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].start < h[b].start
}

func (h offers) order() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.sink(i)
	}
}

func (h *offers) offer(o offer) {
	*h = append(*h, o)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s.before(i, up) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *offers) take() offer {
	s := *h
	top := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.sink(0)
	return top
}

func (h offers) sink(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.before(c+1, c) {
			c++
		}
		if !h.before(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
