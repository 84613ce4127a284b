package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/shareddata"
)

// dbtExample is the dbt project with a semantic layer that okf ships.
var dbtExample = filepath.Join("..", "..", "examples", "dbt-semantic")

func TestCompileDbtProject(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runOKF(t, "compile", dbtExample, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "compiled jaffle_semantic: 6 tables, 18 rules, 7 gaps") {
		t.Errorf("progress on stderr: %q", stderr)
	}
	if !strings.Contains(stdout, "columns without a meaning (7): raw_customers.id,") {
		t.Errorf("gap report on stdout: %q", stdout)
	}
	b, err := okf.Load(filepath.Join(out, "jaffle_semantic"))
	if err != nil {
		t.Fatal(err)
	}
	if rep := okf.Validate(b, okf.Options{}); !rep.Passed(0) {
		t.Errorf("bundle fails strict validation: %v", rep.Findings)
	}

	// A folder of projects compiles each; jaffle shop is one.
	code, _, stderr = runOKF(t, "compile", shareddata.Dir(t, "dbt"), "--out", t.TempDir())
	if code != 0 || !strings.Contains(stderr, "compiled jaffle_shop: 8 tables, 0 rules, 16 gaps") {
		t.Errorf("the shared dbt folder: exit %d, %q", code, stderr)
	}
}

// A relationships test to a model the project lacks fails the compile
// with one line naming the file and line, as dbt itself would.
func TestCompileDbtBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS(dbtExample)); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "models", "schema.yml")
	data, err := os.ReadFile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schema, []byte(strings.Replace(string(data), "to: ref('customers')", "to: ref('clients')", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runOKF(t, "compile", dir, "--out", t.TempDir())
	want := "schema.yml:47: orders.customer_id: relationships test: ref('clients') names no model or seed of the project"
	if code != exitFail || stdout != "" || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want one line with %q", code, stdout, stderr, want)
	}
}
