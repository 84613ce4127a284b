// Package tokens counts tokens the way current models bill them, with the
// o200k_base encoding embedded in the binary, so counting works offline.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var (
	once  sync.Once
	codec tokenizer.Codec
	err   error
)

// chunk is the size above which a text is counted in pieces, so that
// counting a multi-megabyte manifest does not hold all its tokens at once.
const chunk = 64 << 10

// Count returns the number of o200k_base tokens in s. It panics only if the
// embedded encoding cannot be loaded, which is a build defect.
//
// A long text is counted in pieces cut after a newline that a
// non-whitespace character follows: o200k's pre-tokenizer never joins
// across such a point, so the sum is exact.
func Count(s string) int {
	once.Do(func() { codec, err = tokenizer.Get(tokenizer.O200kBase) })
	if err != nil {
		panic("tokens: loading o200k_base: " + err.Error())
	}
	total := 0
	for len(s) > chunk {
		cut := cutPoint(s)
		if cut <= 0 {
			break
		}
		total += countPiece(s[:cut])
		s = s[cut:]
	}
	return total + countPiece(s)
}

// cutPoint returns the first offset at or after chunk that follows a
// newline and precedes a non-whitespace byte, or 0 if there is none.
func cutPoint(s string) int {
	for i := chunk; i < len(s); i++ {
		if s[i-1] == '\n' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
			return i
		}
	}
	return 0
}

func countPiece(s string) int {
	n, cerr := codec.Count(s)
	if cerr != nil {
		// Count fails only on text the encoder cannot split; fall back to
		// the usual four characters a token.
		return (len(s) + 3) / 4
	}
	return n
}
