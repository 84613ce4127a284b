package cli

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

	"github.com/okf-tools/okf/internal/pgtest"
)

// sqliteDB writes a small SQLite file with a hidden column.
func sqliteDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "heroes.sqlite")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(`CREATE TABLE hero (id integer PRIMARY KEY, name text, secret text, power real);
		INSERT INTO hero VALUES (1, 'Ada', 's1', 3.14159265), (2, 'Bo', 's2', 2.5), (3, 'Cy', 's3', NULL)`); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "okf.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSQLCommand(t *testing.T) {
	db := sqliteDB(t)
	cfg := writeConfig(t, fmt.Sprintf("databases:\n  - name: heroes\n    dsn: sqlite:%s\n    guard:\n      denied_columns: [hero.secret]\n      shown_rows: 2\n", db))
	audit := filepath.Join(t.TempDir(), "audit.jsonl")

	code, out, errOut := run(t, "sql", "--config", cfg, "--audit", audit, "heroes", "SELECT name, power FROM hero ORDER BY id")
	if want := "name | power\nAda | 3.14159265\nBo | 2.5\n(2 of 3 rows)\n"; code != 0 || out != want {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant:\n%s", code, out, errOut, want)
	}
	code, out, errOut = run(t, "sql", "--config", cfg, "--audit", audit, "heroes", "SELECT secret FROM hero")
	if code != 1 || out != "" || !strings.Contains(errOut, "refused by the validator: column secret is hidden (in hero)") ||
		!strings.Contains(errOut, "\n  SELECT secret FROM hero\n         ^") {
		t.Errorf("hidden column: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	// A DSN on the command line works without any configuration.
	code, out, _ = run(t, "sql", "--config", filepath.Join(t.TempDir(), "none.yaml"), "--json", "sqlite:"+db, "SELECT id, power FROM hero WHERE id = 3")
	var res struct {
		Rows  [][]any `json:"rows"`
		Total int     `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Total != 1 || res.Rows[0][0] != 3.0 || res.Rows[0][1] != nil {
		t.Errorf("--json: exit %d, %v, %s", code, err, out)
	}

	// audit_log in okf.yaml, relative to the file, when --audit is absent.
	logged := writeConfig(t, fmt.Sprintf("audit_log: audit.jsonl\ndatabases:\n  - name: heroes\n    dsn: sqlite:%s\n", db))
	if code, _, errOut := run(t, "sql", "--config", logged, "heroes", "SELECT 1"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(logged), "audit.jsonl")); err != nil || !strings.Contains(string(data), `"sql":"SELECT 1"`) {
		t.Errorf("audit_log: %q, %v", data, err)
	}

	raw, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var entry struct {
		Caller, Database, SQL, Layer string
		Refused                      bool
	}
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &entry) != nil ||
		entry.Caller != "okf sql" || entry.Database != "heroes" || entry.Layer != "validator" || !entry.Refused {
		t.Errorf("audit log:\n%s", raw)
	}
}

func TestSQLCommandUsage(t *testing.T) {
	bad := writeConfig(t, "databases:\n  - name: x\n    dsn: sqlite:x.db\n    gaurd: {}\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sql", "only-one-arg"}, "sql takes a database and a query, got 1 arguments"},
		{[]string{"sql", "--config", bad, "x", "SELECT 1"}, bad + `:4: unknown key "gaurd" in databases[0]`},
		{[]string{"sql", "--config", filepath.Join(t.TempDir(), "none.yaml"), "lunar", "SELECT 1"}, `unknown database "lunar"`},
	} {
		code, _, errOut := run(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestPrepareCommand(t *testing.T) {
	admin := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE plant (id int PRIMARY KEY, name text, owner_email text);
		INSERT INTO plant VALUES (1, 'North', 'a@example.com'), (2, 'South', 'b@example.com')`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_cli_agent_%d", os.Getpid())
	agent := strings.Replace(admin, "postgres@", role+":${OKF_TEST_AGENT_PW}@", 1)
	t.Setenv("OKF_TEST_AGENT_PW", "pw")
	cfg := writeConfig(t, fmt.Sprintf("databases:\n  - name: solar\n    dsn: %s\n    guard:\n      denied_columns: [plant.owner_email]\n      admin_dsn: %s\n", agent, admin))

	code, out, errOut := run(t, "prepare", "--config", cfg, "solar")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"grant SELECT on 2 of 3 columns of public.plant",
		"role " + role + " can read 1 table in ",
		"; 1 column hidden",
		"allowed  read a table (public.plant): 2",
		"blocked  write a table (DELETE … WHERE false): permission denied for table plant",
		"blocked  create a table: permission denied for schema public",
		"blocked  read a server file: permission denied for function pg_read_file",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = run(t, "sql", "--config", cfg, "solar", "SELECT name FROM plant ORDER BY id")
	if code != 0 || out != "name\nNorth\nSouth\n(2 rows)\n" {
		t.Errorf("sql as the agent: exit %d\n%s%s", code, out, errOut)
	}
	// A file needs no role: prepare says what the agent reads of it.
	lite := sqliteDB(t)
	code, out, errOut = run(t, "prepare", "--config", cfg, "sqlite:"+lite)
	if want := "sqlite:" + lite + " needs no preparing:\n  SQLite, opened read-only through the guard: the agent reads 1 tables, 4 columns (0 masked), 0 columns hidden\n"; code != 0 || out != want {
		t.Errorf("prepare of a SQLite file: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = run(t, "prepare", "--config", cfg, "sqlite:"+lite+".missing"); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("prepare of a missing file: exit %d, %s", code, errOut)
	}
}

// TestSQLRowsReachTheTerminalEscaped: a row holding terminal commands is
// shown, not obeyed.
func TestSQLRowsReachTheTerminalEscaped(t *testing.T) {
	db := sqliteDB(t)
	code, out, errOut := run(t, "sql", "sqlite:"+db, "SELECT char(27) || '[2J' || char(7) || 'x' || char(8238) || 'y' AS \"a\x1bb\"")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `\x1b[2J\x07x\u202ey`) {
		t.Errorf("exit %d, %q, %s", code, out, errOut)
	}
}
