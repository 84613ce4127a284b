package tokens

import (
	"fmt"
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestCount(t *testing.T) {
	cases := map[string]int{
		"":            0,
		"hello world": 2,
		"id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks": 12,
	}
	for s, want := range cases {
		if got := Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestCountInPiecesIsExact(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 5*chunk; i++ {
		fmt.Fprintf(&b, "row %d\tsales orders\t  indented  \n\n\tNümbers 3.14 ünïcode αβγ 你好\n", i)
	}
	s := b.String()
	Count("") // loads the codec
	want, err := codec.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := Count(s); got != want {
		t.Errorf("counted in pieces: %d, whole: %d", got, want)
	}
}
