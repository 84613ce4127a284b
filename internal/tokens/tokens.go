// Package tokens counts tokens the way current models bill them, with the
// o200k_base encoding embedded in the binary, so counting works offline.
//
// It counts as tiktoken does, without building anything first: the
// vocabulary is a table generated into o200k.bin (by gen, from
// tiktoken-go's), read where it lies in the binary, and the text is split
// by a scanner that matches o200k's pre-tokenizer expression. tiktoken-go
// built a map of 200,000 tokens (15 ms and 9 MB) and ran that expression
// with a backtracking engine before it counted a word (issue 17);
// tokens_test.go holds the counts equal to its on the corpora and by
// fuzzing.
package tokens

//go:generate go run ./gen o200k.bin

import (
	_ "embed"
	"encoding/binary"
	"strings"
	"unicode/utf8"
	"unsafe"

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

// A view of blob; see internal/tokens/vocab for its layout.
type table struct {
	n, slots          uint32
	offs, slot, bytes int // where each part starts in blob
}

const (
	magic    = "o200kv1\n"
	rankBits = 18
	rankMask = 1<<rankBits - 1
)

var vocabulary = lazy.Value[*table]{New: readTable}

// readTable checks blob's header and finds its parts.
func readTable() *table {
	if !strings.HasPrefix(blob, magic) || len(blob) < len(magic)+8 {
		panic("tokens: o200k.bin is not the vocabulary file")
	}
	t := &table{n: u32(len(magic)), slots: u32(len(magic) + 4)}
	t.offs = len(magic) + 8
	t.slot = t.offs + 4*int(t.n+1)
	t.bytes = t.slot + 4*int(t.slots)
	if t.slots == 0 || t.slots&(t.slots-1) != 0 || t.bytes > len(blob) || t.bytes+int(u32(t.offs+4*int(t.n))) != len(blob) {
		panic("tokens: o200k.bin is truncated or corrupt")
	}
	return t
}

// blobBytes is blob as bytes, read only, for single loads of its words.
var blobBytes = unsafe.Slice(unsafe.StringData(blob), len(blob))

func u32(at int) uint32 { return binary.LittleEndian.Uint32(blobBytes[at : at+4]) }

// rank returns the rank of a token, or false when piece is none.
func (t *table) rank(piece string) (uint32, bool) {
	h := uint32(2166136261) // FNV-1a, as the generator hashed
	for i := 0; i < len(piece); i++ {
		h ^= uint32(piece[i])
		h *= 16777619
	}
	tag := h &^ rankMask
	mask := t.slots - 1
	for i := h & mask; ; i = (i + 1) & mask {
		s := u32(t.slot + 4*int(i))
		if s == 0 {
			return 0, false
		}
		if s&^rankMask != tag {
			continue
		}
		r := s&rankMask - 1
		at := t.offs + 4*int(r)
		if a, b := u32(at), u32(at+4); int(b-a) == len(piece) && blob[t.bytes+int(a):t.bytes+int(b)] == piece {
			return r, true
		}
	}
}
