// Package vocab builds the o200k_base vocabulary file internal/tokens
// embeds (o200k.bin) from tiktoken-go's, for internal/tokens/gen and for
// the test that holds the committed file to it. Nothing in okf's binary
// imports it.
package vocab

import (
	"encoding/binary"
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// Magic starts the file.
const Magic = "o200kv1\n"

// Slots is the size of the hash table, a power of two: a load of 0.76.
// A slot holds rank+1 in its low RankBits and the hash's top bits above,
// so that a probe tells most tokens apart without reading their bytes.
const (
	Slots    = 1 << 18
	RankBits = 18
)

// Hash is FNV-1a over a token's bytes.
func Hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Build returns the file: the magic, the number of tokens n and of slots
// (uint32 little-endian each), n+1 offsets into the bytes, the slots
// (0 for empty; linear probing from Hash), and the tokens' bytes
// in rank order.
func Build() ([]byte, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, err
	}
	var tokens []string
	seen := map[string]bool{}
	for rank := uint(0); ; rank++ {
		s, err := codec.Decode([]uint{rank})
		if err != nil {
			break
		}
		if s == "" || seen[s] {
			return nil, fmt.Errorf("rank %d: empty or repeated token %q", rank, s)
		}
		seen[s] = true
		tokens = append(tokens, s)
	}
	if len(tokens) < 199_000 {
		return nil, fmt.Errorf("read %d tokens of o200k_base, expected 199,998", len(tokens))
	}
	n := len(tokens)
	le := binary.LittleEndian
	out := []byte(Magic)
	out = le.AppendUint32(out, uint32(n))
	out = le.AppendUint32(out, Slots)
	off := uint32(0)
	for _, t := range tokens {
		out = le.AppendUint32(out, off)
		off += uint32(len(t))
	}
	out = le.AppendUint32(out, off)
	if n+1 >= 1<<RankBits {
		return nil, fmt.Errorf("%d tokens do not fit %d bits", n, RankBits)
	}
	slots := make([]uint32, Slots)
	for rank, t := range tokens {
		h := Hash(t)
		i := h & (Slots - 1)
		for slots[i] != 0 {
			i = (i + 1) & (Slots - 1)
		}
		slots[i] = uint32(rank) + 1 | h>>RankBits<<RankBits
	}
	for _, s := range slots {
		out = le.AppendUint32(out, s)
	}
	for _, t := range tokens {
		out = append(out, t...)
	}
	return out, nil
}
