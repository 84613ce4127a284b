package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/sqlguard/guardtest"
)

func TestConformance(t *testing.T) {
	guardtest.Run(t, guardtest.Harness{
		Open: func(t *testing.T, stmts []string, opts sqlguard.Options) *sqlguard.DB {
			path := filepath.Join(t.TempDir(), "conformance.duckdb")
			db, err := sql.Open("duckdb", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range stmts {
				if _, err := db.Exec(s); err != nil {
					db.Close()
					t.Fatalf("%s: %v", s, err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			g, err := sqlguard.Open(context.Background(), "conformance", "duckdb:"+path, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			return g
		},
		Param:         func(n int) string { return fmt.Sprintf("$%d", n) },
		ExactDecimals: true,
	})
}
