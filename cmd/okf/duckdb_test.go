package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/examples/shop"
	"github.com/okf-tools/okf/internal/cli"
	"github.com/okf-tools/okf/sqlguard"
)

// TestSQLDuckDB runs okf sql and okf compile on a DuckDB file end to end:
// the binary registers the engine and the catalog reader, the DSN is read,
// the file is opened read-only and left as it was, values come back exact,
// and an attack is refused.
func TestSQLDuckDB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds okf")
	}
	bin := buildOkf(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "hubs.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"CREATE TABLE hub (id INTEGER PRIMARY KEY, name VARCHAR, capacity DECIMAL(12,3), opened DATE, tags VARCHAR[], total HUGEINT)",
		"INSERT INTO hub VALUES (1, 'Leeds', 1234567.125, DATE '2021-03-04', ['north', 'rail'], 170141183460469231731687303715884105727)",
		"INSERT INTO hub VALUES (2, 'Bristol', 0.001, NULL, [], -1)",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	okf := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}

	out, errOut, code := okf("sql", "duckdb:hubs.duckdb", "SELECT 1")
	if code != 0 || out != "1\n1\n(1 row)\n" {
		t.Errorf("SELECT 1: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = okf("sql", "duckdb:"+path, "SELECT name, capacity, opened, tags, total FROM hub ORDER BY id")
	want := "name | capacity | opened | tags | total\n" +
		"Leeds | 1234567.125 | 2021-03-04 | ['north', 'rail'] | 170141183460469231731687303715884105727\n" +
		"Bristol | 0.001 | NULL | [] | -1\n(2 rows)\n"
	if code != 0 || out != want {
		t.Errorf("exit %d\n got: %q\nwant: %q\n%s", code, out, want, errOut)
	}
	out, _, code = okf("sql", "--json", "hubs.duckdb", "SELECT id, capacity FROM hub WHERE id = 2")
	var res struct {
		Columns []struct{ Name, Type string }
		Rows    [][]any
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Rows) != 1 ||
		res.Rows[0][0] != float64(2) || res.Rows[0][1] != "0.001" || res.Columns[1].Type != "decimal(12,3)" {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}
	for _, attack := range []string{
		"COPY hub TO 'stolen.csv'",
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM query('SELECT name FROM hub')",
		"ATTACH 'other.duckdb' AS other",
	} {
		_, errOut, code := okf("sql", "duckdb:hubs.duckdb", attack)
		if code != 1 || !strings.Contains(errOut, "refused by the validator") {
			t.Errorf("%s: exit %d\n%s", attack, code, errOut)
		}
	}
	_, errOut, code = okf("sql", "duckdb:missing.duckdb", "SELECT 1")
	if code == 0 || !strings.Contains(errOut, "no such file") {
		t.Errorf("a missing file: exit %d\n%s", code, errOut)
	}
	// okf compile reads the same file's catalog, and its values through
	// the guard.
	bundles := t.TempDir()
	_, errOut, code = okf("compile", "--from", "duckdb:"+path, "--out", bundles)
	hub, err := os.ReadFile(filepath.Join(bundles, "hubs", "tables", "hub.md"))
	if code != 0 || err != nil || !bytes.Contains(hub, []byte("type: DuckDB Table")) || !bytes.Contains(hub, []byte("Leeds")) {
		t.Errorf("okf compile --from duckdb: exit %d, %v\n%s\n%s", code, err, errOut, hub)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if !bytes.Equal(before, after) || len(entries) != 1 {
		t.Errorf("okf sql changed the folder: %d files, the database the same: %v", len(entries), bytes.Equal(before, after))
	}
	// okf load creates a new DuckDB file from documentation, which okf sql
	// then reads; an existing file is refused and left as it was.
	shop, err := filepath.Abs(filepath.Join("..", "..", "compile", "livesqlbench", "testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code = okf("load", shop, "--into", "duckdb:shop.duckdb", "--enums-from-meanings")
	if code != 0 || !strings.Contains(errOut, "loaded shop:") {
		t.Errorf("okf load --into duckdb: exit %d\n%s", code, errOut)
	}
	out, errOut, code = okf("sql", "duckdb:shop.duckdb", "SELECT count(*) AS n FROM customers")
	if code != 0 || out != "n\n0\n(1 row)\n" {
		t.Errorf("the loaded file: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = okf("load", shop, "--into", "duckdb:hubs.duckdb")
	if after, _ := os.ReadFile(path); code != 1 || !strings.Contains(errOut, "already exists") || !bytes.Equal(before, after) {
		t.Errorf("okf load over an existing file: exit %d\n%s", code, errOut)
	}
}

// TestShopOnDuckDB: the example shop loaded into DuckDB answers its
// questions' gold SQL through the guard with the rows SQLite gives, as
// LiveSQLBench's evaluator compares them: nine of the ten, the tenth
// being written in SQLite's own date syntax.
func TestShopOnDuckDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lite := filepath.Join(dir, "shop.db")
	if err := shop.Create(ctx, lite); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "shop", shop.SQLFile))
	if err != nil {
		t.Fatal(err)
	}
	duck := filepath.Join(dir, "shop.duckdb")
	raw, err := sql.Open("duckdb", duck)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, string(script)); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	qs, err := eval.LoadQuestions(filepath.Join("..", "..", "examples", "shop", shop.QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	dbs := map[string]*sqlguard.DB{}
	for engine, dsn := range map[string]string{"sqlite": "sqlite:" + lite, "duckdb": "duckdb:" + duck} {
		db, err := sqlguard.Open(ctx, "shop", dsn, sqlguard.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[engine] = db
	}
	for _, q := range qs {
		want, err := dbs["sqlite"].Query(ctx, "test", q.SQL[0])
		if err != nil {
			t.Fatalf("%s on SQLite: %v", q.ID, err)
		}
		got, err := dbs["duckdb"].Query(ctx, "test", q.SQL[0])
		if ge, ok := sqlguard.AsError(err); ok && !ge.Refused && q.ID == "shop_6" {
			// DATE('2026-07-01', '-3 days') is SQLite's own: DuckDB's
			// parser, not the guard, turns it down.
			continue
		}
		if err != nil {
			t.Errorf("%s on DuckDB: %v", q.ID, err)
			continue
		}
		if c := (eval.Comparison{Decimal: 2}); !eval.SameResult(want.Rows, got.Rows, c) || len(got.Rows) == 0 {
			t.Errorf("%s: DuckDB's %d rows differ from SQLite's %d:\n%s\n%s", q.ID, len(got.Rows), len(want.Rows), got.Text(5), want.Text(5))
		}
	}
}

// TestEvalRunSameOnDuckDB: okf eval run with a scripted model scores the
// example shop the same on SQLite and on DuckDB: the gold SQL of the nine
// questions written in SQL both engines read is right on both, and a
// query that misses the question's rule is wrong on both.
func TestEvalRunSameOnDuckDB(t *testing.T) {
	qs, err := eval.LoadQuestions(filepath.Join("..", "..", "examples", "shop", shop.QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "shop", shop.SQLFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	okf := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := cli.Main(args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("okf %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	okf("demo", "--dir", ".demo")
	raw, err := sql.Open("duckdb", "shop.duckdb")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	var questions, replies bytes.Buffer
	for _, q := range qs {
		if q.ID == "shop_6" { // SQLite's own DATE(x, '-3 days')
			continue
		}
		line, _ := json.Marshal(map[string]any{"instance_id": q.ID, "selected_database": "shop", "query": q.Text, "sol_sql": q.SQL})
		questions.Write(append(line, '\n'))
		answer := q.SQL[0]
		if q.ID == "shop_1" {
			answer = "SELECT COUNT(DISTINCT custref) FROM orders"
		}
		reply, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "submit_answer",
			"arguments": map[string]string{"sql": answer, "answer": "See the rows."}}}})
		replies.Write(append(reply, '\n'))
	}
	os.WriteFile("questions.jsonl", questions.Bytes(), 0o644)
	os.WriteFile("replies.jsonl", replies.Bytes(), 0o644)
	yaml, err := os.ReadFile(".demo/okf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	models := "agent:\n  models:\n    - name: replay\n      provider: script\n      script: replies.jsonl\n"
	abs, _ := filepath.Abs("shop.duckdb")
	lite := string(yaml) + models
	duck := strings.Replace(lite, `dsn: "sqlite:`+filepath.Dir(abs)+`/.demo/shop.db"`, `dsn: "duckdb:`+abs+`"`, 1)
	if duck == lite {
		t.Fatalf("the demo's okf.yaml names no SQLite file to replace:\n%s", yaml)
	}
	os.WriteFile("lite.yaml", []byte(lite), 0o644)
	os.WriteFile("duck.yaml", []byte(duck), 0o644)
	scores := map[string]string{}
	for _, engine := range []string{"lite", "duck"} {
		out := okf("eval", "run", "--config", engine+".yaml", "--runs", "runs-"+engine, "--questions", "questions.jsonl",
			"--strategies", "engine", "--model", "replay", "--today", "2026-07-01")
		// strategy, model, questions, correct, accuracy, interval; the
		// tokens differ by the engine's name in the prompt.
		cells := strings.Split(firstTableRow(out), "|")
		if len(cells) < 7 {
			t.Fatalf("%s: no accuracy table in\n%s", engine, out)
		}
		scores[engine] = strings.Join(cells[1:7], "|")
	}
	if want := " engine | replay | 9 | 8 | 88.9% | 56.5–98.0% "; scores["lite"] != want || scores["duck"] != want {
		t.Errorf("SQLite scored %q, DuckDB %q; want %q on both", scores["lite"], scores["duck"], want)
	}
}

// firstTableRow is the first data row of the first markdown table in out.
func firstTableRow(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "| ---") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}
