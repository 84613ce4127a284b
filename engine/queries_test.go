package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/sqlguard"
)

// queryDoc is a query concept of bundle b with the given status.
func queryDoc(b, id, status, sql, params string) readmodel.Doc {
	if params != "" {
		params = "parameters:\n" + params
	}
	return readmodel.Doc{Bundle: b, Path: id + ".md", Content: []byte(fmt.Sprintf(
		"---\ntype: SQL Query\ntitle: %s\ndescription: Rows of t.\n%sstatus: %s\n---\n\n# SQL\n\n```sql\n%s\n```\n\n# Questions\n\n* How many rows of t?\n",
		id, params, status, sql))}
}

// queryBox is a toolbox over a SQLite table t(n integer, name text) of
// 100 rows and the query concepts docs.
func queryBox(t *testing.T, docs ...readmodel.Doc) *Toolbox {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`CREATE TABLE t (n integer, name text);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100) INSERT INTO t SELECT i, 'row ' || i FROM s;`); err != nil {
		t.Fatal(err)
	}
	c.Close()
	snap, _, _ := Build(readmodel.NewBuilder(), "acme", docs)
	dbs := NewDatabases([]Database{{Name: "shop", Tenant: "acme", DSN: "sqlite:" + path, Bundle: "shop"}}, nil, io.Discard)
	t.Cleanup(func() { dbs.Close() })
	return &Toolbox{Current: Fixed(NewView("acme", snap)), Databases: dbs, Tenant: "acme", Uses: &Uses{}}
}

func toolNames(t *testing.T, tb *Toolbox) []string {
	t.Helper()
	tools, _, err := tb.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range tools {
		out = append(out, tool.Name)
	}
	return out
}

const between = "  - {name: lo, type: integer, min: 1}\n  - {name: hi, type: integer, max: 100, default: 10}\n"

// TestQueryTools: verified queries of the bundle a database documents are
// tools, drafts and queries of other bundles are not, names never clash
// with the engine's tools, and a capped list keeps the most used.
func TestQueryTools(t *testing.T) {
	sql := "SELECT count(*) AS n FROM t WHERE n BETWEEN :lo AND :hi"
	tb := queryBox(t,
		queryDoc("shop", "queries/rows-between", "stable", sql, between),
		queryDoc("shop", "queries/run-sql", "stable", "SELECT 1", ""),
		queryDoc("shop", "queries/draft-one", "draft", "SELECT 1", ""),
		queryDoc("other", "queries/elsewhere", "stable", "SELECT 1", ""),
		queryDoc("shop", "queries/broken", "stable", "SELECT :nope", ""),
	)
	got := toolNames(t, tb)
	want := append(slices.Clone(ToolNames), ToolRunQuery, "rows_between", "shop_queries_run_sql")
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	ctx := context.Background()
	call := func(name, args string) Result {
		t.Helper()
		r, err := tb.Call(ctx, "test", name, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		name, args string
		isError    bool
		has        string
	}{
		{"rows_between", `{"lo": 5}`, false, "lo=5, hi=10.\n"},
		{"rows_between", `{"lo": "5", "hi": 7}`, false, "n\n3\n(1 row)"},
		{"rows_between", `{"lo": 5.5}`, true, `parameter lo of shop/queries/rows-between: "5.5" is not an integer`},
		{"rows_between", `{"lo": 0}`, true, "parameter lo of shop/queries/rows-between: 0 is below the minimum 1"},
		{"rows_between", `{"lo": 1, "hi": 101}`, true, "101 is above the maximum 100"},
		{"rows_between", `{"lo": [1]}`, true, "want one integer value"},
		{"rows_between", `{"lo": 1, "extra": 2}`, true, `query shop/queries/rows-between has no parameter "extra"; its parameters are lo, hi`},
		{"rows_between", `{"lo": 99999999999999999999}`, true, "is not an integer"},
		{"run_query", `{"id": "shop/queries/rows-between", "params": {"lo": 95, "hi": 100}}`, false, "n\n6\n(1 row)"},
		{"run_query", `{"id": "queries/draft-one"}`, true, `there is no verified query "queries/draft-one"`},
		{"run_query", `{"id": "queries/elsewhere"}`, true, "there is no verified query"},
		{"draft_one", `{}`, true, `there is no tool "draft_one"`},
	} {
		r := call(c.name, c.args)
		if r.IsError != c.isError || !strings.Contains(r.Text, c.has) {
			t.Errorf("%s %s: error %v, %q; want error %v and %q", c.name, c.args, r.IsError, r.Text, c.isError, c.has)
		}
	}
	if n := tb.Uses.count("shop/queries/rows-between"); n != 3 {
		t.Errorf("rows-between used %d times, want 3", n)
	}

	// Capped at one, the list keeps the most used; run_query reaches the rest.
	tb.ListedQueries = 1
	call("run_sql", `{"database": "shop", "sql": "SELECT 1"}`)
	if got := toolNames(t, tb); !slices.Equal(got[len(ToolNames):], []string{ToolRunQuery, "rows_between"}) {
		t.Errorf("capped at 1: %v", got)
	}
	for range 4 {
		call("shop_queries_run_sql", `{}`)
	}
	if got := toolNames(t, tb); !slices.Equal(got[len(ToolNames):], []string{ToolRunQuery, "shop_queries_run_sql"}) {
		t.Errorf("after more use of run-sql: %v", got)
	}
	if r := call("rows_between", `{"lo": 1}`); r.IsError {
		t.Errorf("an unlisted query's own tool name still answers: %s", r.Text)
	}
	tb.ListedQueries = -1
	if got := toolNames(t, tb); !slices.Equal(got[len(ToolNames):], []string{ToolRunQuery}) {
		t.Errorf("none listed: %v", got)
	}
	infos, err := tb.Queries(ctx)
	if err != nil || len(infos) != 2 || infos[0].ID != "shop/queries/rows-between" || infos[0].Listed || len(infos[0].Params) != 2 || infos[1].Uses != 4 || infos[0].Uses != 4 {
		t.Errorf("queries %+v, %v", infos, err)
	}
}

// TestQueryToolSchema: a query's input schema says each parameter's type,
// bounds, enum and default, and requires those without a default.
func TestQueryToolSchema(t *testing.T) {
	tb := queryBox(t, queryDoc("shop", "queries/q", "stable",
		"SELECT count(*) FROM t WHERE n >= :lo AND name <> :name AND :on AND :day <> '' AND :at <> '' AND n > :x",
		between[:len(between)-len("  - {name: hi, type: integer, max: 100, default: 10}\n")]+
			"  - {name: name, type: text, enum: [a, b], default: a}\n  - {name: on, type: boolean}\n  - {name: day, type: date}\n  - {name: at, type: timestamp}\n  - {name: x, type: number, max: 2.5}\n"))
	tools, _, err := tb.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := string(SchemaJSON(tools[len(tools)-1].InputSchema))
	want := `{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},"lo":{"type":"integer","minimum":1},"name":{"type":"string","default":"a","enum":["a","b"],"maxLength":4096},"on":{"type":"boolean"},"x":{"type":"number","maximum":2.5}},"required":["lo","on","day","at","x"],"additionalProperties":false}`
	if got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
}

// TestAuditedUses: the calls of verified queries that ran, as the audit log
// recorded them, counted per tenant; failed calls, other databases, broken
// and overlong lines are left out, and a missing log counts nothing.
func TestAuditedUses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	line := func(db, query, errText string) string {
		b, _ := json.Marshal(sqlguard.AuditEntry{Database: db, SQL: "SELECT 1", Query: query, Error: errText})
		return string(b) + "\n"
	}
	log := line("shop", "shop/queries/a", "") + line("shop", "shop/queries/a", "") + line("shop", "shop/queries/b", "") +
		line("shop", "shop/queries/b", "refused") + line("vault", "vault/queries/c", "") + line("nobody", "x/queries/d", "") +
		line("shop", "", "") + "{torn\n" + `{"database":"shop","query":"shop/queries/long","sql":"` + strings.Repeat("x", 2*sqlguard.MaxSQLBytesLimit+64<<10) + "\"}\n" +
		line("shop", "shop/queries/b", "")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	tenants := map[string]string{"shop": "acme", "vault": "globex"}
	uses, err := AuditedUses(path, func(db string) string { return tenants[db] })
	if err != nil {
		t.Fatal(err)
	}
	acme, globex := uses["acme"], uses["globex"]
	if len(uses) != 2 || acme.count("shop/queries/a") != 2 || acme.count("shop/queries/b") != 2 || acme.count("shop/queries/long") != 0 || globex.count("vault/queries/c") != 1 {
		t.Errorf("uses %v %v", acme, globex)
	}
	if none, err := AuditedUses(filepath.Join(t.TempDir(), "none.jsonl"), nil); err != nil || len(none) != 0 {
		t.Errorf("a missing log: %v, %v", none, err)
	}
	// A device is written to, never read: /dev/zero would never end.
	if _, err := os.Stat("/dev/zero"); err == nil {
		if none, err := AuditedUses("/dev/zero", nil); err != nil || len(none) != 0 {
			t.Errorf("/dev/zero: %v, %v", none, err)
		}
	}
}
