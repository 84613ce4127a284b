package search

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
)

var (
	sharedOnce sync.Once
	sharedDocs map[string][]readmodel.Doc // bundle → its documents
)

// sharedBundles compiles every database of ../shared/data that okf compile
// reads (the eight LiveSQLBench databases and BIRD superhero) into
// documents, a bundle each, once per test binary.
func sharedBundles(tb testing.TB) map[string][]readmodel.Doc {
	tb.Helper()
	// Skip, or fail under OKF_REQUIRE_SHARED, before the once.
	shareddata.Dir(tb, "livesqlbench", "base-lite")
	shareddata.Dir(tb, "bird")
	sharedOnce.Do(func() {
		sharedDocs = map[string][]readmodel.Doc{}
		for _, b := range compiletest.Shared(tb, "livesqlbench/base-lite", "bird") {
			for _, p := range b.Paths() {
				sharedDocs[b.Name] = append(sharedDocs[b.Name], readmodel.Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
			}
		}
	})
	if len(sharedDocs) == 0 {
		tb.Fatal("no shared bundles")
	}
	return sharedDocs
}

// sharedSnapshot builds a snapshot of the named shared bundles, or of all
// of them (539 concepts) when none is named.
func sharedSnapshot(tb testing.TB, bundles ...string) *readmodel.Snapshot {
	tb.Helper()
	all := sharedBundles(tb)
	if len(bundles) == 0 {
		for name := range all {
			bundles = append(bundles, name)
		}
		slices.Sort(bundles)
	}
	var docs []readmodel.Doc
	for _, name := range bundles {
		docs = append(docs, all[name]...)
	}
	s, st := readmodel.Build("shared", docs)
	if len(st.Diagnostics) > 0 {
		tb.Fatalf("diagnostics: %v", st.Diagnostics)
	}
	return s
}

// sharedTenant is every shared bundle in one tenant.
func sharedTenant(tb testing.TB) *readmodel.Snapshot { return sharedSnapshot(tb) }

// trainQ is one LiveSQLBench train question.
type trainQ struct {
	ID   string `json:"instance_id"`
	DB   string `json:"selected_database"`
	Text string `json:"query"`
}

// trainQuestions reads the LiveSQLBench train questions, each once.
func trainQuestions(tb testing.TB) []trainQ {
	tb.Helper()
	var out []trainQ
	seen := map[string]bool{}
	for _, f := range []string{"lite_7db_train.jsonl", "lite_3db_train.jsonl"} {
		data, err := os.ReadFile(filepath.Join(shareddata.Dir(tb, "livesqlbench", "questions"), f))
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var q trainQ
			if json.Unmarshal(line, &q) == nil && q.Text != "" && !seen[q.ID] {
				seen[q.ID] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// trainQuestion is the train question of that id.
func trainQuestion(tb testing.TB, id string) trainQ {
	tb.Helper()
	for _, q := range trainQuestions(tb) {
		if q.ID == id {
			return q
		}
	}
	tb.Fatalf("no question %s", id)
	return trainQ{}
}

// BenchmarkContextShared packs the LiveSQLBench train questions on the
// shared tenant, no bundle named, as a server answers them warm.
func BenchmarkContextShared(b *testing.B) {
	ix := Build(sharedTenant(b))
	qs := trainQuestions(b)
	ix.Context(qs[0].Text, PackOptions{Count: tokens.Count})
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.Context(qs[i%len(qs)].Text, PackOptions{Count: tokens.Count})
		i++
	}
}
