package sqlguard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/sqlguard/attacktest"
)

var maskingOptions = Options{MaskedColumns: attacktest.MaskedColumns}

// TestMasking: every spelling that would show a masked value shows Mask
// or is refused, on SQLite and PostgreSQL, and the masked columns still
// filter, join, group and count; the outcomes are the golden table
// testdata/attacks/masking.md.
func TestMasking(t *testing.T) {
	sqlitePath := filepath.Join(t.TempDir(), "masking.db")
	conn, err := sqlite3.Open(sqlitePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(attacktest.MaskingDDL); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	type engine struct{ name, dsn string }
	engines := []engine{{"SQLite", "sqlite:" + sqlitePath}}
	names := []string{"SQLite"}
	if dsn, ok := maskingPostgres(t); ok {
		engines = append(engines, engine{"PostgreSQL", dsn})
		names = append(names, "PostgreSQL")
	}
	outcomes := map[string][]string{}
	for _, e := range engines {
		db, err := Open(context.Background(), "masking", e.dsn, maskingOptions, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range attacktest.MaskingSpellings {
			sql := s.SQL(e.name)
			res, err := db.Query(context.Background(), "test", sql)
			outcomes[s.Name] = append(outcomes[s.Name], attacktest.MaskingOutcome(t, e.name, s, sql, maskingResult(res, err), Mask))
		}
		for _, a := range attacktest.MaskingAllowed {
			res, err := db.Query(context.Background(), "test", a.SQL)
			if err != nil {
				t.Errorf("%s: %s: %v", e.name, a.Name, err)
				continue
			}
			if got, _ := json.Marshal(res.Rows); string(got) != a.Want {
				t.Errorf("%s: %s: rows %s, want %s", e.name, a.Name, got, a.Want)
			}
		}
		db.Close()
	}
	table := attacktest.MaskingTable(names, outcomes, Mask)
	if len(engines) < 2 {
		t.Log("PostgreSQL not installed: the table is not compared\n" + table)
		return
	}
	golden.CheckFile(t, filepath.Join("testdata", "attacks", "masking.md"), []byte(table))
}

// maskingResult is what the judge reads of a query's outcome.
func maskingResult(res *Result, err error) attacktest.MaskingResult {
	if err != nil {
		r := attacktest.MaskingResult{Err: err}
		if ge, ok := AsError(err); ok {
			r.Refused, r.Code, r.Layer = ge.Refused, ge.Code, string(ge.Layer)
		}
		return r
	}
	r := attacktest.MaskingResult{Rows: res.Rows, Text: res.Text(100), MaskedCells: res.MaskedCells}
	for _, c := range res.Columns {
		r.Columns = append(r.Columns, c.Name)
	}
	return r
}

// maskingPostgres creates the fixture on the shared test cluster and
// returns its agent DSN; false when PostgreSQL is not installed.
func maskingPostgres(t *testing.T) (string, bool) {
	if _, err := pgtest.FindBinaries(); err != nil && os.Getenv("OKF_REQUIRE_POSTGRES") != "1" {
		return "", false
	}
	ctx := context.Background()
	admin := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, attacktest.MaskingDDL); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_mask_%d_%d", os.Getpid(), roleSeq.Add(1))
	agent := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	if _, err := PreparePostgres(ctx, admin, agent, maskingOptions); err != nil {
		t.Fatal(err)
	}
	return agent, true
}
