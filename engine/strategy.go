package engine

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
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

// The knowledge strategies an agent can be given, defined here once so
// that okf eval retrieval measures what the agent reads: schema is the
// baseline without business knowledge, auto picks between pasting the
// documents whole and context packs.

// SchemaText is every table's Schema section of a bundle ("" for every
// bundle): the tables and columns with their types, keys and meanings,
// and none of the business rules. It is the schema strategy's knowledge;
// tables are the refs (bundle/id) of the tables it shows.
func SchemaText(s *readmodel.Snapshot, bundle string) (text string, tables []string) {
	var b strings.Builder
	for i := range s.Concepts {
		t := &s.Concepts[i]
		if bundle != "" && t.Bundle != bundle || !t.IsTable() {
			continue
		}
		body := s.Body(t)
		if sec, ok := t.Section("schema"); ok {
			body = body[sec.Start:sec.End]
		}
		fmt.Fprintf(&b, "## %s\n%s\n", t.ID, body)
		tables = append(tables, t.Bundle+"/"+t.ID)
	}
	return b.String(), tables
}

// AutoPastesRaw reports whether, for a session of n questions of one
// database, pasting its documents of rawTokens once is cheaper than a
// context pack of packTokens a question: the auto strategy's choice. In
// one conversation whose every call re-reads the earlier context at a
// cache rate c, the raw session bills R(1 + c·n) and the packs nP(1 + c·n):
// the cache rate cancels, and raw wins when R ≤ n·P, that is from R/P
// questions on. Runs asked apart sharing a cached prefix come out the
// same way.
func AutoPastesRaw(rawTokens, packTokens, n int) bool {
	return rawTokens <= n*packTokens
}
