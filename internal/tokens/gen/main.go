// Command gen writes internal/tokens/o200k.bin, the o200k_base vocabulary
// as internal/tokens reads it: every token's length and bytes in rank
// order (see internal/tokens/vocab). It reads the vocabulary from
// tiktoken-go, decoding each rank. Run it with go generate in
// internal/tokens after upgrading tiktoken-go.
package main

import (
	"fmt"
	"os"

	"github.com/okf-tools/okf/internal/tokens/vocab"
)

func main() {
	out := "o200k.bin"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	blob, err := vocab.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(out, blob, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
