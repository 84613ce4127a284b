package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/store/sqlite"
	"github.com/okf-tools/okf/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "data", "okf.db")
	})
}

func BenchmarkSync(b *testing.B) {
	for _, n := range []int{500, 5000, 20000} {
		storetest.BenchmarkSync(b, filepath.Join(b.TempDir(), "okf.db"), n)
	}
}

func TestRefusesOtherSchemaVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "okf.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE okf_meta SET value = '99' WHERE key = 'schema'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("opening a store of another schema version: %v", err)
	}
}

func TestOpenRefusesFolderAsFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := sqlite.Open(context.Background(), dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("opening a folder as the store file: %v, want an error naming it", err)
	}
}

// TestAddsEmbeddingsToAnOlderStore opens a store written before the
// embedding cache: it gains the table, keeps its schema version (so an
// older okf still reads it) and caches.
func TestAddsEmbeddingsToAnOlderStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "okf.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(ctx, "t", map[string]map[string][]byte{"b": {"a.md": []byte("# A\n")}}, "one"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TABLE okf_embeddings`, `DELETE FROM okf_meta WHERE key = 'embeddings'`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := strings.Repeat("ab", 32)
	if err := st.PutEmbeddings(ctx, "t", "m", map[string][]byte{key: {1, 2, 3, 4}}); err != nil {
		t.Fatalf("caching in an upgraded store: %v", err)
	}
	if got, err := st.Embeddings(ctx, "t", "m", []string{key}); err != nil || len(got[key]) != 4 {
		t.Fatalf("reading the cache of an upgraded store: %v, %v", got, err)
	}
	if h, err := st.Head(ctx, "t"); err != nil || h.ID != 1 {
		t.Fatalf("the upgraded store's history: head %d, %v", h.ID, err)
	}
	db, err = sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`SELECT value FROM okf_meta WHERE key = 'schema'`).Scan(&v); err != nil || v != "1" {
		t.Fatalf("schema version after the upgrade: %q, %v; want 1", v, err)
	}
}
