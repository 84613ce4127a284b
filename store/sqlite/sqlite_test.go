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
