package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// twoBundles is a folder of two bundles, one a small compiled-shaped shop.
func twoBundles(t *testing.T) string {
	t.Helper()
	return writeBundle(t, map[string]string{
		"shop/index.md":                     "# Shop\n\n* [Tables](tables/index.md) - tables.\n* [Knowledge](knowledge/index.md) - rules.\n",
		"shop/tables/index.md":              "# Tables\n\n* [customers](customers.md) - customers.\n* [orders](orders.md) - orders.\n",
		"shop/tables/customers.md":          "---\ntype: PostgreSQL Table\ntitle: customers\ndescription: One row per customer.\ngrain: custid\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `custid` | integer | primary key | Customer id. |\n| `region` | text |  | Sales region. |\n",
		"shop/tables/orders.md":             "---\ntype: PostgreSQL Table\ntitle: orders\ndescription: One row per order.\ngrain: ordid\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `ordid` | integer | primary key | Order id. |\n| `custref` | integer | references customers.custid | Customer. |\n| `orderdt` | timestamp |  | When placed. |\n\n# Joins\n\n* `custref` references `custid` in [customers](/tables/customers.md).\n",
		"shop/knowledge/index.md":           "# Knowledge\n\n* [Active Customer](active-customer.md) - recent buyers.\n",
		"shop/knowledge/active-customer.md": "---\ntype: Business Rule\ntitle: Active Customer\ndescription: A customer with an order in the last 90 days.\nstale_after: 2026-12-31\n---\n# Definition\n\nA customer with at least one order whose orderdt is within 90 days.\n\n# Columns used\n\n* [orders](/tables/orders.md): `orderdt`, `custref`\n* [customers](/tables/customers.md): `custid`\n",
		"ops/deploy.md":                     "---\ntype: Runbook\ntitle: Deploy\n---\n# Steps\n\nShip the orders service.\n",
	})
}

func TestReadCommandsAgreeOnStoreAndFolder(t *testing.T) {
	dir := twoBundles(t)
	data := storeArgs(t)
	if code, _, errOut := run(t, cmd(data, "import", dir)...); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	for _, args := range [][]string{
		{"manifest", "--today", "2026-11-29"},
		{"manifest", "--bundle", "shop", "--today", "2027-01-01"},
		{"get", "tables/orders#joins", "knowledge/active-customer"},
		{"get", "tables/orders", "--find", "CUSTOMER", "--limit", "40"},
		{"search", "-k", "2", "active customer orders"},
		{"context", "--budget", "300", "which customers are active"},
	} {
		codeDir, fromDir, _ := run(t, append(args, "--dir", dir)...)
		codeStore, fromStore, _ := run(t, append(args, data...)...)
		if codeDir != 0 || codeStore != 0 || fromDir != fromStore || fromDir == "" {
			t.Errorf("%v: folder (exit %d) and store (exit %d) differ:\n%s\n---\n%s", args, codeDir, codeStore, fromDir, fromStore)
		}
	}
}

// TestImportAndDirFindTheSameBundles checks that import and --dir lay a
// folder out alike: a folder name made a bundle name, hidden files and
// folders without markdown no bundle.
func TestImportAndDirFindTheSameBundles(t *testing.T) {
	dir := writeBundle(t, map[string]string{
		"Ops Team/deploy.md": "---\ntype: Runbook\n---\nShip it.\n",
		"shop/tables/t.md":   "---\ntype: Table\n---\nOne row.\n",
		".notes.md":          "hidden",
		"images/logo.png":    "png",
	})
	data := storeArgs(t)
	code, out, errOut := run(t, cmd(data, "import", dir)...)
	if code != 0 || !strings.Contains(out, "ops-team ") || strings.Contains(out, "images") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	_, fromStore, _ := run(t, cmd(data, "manifest")...)
	code, fromDir, errOut := run(t, "manifest", "--dir", dir)
	if code != 0 || fromDir != fromStore || !strings.Contains(fromDir, "# bundles: ops-team shop\n") {
		t.Errorf("--dir (exit %d, %s):\n%s\nimport:\n%s", code, errOut, fromDir, fromStore)
	}
}

func TestReadCommandOutputs(t *testing.T) {
	dir := twoBundles(t)
	_, manifest, stats := run(t, "manifest", "--dir", dir, "--today", "2027-01-01")
	want := "# tenant: default\n# bundles: ops shop\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n" +
		"deploy\tops\trunbook\t-\t-\tShip the orders service.\t-\n" +
		"knowledge/active-customer\tshop\tbusiness_rule\tstale\t-\tA customer with an order in the last 90 days.\ttables/customers tables/orders\n" +
		"tables/customers\tshop\tpostgresql_table\t-\tcustid\tOne row per customer.\t-\n" +
		"tables/orders\tshop\tpostgresql_table\t-\tordid\tOne row per order.\ttables/customers\n"
	if manifest != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", manifest, want)
	}
	if !regexp.MustCompile(`^manifest: snapshot [0-9a-f]{12}, 2 bundles, 4 concepts, \d+ bytes, \d+ tokens\n$`).MatchString(stats) {
		t.Errorf("stats line %q", stats)
	}

	code, out, _ := run(t, "get", "--dir", dir, "tables/orders#joins", "nope")
	if code != 1 || !strings.HasPrefix(out, "@@ shop/tables/orders#joins [0..") || !strings.HasSuffix(out, "@@ missing nope\n") {
		t.Errorf("get with a missing id: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "get", "--dir", dir, "tables/orders#nope"); code != 1 || !strings.HasPrefix(out, "@@ error tables/orders#nope: ") || !strings.Contains(out, "sections: schema joins") {
		t.Errorf("unknown section: exit %d, %s", code, out)
	}

	_, hits, _ := run(t, "search", "--dir", dir, "-k", "1", "active customer")
	lines := strings.Split(strings.TrimSpace(hits), "\n")
	if lines[0] != "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos" || !strings.HasPrefix(lines[1], "knowledge/active-customer\t") || len(lines) != 3 {
		t.Errorf("search rows (1 hit, and 1 of its links: expansion is capped at k):\n%s", hits)
	}

	_, pack, _ := run(t, "context", "--dir", dir, "--budget", "400", "which customers are active")
	for _, s := range []string{"### Active Customer (knowledge/active-customer)", "- `orderdt` timestamp: When placed.", "* orders.custref = customers.custid"} {
		if !strings.Contains(pack, s) {
			t.Errorf("context pack lacks %q:\n%s", s, pack)
		}
	}
	for _, args := range [][]string{{"search"}, {"search", "a", "b"}, {"context"}, {"get"}} {
		if code, _, errOut := run(t, append(args, "--dir", dir)...); code != 2 || !strings.Contains(errOut, "takes") {
			t.Errorf("%v: exit %d, %q; want 2 and what it takes", args, code, errOut)
		}
	}
	if code, _, _ := run(t, "context", "--dir", dir, "--budget", "10", "x"); code != 2 {
		t.Errorf("a 10-token budget: exit %d, want 2", code)
	}
}

func TestSnapshotIndependentOfImportOrder(t *testing.T) {
	dir := twoBundles(t)
	digest := func(data []string, order ...string) string {
		for _, b := range order {
			if code, _, errOut := run(t, cmd(data, "import", filepath.Join(dir, b), "--bundle", b)...); code != 0 {
				t.Fatalf("import %s: %s", b, errOut)
			}
		}
		_, _, stats := run(t, cmd(data, "manifest")...)
		return stats
	}
	a := digest(storeArgs(t), "shop", "ops")
	b := digest(storeArgs(t), "ops", "shop")
	if a != b || !strings.Contains(a, "snapshot ") {
		t.Errorf("import order changed the snapshot:\n%s%s", a, b)
	}
	// Changing one byte changes the digest.
	if err := os.WriteFile(filepath.Join(dir, "ops", "deploy.md"), []byte("---\ntype: Runbook\ntitle: Deploy!\n---\n# Steps\n\nShip the orders service.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := digest(storeArgs(t), "ops", "shop"); c == a {
		t.Error("a changed document kept the same snapshot")
	}
}

func TestReadingAnEmptyStoreSaysWhatToDo(t *testing.T) {
	code, _, errOut := run(t, cmd(storeArgs(t), "manifest")...)
	if code != 1 || !strings.Contains(errOut, "okf import") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
