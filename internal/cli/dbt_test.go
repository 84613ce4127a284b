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
	// The project marks two columns as personal data (meta pii, a pii
	// tag): the concept lists them, and compile says how to mask them,
	// leaving out what okf.yaml masks or denies already.
	const note = "jaffle_semantic: 2 columns marked as personal data are neither masked nor denied in okf.yaml; add to the entry of jaffle_semantic:\n  guard:\n    masked_columns: [customers.first_name, customers.last_name]\n"
	if !strings.HasSuffix(stderr, note) || strings.Contains(stdout, "personal data") {
		t.Errorf("no note of the personal data on stderr:\n%s", stderr)
	}
	customers, _ := os.ReadFile(filepath.Join(out, "jaffle_semantic", "tables", "customers.md"))
	if !strings.Contains(string(customers), "\npersonal_data: [first_name, last_name]\n") {
		t.Errorf("tables/customers.md:\n%s", customers)
	}
	config := filepath.Join(t.TempDir(), "okf.yaml")
	yaml := "databases:\n  - name: jaffle_semantic\n    dsn: sqlite:jaffle.sqlite\n    guard:\n      denied_columns: [first_name]\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runOKF(t, "compile", dbtExample, "--out", out, "--config", config)
	if code != 0 || !strings.HasSuffix(stderr, "jaffle_semantic: 1 column marked as personal data is neither masked nor denied in "+config+"; add to the entry of jaffle_semantic:\n  guard:\n    masked_columns: [customers.last_name]\n") {
		t.Errorf("first_name denied: exit %d, stderr:\n%s", code, stderr)
	}
	again, _ := os.ReadFile(filepath.Join(out, "jaffle_semantic", "tables", "customers.md"))
	if string(again) != string(customers) {
		t.Errorf("the recompile changed tables/customers.md:\n%s", again)
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
	want := "schema.yml:50: orders.customer_id: relationships test: ref('clients') names no model or seed of the project"
	if code != exitFail || stdout != "" || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want one line with %q", code, stdout, stderr, want)
	}
}
