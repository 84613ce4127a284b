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

// Count returns the number of o200k_base tokens in s. It panics only if the
// embedded encoding cannot be loaded, which is a build defect.
func Count(s string) int {
	once.Do(func() { codec, err = tokenizer.Get(tokenizer.O200kBase) })
	if err != nil {
		panic("tokens: loading o200k_base: " + err.Error())
	}
	n, cerr := codec.Count(s)
	if cerr != nil {
		// Count fails only on text the encoder cannot split; fall back to
		// the usual four characters a token.
		return (len(s) + 3) / 4
	}
	return n
}
