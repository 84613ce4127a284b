package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParse(t *testing.T) {
	data := []byte(`databases:
  - name: solar
    dsn: postgres://okf_agent:${OKF_AGENT_PASSWORD}@127.0.0.1:5432/solar
    bundle: bundles/solar
    guard:
      tables: [plant, panel]
      denied_columns: [plant.owner_email]
      timeout: 5s
      max_rows: 200
  - name: superhero
    dsn: sqlite:data/superhero.sqlite
`)
	cfg, err := Parse(data, env(map[string]string{"OKF_AGENT_PASSWORD": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Databases) != 2 {
		t.Fatalf("got %d databases", len(cfg.Databases))
	}
	solar := cfg.Databases[0]
	if solar.DSN != "postgres://okf_agent:s3cret@127.0.0.1:5432/solar" || solar.Line != 2 || solar.Bundle != "bundles/solar" {
		t.Errorf("solar = %+v", solar)
	}
	opts := solar.Guard.Options()
	if opts.Timeout != 5*time.Second || opts.MaxRows != 200 || len(opts.Tables) != 2 || opts.DeniedColumns[0] != "plant.owner_email" {
		t.Errorf("options = %+v", opts)
	}
	if cfg.Databases[1].Line != 10 {
		t.Errorf("superhero line = %d", cfg.Databases[1].Line)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown top key", "databses: []\n", `1: unknown key "databses" at the top level (known keys: databases, audit_log, serve, agent, embeddings, policies)`},
		{"unknown nested key", "databases:\n  - name: a\n    dsn: sqlite:x.db\n    guard:\n      timeot: 5s\n",
			`5: unknown key "timeot" in databases[0].guard (known keys: tables, denied_columns`},
		{"missing name", "databases:\n  - dsn: sqlite:x.db\n", "2: databases[0]: name is missing"},
		{"missing dsn", "databases:\n  - name: a\n", "2: databases[0] (a): dsn is missing"},
		{"duplicate", "databases:\n  - {name: a, dsn: sqlite:x.db}\n  - {name: a, dsn: sqlite:y.db}\n", `3: databases[1]: name "a" is used twice`},
		{"unset variable", "databases:\n  - name: a\n    dsn: postgres://u:${NOPE}@h/db\n", "2: databases[0] (a): dsn: environment variable NOPE is not set"},
		{"bad duration", "databases:\n  - name: a\n    dsn: sqlite:x.db\n    guard: {timeout: soon}\n", `line 4: "soon" is not a duration`},
		{"bad type", "databases:\n  - name: a\n    dsn: sqlite:x.db\n    guard: {max_rows: many}\n", "line 4: cannot unmarshal"},
		{"bad denied column", "databases:\n  - name: a\n    dsn: sqlite:x.db\n    guard: {denied_columns: [a.]}\n", `denied column "a."`},
		{"syntax", "databases: [\n", "1: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestParseSyntaxErrorLine: a YAML syntax error names the line it is on,
// not the line where yaml.v3's enclosing mapping or list starts.
func TestParseSyntaxErrorLine(t *testing.T) {
	const guard = "databases:\n  - name: a\n    dsn: sqlite:x.db\n    guard:\n      tables: [a,\n        b]\n"
	tests := []struct{ name, yaml, want string }{
		{"bad indent", guard + "      max_rows: 5\n     timeout: 5s\n", "8: did not find expected key"},
		{"indent too deep", guard + "      max_rows: 5\n        timeout: 5s\n", "8: mapping values are not allowed in this context"},
		{"tab", "databases:\n  - name: a\n    dsn: sqlite:x.db\n\tbad: tab\n", "4: found a tab character that violates indentation"},
		{"unclosed quote", "audit_log: x\ndatabases:\n  - name: a\n    dsn: \"sqlite:x.db\n", "4: found unexpected end of stream"},
		{"unclosed list", "audit_log: x\ndatabases: [\n", "2: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.yaml), env(nil)); err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "okf.yaml")
	if err := os.WriteFile(path, []byte(tests[0].yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || err.Error() != path+":8: did not find expected key" {
		t.Errorf("Load: %v, want %s:8: did not find expected key", err, path)
	}
}

func TestLoadNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "okf.yaml")
	if err := os.WriteFile(path, []byte("databases:\n  - name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2: ") {
		t.Errorf("error = %v, want it to start with %s:2:", err, path)
	}
	cfg, err := LoadOptional(filepath.Join(t.TempDir(), "absent.yaml"))
	if err != nil || len(cfg.Databases) != 0 {
		t.Errorf("LoadOptional of a missing file = %v, %v", cfg, err)
	}
}

func TestDatabaseLookup(t *testing.T) {
	cfg := &Config{Path: "okf.yaml", Databases: []Database{{Name: "solar", DSN: "postgres://h/solar"}}}
	tests := []struct{ ref, dsn string }{
		{"solar", "postgres://h/solar"},
		{"postgres://u@h:5/x", "postgres://u@h:5/x"},
		{"host=h dbname=x", "host=h dbname=x"},
		{"sqlite:data/x.sqlite", "sqlite:data/x.sqlite"},
		{"data/x.db", "sqlite:data/x.db"},
	}
	for _, tt := range tests {
		d, err := cfg.Database(tt.ref)
		if err != nil || d.DSN != tt.dsn {
			t.Errorf("Database(%q) = %+v, %v; want DSN %q", tt.ref, d, err, tt.dsn)
		}
	}
	_, err := cfg.Database("lunar")
	if err == nil || !strings.Contains(err.Error(), `unknown database "lunar": okf.yaml names solar`) {
		t.Errorf("error = %v", err)
	}
}

func TestAuditPath(t *testing.T) {
	cfg, err := Parse([]byte("audit_log: logs/audit.jsonl\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = filepath.Join("project", "okf.yaml")
	if got := cfg.AuditPath(); got != filepath.Join("project", "logs", "audit.jsonl") {
		t.Errorf("AuditPath = %q", got)
	}
}

func TestExpand(t *testing.T) {
	got, err := Expand("a${X}b${Y_2}c$Z", env(map[string]string{"X": "1", "Y_2": "2"}))
	if err != nil || got != "a1b2c$Z" {
		t.Errorf("Expand = %q, %v", got, err)
	}
}

// TestLoadReadsDotEnv: every command that reads okf.yaml gets the
// variables of the .env beside it, without overriding the environment.
func TestLoadReadsDotEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OKF_TEST_DOTENV_DSN", "")
	os.Unsetenv("OKF_TEST_DOTENV_DSN")
	t.Setenv("OKF_TEST_DOTENV_SET", "from the environment")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "OKF_TEST_DOTENV_DSN=sqlite:shop.db\nOKF_TEST_DOTENV_SET=from .env\n")
	write("okf.yaml", "databases:\n  - name: shop\n    dsn: ${OKF_TEST_DOTENV_DSN}\n")
	cfg, err := Load(filepath.Join(dir, "okf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Databases[0].DSN; got != "sqlite:shop.db" {
		t.Errorf("dsn = %q, want the value from .env", got)
	}
	if got := os.Getenv("OKF_TEST_DOTENV_SET"); got != "from the environment" {
		t.Errorf("the environment was overridden: %q", got)
	}
}

// A relative allowed_directories entry is read against the configuration
// file's folder, as a bundle folder is; an absolute one is kept.
func TestAllowedDirectoriesRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	yaml := "databases:\n  - name: lake\n    dsn: duckdb:lake.duckdb\n    guard:\n      allowed_directories: [exports, /srv/shared]\n"
	if err := os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(filepath.Join(dir, "okf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Databases[0].Guard.Options().AllowedDirectories
	if want := []string{filepath.Join(dir, "exports"), "/srv/shared"}; !slices.Equal(got, want) {
		t.Errorf("allowed_directories = %q, want %q", got, want)
	}
}

// Uncovered leaves out the columns a guard masks or denies, by table and
// column or by column alone, whatever the case or a schema before them.
func TestGuardUncovered(t *testing.T) {
	g := Guard{MaskedColumns: []string{"customers.email", "Phone"}, DeniedColumns: []string{"raw.people.ssn"}}
	got := g.Uncovered([]string{"customers.Email", "orders.email", "orders.phone", "raw.people.ssn", "people.ssn", "people.name"})
	if want := []string{"orders.email", "people.name"}; !slices.Equal(got, want) {
		t.Errorf("uncovered %q, want %q", got, want)
	}
}
