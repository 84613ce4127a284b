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
const Magic = "o200kv2\n"

// Build returns the file: the magic, the number of tokens n (uint32
// little-endian), each token's length in rank order (a byte each: none is
// longer than 128), and their bytes in rank order. internal/tokens builds
// its lookup table from it on first use; a prebuilt one would more than
// double the file.
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
		if s == "" || len(s) > 255 || seen[s] {
			return nil, fmt.Errorf("rank %d: empty, overlong or repeated token %q", rank, s)
		}
		seen[s] = true
		tokens = append(tokens, s)
	}
	if len(tokens) < 199_000 {
		return nil, fmt.Errorf("read %d tokens of o200k_base, expected 199,998", len(tokens))
	}
	out := binary.LittleEndian.AppendUint32([]byte(Magic), uint32(len(tokens)))
	for _, t := range tokens {
		out = append(out, byte(len(t)))
	}
	for _, t := range tokens {
		out = append(out, t...)
	}
	return out, nil
}
