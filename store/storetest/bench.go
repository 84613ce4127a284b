package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/okf-tools/okf/store"
)

// Corpus makes n documents of about 2 KB each, shaped like a catalogue
// concept (frontmatter, schema table, links), spread over bundles of 500.
// salt varies every body, so two corpora with different salts share no
// content.
func Corpus(n int, salt string) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for i := range n {
		bundle := fmt.Sprintf("b%03d", i/500)
		if out[bundle] == nil {
			out[bundle] = map[string][]byte{}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntype: BigQuery Table\ntitle: Table %d\ndescription: One row per event of kind %d (%s).\n---\n# Schema\n\n| column | type | meaning |\n| --- | --- | --- |\n", i, i%37, salt)
		for c := 0; b.Len() < 1900; c++ {
			fmt.Fprintf(&b, "| col_%d_%d | STRING | the %d-th attribute of table %d |\n", i, c, c, i)
		}
		fmt.Fprintf(&b, "\n# Joins\n\nSee [table %d](t%05d.md).\n", (i+1)%n, (i+1)%n)
		out[bundle][fmt.Sprintf("tables/t%05d.md", i)] = []byte(b.String())
	}
	return out
}

var initialRuns atomic.Int64

// BenchmarkSync measures Sync on a store at dsn with n documents: a first
// import into an empty tenant, a sync of the unchanged tree, and a sync
// where one document changed.
func BenchmarkSync(b *testing.B, dsn string, n int) {
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.Run(fmt.Sprintf("initial/%d", n), func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			// Testing may call this function more than once on the
			// same store; a tenant name never used before keeps every
			// iteration a first import.
			tenant := fmt.Sprintf("initial%d", initialRuns.Add(1))
			docs := Corpus(n, tenant)
			b.StartTimer()
			if _, err := st.Sync(ctx, tenant, docs, "import"); err != nil {
				b.Fatal(err)
			}
		}
	})
	docs := Corpus(n, "steady")
	if _, err := st.Sync(ctx, "steady", docs, "import"); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("unchanged/%d", n), func(b *testing.B) {
		for b.Loop() {
			c, err := st.Sync(ctx, "steady", docs, "again")
			if err != nil || c.Changed {
				b.Fatalf("unchanged sync: %+v, %v", c, err)
			}
		}
	})
	b.Run(fmt.Sprintf("one-changed/%d", n), func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			docs["b000"]["tables/t00000.md"] = fmt.Appendf(nil, "edit %d\n", i)
			c, err := st.Sync(ctx, "steady", docs, "edit")
			if err != nil || len(c.Changes) != 1 {
				b.Fatalf("one-document sync: %+v, %v", c, err)
			}
		}
	})
}
