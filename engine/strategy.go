package engine

import (
	"bytes"
	"fmt"
	"time"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/search"
)

// Strategy measures a tenant's manifest and says whether an agent should
// read it whole or search first. One search answer is estimated as DefaultK
// rows of the tenant's average length; reading the manifest whole pays
// off when it costs at most SearchFirstRatio such answers, the crossover
// measured over a 20-question session by the engine okf builds on.
type Strategy struct {
	Concepts       int
	ManifestTokens int
	SearchTokens   int // estimated cost of one search answer
	SearchFirst    bool
}

// SearchFirstRatio is how many search answers the manifest may cost before
// searching first is cheaper.
const SearchFirstRatio = 20

// Measure measures a view's manifest at now.
func Measure(v *View, now time.Time) Strategy {
	m, _ := v.Snap.ManifestAt("", now)
	s := Strategy{Concepts: len(v.Snap.Concepts), ManifestTokens: tokens.Count(string(m))}
	header := tokens.Count(SearchHeader)
	if s.Concepts > 0 {
		perRow := float64(s.ManifestTokens-tokens.Count(string(m[:headerLen(m)]))) / float64(s.Concepts)
		s.SearchTokens = header + int(perRow*search.DefaultK+0.5)
	}
	s.SearchFirst = s.Concepts > 0 && s.ManifestTokens > SearchFirstRatio*s.SearchTokens
	return s
}

// headerLen is the length of the manifest's three header lines.
func headerLen(m []byte) int {
	n := 0
	for range 3 {
		j := bytes.IndexByte(m[n:], '\n')
		if j < 0 {
			return len(m)
		}
		n += j + 1
	}
	return n
}

// Sentence is the advice the manifest tool's description carries.
func (s Strategy) Sentence() string {
	switch {
	case s.Concepts == 0:
		return "This knowledge base is empty for now."
	case s.SearchFirst:
		return fmt.Sprintf("It holds %d concepts (%d tokens, as much as %d searches): search first, and read the manifest of one bundle at most.",
			s.Concepts, s.ManifestTokens, s.ManifestTokens/max(1, s.SearchTokens))
	}
	return fmt.Sprintf("It holds %d concepts (%d tokens, less than %d searches): read it whole once, before searching.",
		s.Concepts, s.ManifestTokens, SearchFirstRatio)
}
