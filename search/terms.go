package search

// termTable numbers the distinct tokens of a shard. Indexing looks a term
// up for every token of every concept, and a Go map hashes each string
// through its general path; this table hashes the token's bytes once
// (FNV-1a) and compares with the term it finds, growing at half full.
type termTable struct {
	slots []int32  // term id + 1, 0 for empty
	names []string // term id → term
}

func (t *termTable) id(tok []byte) int32 {
	if len(t.slots) < 2*(len(t.names)+1) {
		t.grow()
	}
	h := uint32(2166136261)
	for _, c := range tok {
		h ^= uint32(c)
		h *= 16777619
	}
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.names))
			t.names = append(t.names, string(tok))
			t.slots[i] = id + 1
			return id
		}
		if t.names[s-1] == string(tok) {
			return s - 1
		}
	}
}

// grow doubles the slots, at least to 1024, and places every term again.
func (t *termTable) grow() {
	n := max(1024, 2*len(t.slots))
	t.slots = make([]int32, n)
	mask := uint32(n - 1)
	for id, name := range t.names {
		h := uint32(2166136261)
		for i := 0; i < len(name); i++ {
			h ^= uint32(name[i])
			h *= 16777619
		}
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id) + 1
	}
}
