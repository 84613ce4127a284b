package duckdb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/sqlguard"
)

// A view over CSV or Parquet files reads them only from the folders the
// operator allows (allowed_directories); the agent still cannot name a
// file itself, and no other folder opens.
func TestAllowedDirectories(t *testing.T) {
	shared, private := t.TempDir(), t.TempDir()
	for dir, body := range map[string]string{shared: "region,total\nnorth,12\nsouth,30\n", private: "secret\nhunter2\n"} {
		if err := os.WriteFile(filepath.Join(dir, "data.csv"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := writeFixture(t, "CREATE VIEW sales AS SELECT * FROM read_csv('"+filepath.Join(shared, "data.csv")+"');\n"+
		"CREATE VIEW leak AS SELECT * FROM read_csv('"+filepath.Join(private, "data.csv")+"');\n")
	ctx := context.Background()

	closed := openFixture(t, path, fixtureOptions)
	if _, err := closed.Query(ctx, "test", "SELECT sum(total) FROM sales"); err == nil {
		t.Errorf("a view over a file read it with no folder allowed")
	}

	opts := fixtureOptions
	opts.AllowedDirectories = []string{shared}
	db := openFixture(t, path, opts)
	res, err := db.Query(ctx, "test", "SELECT sum(total) AS total FROM sales")
	if err != nil {
		t.Fatalf("the view over an allowed folder: %v", err)
	}
	if got := res.Text(10); !strings.Contains(got, "42") {
		t.Errorf("sum(total) = %q, want 42", got)
	}
	// What okf doctor reports: hero, notes, hero_view, sales and leak, the
	// two secret identities hidden, and the one folder.
	if r := db.Readable(); r.Tables != 5 || r.HiddenColumns != 2 || len(r.Files) != 1 || r.Files[0] != shared {
		t.Errorf("readable: %+v", r)
	}
	if res, err := db.Query(ctx, "test", "SELECT * FROM leak"); err == nil {
		t.Errorf("a view over another folder read it: %v", res.Text(10))
	}
	for _, sql := range []string{
		"SELECT * FROM read_csv('" + filepath.Join(shared, "data.csv") + "')",
		"SELECT * FROM '" + filepath.Join(shared, "data.csv") + "'",
	} {
		if _, err := db.Query(ctx, "test", sql); err == nil {
			t.Errorf("%s: the agent named a file itself", sql)
		}
	}
	if _, err := sqlguard.Open(ctx, "fixture", "duckdb:"+path, sqlguard.Options{AllowedDirectories: []string{"relative/dir"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "relative/dir") {
		t.Errorf("a relative folder: got %v, want an error naming it", err)
	}
}
