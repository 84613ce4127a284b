package sqlguard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/sqlguard/guardtest"
)

func TestConformanceSQLite(t *testing.T) {
	guardtest.Run(t, guardtest.Harness{
		Open: func(t *testing.T, stmts []string, opts sqlguard.Options) *sqlguard.DB {
			path := filepath.Join(t.TempDir(), "conformance.sqlite")
			c, err := sqlite3.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range stmts {
				if err := c.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			return openConformance(t, "sqlite:"+path, opts)
		},
		Param: func(int) string { return "?" },
	})
}

var conformanceRoles atomic.Int64

func TestConformancePostgres(t *testing.T) {
	cluster := pgtest.Shared(t)
	guardtest.Run(t, guardtest.Harness{
		Open: func(t *testing.T, stmts []string, opts sqlguard.Options) *sqlguard.DB {
			ctx := context.Background()
			admin := cluster.NewDatabase(t)
			conn, err := pgx.Connect(ctx, admin)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for _, s := range stmts {
				if _, err := conn.Exec(ctx, s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			role := fmt.Sprintf("okf_conformance_%d_%d", os.Getpid(), conformanceRoles.Add(1))
			agent := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
			if _, err := sqlguard.PreparePostgres(ctx, admin, agent, opts); err != nil {
				t.Fatal(err)
			}
			return openConformance(t, agent, opts)
		},
		Param:         func(n int) string { return fmt.Sprintf("$%d", n) },
		ExactDecimals: true,
	})
}

func openConformance(t *testing.T, dsn string, opts sqlguard.Options) *sqlguard.DB {
	t.Helper()
	db, err := sqlguard.Open(context.Background(), "conformance", dsn, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
