package sqlguard

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestArgs binds values beside the SQL on both engines: hostile text is
// data, never SQL, and wrong values are refused before the database.
func TestArgs(t *testing.T) {
	ctx := context.Background()
	for _, engine := range []struct {
		name, dsn, admin string
		mark             func(n int) string
	}{
		{"sqlite", "sqlite:" + sqliteFixture(t), "", func(int) string { return "?" }},
		{"postgres", "", "", func(n int) string { return "$" + string(rune('0'+n)) }},
	} {
		t.Run(engine.name, func(t *testing.T) {
			dsn, state := engine.dsn, func() string { return sqliteState(t, strings.TrimPrefix(engine.dsn, "sqlite:")) }
			if engine.name == "postgres" {
				admin, agent := pgFixture(t)
				dsn, state = agent, func() string { return pgState(t, admin) }
			}
			var audit bytes.Buffer
			db, err := Open(ctx, "fixture", dsn, fixtureOptions, NewAuditLog(&audit))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			before := state()
			sql := "SELECT count(*) AS n FROM hero WHERE id <= " + engine.mark(1) + " AND name <> " + engine.mark(2)
			count := func(args ...any) string {
				t.Helper()
				res, err := db.Query(ctx, "test", sql, args...)
				if err != nil {
					return "error: " + err.Error()
				}
				return res.Text(5)
			}
			if got := count(int64(3), "Hero 2"); got != "n\n2\n(1 row)" {
				t.Errorf("legitimate values: %q", got)
			}
			// Hostile text compares as text: no row is named so.
			for _, hostile := range []string{"1; DROP TABLE hero", "' OR 1=1 --", "x' OR 'a'='a"} {
				if got := count(int64(3), hostile); got != "n\n3\n(1 row)" {
					t.Errorf("%q: %q", hostile, got)
				}
			}
			for _, bad := range []struct {
				args []any
				want string
			}{
				{[]any{int64(1)}, "parameter"},
				{[]any{int64(1), "a", "b"}, "parameter"},
				{[]any{math.NaN(), "a"}, "numbers are finite"},
				{[]any{[]byte("x"), "a"}, "values are integers"},
				{[]any{int64(1), strings.Repeat("x", DefaultMaxSQLBytes+1)}, "at most"},
			} {
				if got := count(bad.args...); !strings.Contains(got, bad.want) {
					t.Errorf("%d values: %q, want %q", len(bad.args), got, bad.want)
				}
			}
			if after := state(); after != before {
				t.Errorf("the database changed:\n%s\n%s", before, after)
			}
			// The audit log records the values beside the SQL.
			first, _, _ := bytes.Cut(audit.Bytes(), []byte("\n"))
			var e AuditEntry
			if err := json.Unmarshal(first, &e); err != nil || e.SQL != sql || len(e.Args) != 2 || e.Args[1] != "Hero 2" {
				t.Errorf("audit %s: %v", first, err)
			}
		})
	}
}
