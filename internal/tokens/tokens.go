// Package tokens counts tokens the way current models bill them, with the
// o200k_base encoding embedded in the binary, so counting works offline.
//
// It counts as tiktoken-go does, with less built first: the vocabulary is
// the tokens' lengths and bytes in o200k.bin (by gen, from tiktoken-go's),
// over which the first count builds a 1 MB hash table (5 ms), and the text
// is split by a scanner that matches o200k's pre-tokenizer expression.
// tiktoken-go built a map of 200,000 tokens (15 ms and 9 MB) and ran that
// expression with a backtracking engine (issue 17); tokens_test.go holds
// the counts equal to its on the corpora and by fuzzing.
package tokens

//go:generate go run ./gen o200k.bin

import (
	_ "embed"
	"strings"
	"unicode/utf8"

	"github.com/okf-tools/okf/internal/lazy"
)

//go:embed o200k.bin
var blob string

// Count returns the number of o200k_base tokens in s. It panics only if the
// embedded encoding is corrupt, which is a build defect.
func Count(s string) int {
	v := vocabulary.Get()
	if !utf8.ValidString(s) {
		// tiktoken's splitter reads runes: each invalid byte is U+FFFD.
		s = string([]rune(s))
	}
	n := 0
	// Pieces that are no token cost a byte-pair merge each; a text repeats
	// many (a table's rule, a column name), so each is merged once.
	var merged map[string]int
	for i := 0; i < len(s); {
		end := nextPiece(s, i)
		if end == i {
			i++ // U+007F, in no piece
			continue
		}
		piece := s[i:end]
		i = end
		if _, ok := v.rank(piece); ok {
			n++
			continue
		}
		c, ok := merged[piece]
		if !ok {
			if merged == nil {
				merged = map[string]int{}
			}
			c = v.mergeCount(piece)
			merged[piece] = c
		}
		n += c
	}
	return n
}

// table finds a token's rank from its bytes: an open-addressing table
// over blob's tokens, built on first use. blob (see internal/tokens/vocab)
// holds only the tokens' lengths and bytes, so that the repository keeps
// no prebuilt table.
//
// A slot holds rank+1 (bits 0-17) and the top 14 bits of the token's
// FNV-1a hash; 0 is empty. A token's bytes are found from its rank by the
// offset of every 32nd rank and the lengths after it, so that the table
// stays 1 MB: on this machine memory touched costs more than the adds.
type table struct {
	slots   []uint32
	every32 []uint32 // the offset in blob of ranks 0, 32, 64, …
	lens    int      // where the lengths start in blob
}

const (
	magic      = "o200kv2\n"
	rankBits   = 18
	rankMask   = 1<<rankBits - 1
	tableSlots = 1 << 18 // a load of 0.76 for o200k's 199,998 tokens
)

var vocabulary = lazy.Value[*table]{New: readTable}

// readTable checks blob's header and builds the table.
func readTable() *table {
	m := len(magic)
	if !strings.HasPrefix(blob, magic) || len(blob) < m+4 {
		panic("tokens: o200k.bin is not the vocabulary file")
	}
	n := int(blob[m]) | int(blob[m+1])<<8 | int(blob[m+2])<<16 | int(blob[m+3])<<24
	t := &table{slots: make([]uint32, tableSlots), every32: make([]uint32, 0, n/32+1), lens: m + 4}
	off := t.lens + n
	if n+1 >= 1<<rankBits || off > len(blob) {
		panic("tokens: o200k.bin is truncated or corrupt")
	}
	for r := 0; r < n; r++ {
		if r%32 == 0 {
			t.every32 = append(t.every32, uint32(off))
		}
		l := int(blob[t.lens+r])
		if l == 0 || off+l > len(blob) {
			panic("tokens: o200k.bin is truncated or corrupt")
		}
		h := hash(blob[off : off+l])
		i := h & (tableSlots - 1)
		for t.slots[i] != 0 {
			i = (i + 1) & (tableSlots - 1)
		}
		t.slots[i] = uint32(r+1) | h&^rankMask
		off += l
	}
	if off != len(blob) {
		panic("tokens: o200k.bin is truncated or corrupt")
	}
	return t
}

// hash is FNV-1a: tokens are short, and a byte at a time is as quick as
// a word at a time on them (measured).
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// token returns the bytes of the token of rank r.
func (t *table) token(r int) string {
	off := int(t.every32[r/32])
	for k := r &^ 31; k < r; k++ {
		off += int(blob[t.lens+k])
	}
	return blob[off : off+int(blob[t.lens+r])]
}

// rank returns the rank of a token, or false when piece is none.
func (t *table) rank(piece string) (uint32, bool) {
	h := hash(piece)
	tag := h &^ rankMask
	for i := h & (tableSlots - 1); ; i = (i + 1) & (tableSlots - 1) {
		e := t.slots[i]
		if e == 0 {
			return 0, false
		}
		if e&^rankMask != tag {
			continue
		}
		r := int(e&rankMask) - 1
		if int(blob[t.lens+r]) == len(piece) && t.token(r) == piece {
			return uint32(r), true
		}
	}
}
