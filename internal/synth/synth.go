// Package synth generates a synthetic SQL catalogue in the shape of the
// reference corpus the langonrock engine publishes figures for: one OKF
// concept a table, about 2 KB each, with v0.2 frontmatter, a `# Schema`
// table, `# Joins` that link to other tables of the same bundle, and a
// query pattern. Bundles hold 500 concepts each. The output depends only on
// the size and the seed, so benchmarks can be repeated and compared.
package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// BundleSize is the number of concepts a generated bundle holds.
const BundleSize = 500

// Doc is one generated document.
type Doc struct {
	Bundle, Path string
	Content      []byte
}

var (
	domains  = []string{"sales", "finance", "logistics", "marketing", "support", "inventory", "billing", "risk", "hr", "product"}
	entities = []string{"orders", "customers", "invoices", "shipments", "payments", "refunds", "tickets", "campaigns", "accounts", "contracts", "warehouses", "suppliers", "products", "sessions", "events", "employees", "claims", "subscriptions", "returns", "carriers"}
	suffixes = []string{"daily", "raw", "clean", "snapshot", "history", "v2", "agg", "staging", "archive", "current"}
	colNames = []string{"id", "created_at", "updated_at", "status", "amount", "currency", "region", "channel", "owner_id", "score", "quantity", "unit_price", "discount", "country", "segment", "priority", "due_date", "closed_at", "source", "category", "tier", "margin", "weight", "duration_s", "is_active"}
	colTypes = []string{"INT64", "STRING", "NUMERIC", "TIMESTAMP", "DATE", "BOOL", "FLOAT64"}
	words    = []string{"recorded", "when", "the", "row", "was", "last", "changed", "by", "upstream", "pipeline", "identifier", "of", "assigned", "value", "reported", "in", "local", "currency", "after", "tax", "net", "gross", "flag", "set", "for", "rows", "that", "count", "toward", "revenue", "region", "code", "ISO", "customer", "facing", "internal", "only", "derived", "from", "events", "nightly", "batch", "late", "arriving", "deduplicated", "key"}
)

// Generate returns n concepts spread over bundles of BundleSize, plus an
// index.md per bundle, generated from seed.
func Generate(n int, seed uint64) []Doc {
	r := rand.New(rand.NewPCG(seed, 0x6f6b66))
	var docs []Doc
	for start := 0; start < n; start += BundleSize {
		size := min(BundleSize, n-start)
		bundle := fmt.Sprintf("b%03d", start/BundleSize)
		names := make([]string, size)
		for i := range names {
			names[i] = tableName(start + i)
		}
		var index strings.Builder
		index.WriteString("# " + bundle + "\n\n")
		for i, name := range names {
			docs = append(docs, Doc{Bundle: bundle, Path: "tables/" + name + ".md", Content: table(r, name, names, i)})
			fmt.Fprintf(&index, "* [%s](tables/%s.md) - Table %s.\n", name, name, name)
		}
		docs = append(docs, Doc{Bundle: bundle, Path: "index.md", Content: []byte(index.String())})
	}
	return docs
}

// Write writes docs as a folder of bundles under dir (dir/b000/tables/…),
// so the catalogue reads as any folder okf compiles or draws. dir must be
// new or empty, so a catalogue is never mixed into other files.
func Write(dir string, docs []Doc) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new or empty folder for the catalogue", dir)
	}
	for _, d := range docs {
		p := filepath.Join(dir, d.Bundle, filepath.FromSlash(d.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, d.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func tableName(i int) string {
	d := domains[i%len(domains)]
	e := entities[(i/len(domains))%len(entities)]
	s := suffixes[(i/(len(domains)*len(entities)))%len(suffixes)]
	return fmt.Sprintf("%s_%s_%s_%d", d, e, s, i)
}

func sentence(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[r.IntN(len(words))]
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "." // words are ASCII
}

func table(r *rand.Rand, name string, names []string, self int) []byte {
	var b strings.Builder
	parts := strings.Split(name, "_")
	fmt.Fprintf(&b, "---\ntype: BigQuery Table\ntitle: %s %s (%s)\n", strings.ToUpper(parts[0][:1])+parts[0][1:], parts[1], parts[2])
	fmt.Fprintf(&b, "description: One row per %s record in the %s domain. %s\n", strings.TrimSuffix(parts[1], "s"), parts[0], sentence(r, 6))
	fmt.Fprintf(&b, "tags: [%s, %s, %s]\n", parts[0], parts[1], parts[2])
	fmt.Fprintf(&b, "grain: %s_id\n", strings.TrimSuffix(parts[1], "s"))
	b.WriteString("generated: {by: process:okf-bench, at: 2026-01-01T00:00:00Z}\n---\n\n")
	fmt.Fprintf(&b, "# Schema\n\n| Column | Type | Description |\n|---|---|---|\n")
	cols := 12 + r.IntN(6)
	for i := 0; i < cols; i++ {
		col := colNames[r.IntN(len(colNames))]
		if i == 0 {
			col = strings.TrimSuffix(parts[1], "s") + "_id"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", col, colTypes[r.IntN(len(colTypes))], sentence(r, 5+r.IntN(6)))
	}
	b.WriteString("\n# Joins\n\n")
	for j := 0; j < 2+r.IntN(3); j++ {
		other := r.IntN(len(names))
		if other == self {
			continue
		}
		fmt.Fprintf(&b, "* [%s](%s.md) on `%s_id`. %s\n", names[other], names[other], strings.TrimSuffix(parts[1], "s"), sentence(r, 5))
	}
	fmt.Fprintf(&b, "\n# Common query patterns\n\n```sql\n-- %s\nSELECT status, COUNT(*) AS n\nFROM `%s`\nGROUP BY status\nORDER BY n DESC\n```\n", sentence(r, 6), name)
	return []byte(b.String())
}
