package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
)

// shopDocs is the crafted LiveSQLBench-style database of the compile tests.
var shopDocs = filepath.Join("..", "..", "compile", "livesqlbench", "testdata", "shop")

func runOKF(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// tree reads every file below dir, keyed by slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestCompileWritesAValidBundleAndReportsGaps(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runOKF(t, "compile", shopDocs, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "compiled shop: 3 tables, 12 rules, 8 gaps") || !strings.Contains(stderr, "wrote 1 bundle to") {
		t.Errorf("progress on stderr: %q", stderr)
	}
	if !strings.Contains(stdout, "rules linked to no table (3)") {
		t.Errorf("gap report on stdout: %q", stdout)
	}
	b, err := okf.Load(filepath.Join(out, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	if rep := okf.Validate(b, okf.Options{}); !rep.Passed(0) {
		t.Errorf("bundle fails strict validation: %v", rep.Findings)
	}
	if code, _, _ := runOKF(t, "compile", shopDocs, "--out", out, "--strict"); code != exitFail {
		t.Errorf("--strict with gaps: exit %d, want %d", code, exitFail)
	}
}

func TestCompileJSONReport(t *testing.T) {
	code, stdout, stderr := runOKF(t, "compile", shopDocs, "--out", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep gapReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout)
	}
	if len(rep.Bundles) != 1 || rep.Bundles[0].Rules != 12 || len(rep.Bundles[0].Gaps.UnlinkedRules) != 3 {
		t.Errorf("report: %+v", rep)
	}
}

func TestCompileIsDeterministicAndDatesOnlyWhenAsked(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, out := range []string{a, b} {
		if code, _, stderr := runOKF(t, "compile", shopDocs, "--out", out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	ta, tb := tree(t, a), tree(t, b)
	if len(ta) == 0 || len(ta) != len(tb) {
		t.Fatalf("%d files, then %d", len(ta), len(tb))
	}
	for p := range ta {
		if ta[p] != tb[p] {
			t.Errorf("%s differs between two runs", p)
		}
		if strings.Contains(ta[p], "at: ") {
			t.Errorf("%s holds a time although none was given", p)
		}
	}

	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	c := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", shopDocs, "--out", c); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tc := tree(t, c)
	if !strings.Contains(tc["shop/tables/orders.md"], `at: "2026-01-01T00:00:00Z"`) || !strings.Contains(tc["shop/log.md"], "## 2026-01-01") {
		t.Errorf("SOURCE_DATE_EPOCH not written:\n%s\n%s", tc["shop/tables/orders.md"], tc["shop/log.md"])
	}
	if code, _, stderr := runOKF(t, "compile", shopDocs, "--out", c, "--generated-at", "2026-11-29"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if log := tree(t, c)["shop/log.md"]; !strings.Contains(log, "## 2026-11-29") {
		t.Errorf("--generated-at does not win over SOURCE_DATE_EPOCH:\n%s", log)
	}
	if code, _, _ := runOKF(t, "compile", shopDocs, "--out", c, "--generated-at", "yesterday"); code != exitUsage {
		t.Errorf("bad --generated-at: exit %d, want %d", code, exitUsage)
	}
}

// A failed run names the file and line, exits 1, and leaves the previous
// bundle byte for byte as it was, with no temporary folder behind.
func TestCompileBadInputLeavesThePreviousBundle(t *testing.T) {
	docs := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(docs, os.DirFS(shopDocs)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", docs, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := tree(t, out)
	kb := filepath.Join(docs, "shop_kb.jsonl")
	f, err := os.OpenFile(kb, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id": 9, "knowledge": "Broken", "definition": ` + "\n")
	f.Close()
	code, stdout, stderr := runOKF(t, "compile", docs, "--out", out)
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	if !strings.Contains(stderr, "shop_kb.jsonl:13:") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("want one line naming shop_kb.jsonl:10, got %q", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	after := tree(t, out)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p := range before {
		if before[p] != after[p] {
			t.Errorf("%s changed", p)
		}
	}
}

func TestCompileFolderOfDatabasesAndUsage(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"shop", "store"} {
		dir := filepath.Join(root, name)
		if err := os.CopyFS(dir, os.DirFS(shopDocs)); err != nil {
			t.Fatal(err)
		}
		if name != "shop" {
			for _, suffix := range []string{"_schema.txt", "_column_meaning_base.json", "_kb.jsonl"} {
				if err := os.Rename(filepath.Join(dir, "shop"+suffix), filepath.Join(dir, name+suffix)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", root, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"shop", "store"} {
		if _, err := os.Stat(filepath.Join(out, name, "index.md")); err != nil {
			t.Errorf("bundle %s: %v", name, err)
		}
	}
	for _, args := range [][]string{
		{"compile", root},
		{"compile", "--out", out},
		{"compile", "--from", "mysql://x", "--out", out},
	} {
		if code, _, _ := runOKF(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, stderr := runOKF(t, "compile", t.TempDir(), "--out", out); code != exitFail || !strings.Contains(stderr, "no database found") {
		t.Errorf("empty folder: exit %d, %q", code, stderr)
	}
}

// BenchmarkCompileSharedData compiles everything in ../shared/data (the
// eight LiveSQLBench databases and BIRD superhero) end to end: reading,
// linking, rendering and writing the bundles.
func BenchmarkCompileSharedData(b *testing.B) {
	root := shareddata.Dir(b)
	args := []string{"compile", filepath.Join(root, "livesqlbench", "base-lite"), filepath.Join(root, "bird"), "--out", b.TempDir()}
	for b.Loop() {
		var out, errOut bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
}

// BenchmarkCompileAgain compiles the eight LiveSQLBench databases into a
// fresh folder, and again over their own output (issue 25, defect 10):
// recompiling is the common case, and should cost about what a first
// compile does.
func BenchmarkCompileAgain(b *testing.B) {
	src := shareddata.Dir(b, "livesqlbench", "base-lite")
	run := func(b *testing.B, out string) {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"compile", src, "--out", out}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	b.Run("fresh", func(b *testing.B) {
		dir := b.TempDir()
		n := 0
		for b.Loop() {
			n++
			run(b, filepath.Join(dir, strconv.Itoa(n)))
		}
	})
	b.Run("recompile", func(b *testing.B) {
		out := b.TempDir()
		run(b, out)
		for b.Loop() {
			run(b, out)
		}
	})
}

// --from reads the catalog, and a folder given beside it layers its
// descriptions on top: the same bundle as compiling the BIRD folder.
func TestCompileFromSQLiteCatalogWithDescriptions(t *testing.T) {
	dir := shareddata.Dir(t, "bird", "superhero")
	a, b := t.TempDir(), t.TempDir()
	if code, _, stderr := runOKF(t, "compile", dir, "--out", a); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runOKF(t, "compile", "--from", "sqlite:"+filepath.Join(dir, "superhero.sqlite"), dir, "--out", b); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ta, tb := tree(t, a), tree(t, b)
	if len(ta) != 14 || len(ta) != len(tb) { // 13 files and the .okf-bundle record
		t.Fatalf("%d files from the folder, %d from --from", len(ta), len(tb))
	}
	for p := range ta {
		if ta[p] != tb[p] {
			t.Errorf("%s differs", p)
		}
	}
	// --from reads a DSN as every command does: a .sqlite path is that file.
	c := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", "--from", filepath.Join(dir, "superhero.sqlite"), dir, "--out", c); code != 0 || len(tree(t, c)) != len(ta) {
		t.Errorf("--from a bare path: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runOKF(t, "compile", "--from", "sqlite:"+filepath.Join(dir, "superhero.sqlite"), t.TempDir(), "--out", b); code != exitFail || !strings.Contains(stderr, "no documentation") {
		t.Errorf("--from with an empty folder: exit %d, %q", code, stderr)
	}
}

// okf load creates the documented schema in PostgreSQL; okf compile --from
// reads it back and layers the same documentation on top.
func TestLoadThenCompileFromPostgres(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	if code, _, stderr := runOKF(t, "load", shopDocs, "--into", dsn, "--enums-from-meanings"); code != 0 {
		t.Fatalf("load: exit %d: %s", code, stderr)
	}
	out := t.TempDir()
	code, stdout, stderr := runOKF(t, "compile", "--from", dsn, shopDocs, "--out", out, "--json")
	if code != 0 {
		t.Fatalf("compile: exit %d: %s", code, stderr)
	}
	var rep gapReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Bundles) != 1 || rep.Bundles[0].Tables != 3 || rep.Bundles[0].Rules != 12 {
		t.Fatalf("report: %+v", rep)
	}
	dir := rep.Bundles[0].Path
	b, err := okf.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := okf.Validate(b, okf.Options{}); !r.Passed(0) {
		t.Errorf("strict validation: %v", r.Findings)
	}
	customers := tree(t, dir)["tables/customers.md"]
	for _, want := range []string{
		"* `tier` (`tier_enum`): 'Bronze', 'Silver', 'Gold'",
		"resource: postgres://postgres@",
		"resource: shop/shop_column_meaning_base.json",
		"| `custname` | text |  | TEXT holding the customer's display name (was 'DisplayName'). |",
	} {
		if !strings.Contains(customers, want) {
			t.Errorf("tables/customers.md lacks %q:\n%s", want, customers)
		}
	}
}

// TestCompileNeverReplacesItsSources: okf compile mydocs/shop --out mydocs
// once deleted mydocs/shop, the documentation itself.
func TestCompileNeverReplacesItsSources(t *testing.T) {
	docs := t.TempDir()
	src := filepath.Join(docs, "shop")
	if err := os.CopyFS(src, os.DirFS(shopDocs)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, src)
	for _, args := range [][]string{{"compile", src, "--out", docs}, {"compile", src, "--out", docs, "--force"}} {
		code, _, stderr := runOKF(t, args...)
		if code != exitFail || !strings.Contains(stderr, "which is being compiled") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	if after := tree(t, src); len(after) != len(before) {
		t.Fatalf("the sources changed: %d files, were %d", len(after), len(before))
	}
	// A folder okf did not write is replaced only with --force.
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "shop", "plan.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runOKF(t, "compile", src, "--out", out); code != exitFail || !strings.Contains(stderr, "--force") {
		t.Errorf("over a folder of one's own: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runOKF(t, "compile", src, "--out", out, "--force"); code != 0 {
		t.Errorf("--force: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runOKF(t, "compile", src, "--out", out); code != 0 {
		t.Errorf("recompiling over its own output: exit %d, %s", code, stderr)
	}
}

// TestCompileCheckFindsDrift: okf compile --check on an unchanged database
// exits 0; after ALTER TABLE … ADD COLUMN and DROP COLUMN it exits 1 and
// names both columns, and the rule that used the dropped one.
func TestCompileCheckFindsDrift(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	if code, _, stderr := runOKF(t, "load", shopDocs, "--into", dsn); code != 0 {
		t.Fatalf("load: exit %d: %s", code, stderr)
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", "--from", dsn, shopDocs, "--out", out); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, stderr)
	}
	before := tree(t, out)
	if code, stdout, stderr := runOKF(t, "compile", "--from", dsn, shopDocs, "--out", out, "--check"); code != 0 || !strings.HasSuffix(stdout, ": no drift\n") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("unchanged: exit %d, %q, %s", code, stdout, stderr)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "ALTER TABLE orders ADD COLUMN giftnote text; ALTER TABLE orders DROP COLUMN paidflag"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runOKF(t, "compile", "--from", dsn, shopDocs, "--out", out, "--check")
	if code != exitFail {
		t.Fatalf("after ALTER TABLE: exit %d, %q, %s", code, stdout, stderr)
	}
	for _, want := range []string{": columns added: orders.giftnote\n", ": columns removed: orders.paidflag\n", "names orders.paidflag, no longer in the database"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--check lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runOKF(t, "compile", "--from", dsn, shopDocs, "--out", out, "--check", "--json")
	var reports []struct {
		ColumnsAdded []string `json:"columns_added"`
	}
	if code != exitFail || json.Unmarshal([]byte(stdout), &reports) != nil || len(reports) != 1 || len(reports[0].ColumnsAdded) != 1 {
		t.Errorf("--check --json: exit %d, %s", code, stdout)
	}
	if after := tree(t, out); len(after) != len(before) || after["tables/orders.md"] != before["tables/orders.md"] {
		t.Error("--check wrote to the bundle")
	}
}

// TestRecompileKeepsPeoplesWork: compile, add a hand-written rule and edit
// a generated concept (a note, and a column marked as personal data),
// change the sources (add a column, drop one), compile again: the rule and
// the edit survive, the rule is linked and indexed, the new column is
// there, the dropped one is reported, and the marked column is named with
// the okf.yaml lines that would mask it.
func TestRecompileKeepsPeoplesWork(t *testing.T) {
	src := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(src, os.DirFS(shopDocs)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", src, "--out", out); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	bundle := filepath.Join(out, "shop")
	rule := "---\ntype: Business Rule\ntitle: Premium Order\ndescription: A large order.\n---\n# Definition\n\nAn order whose amountusd is above 1000.\n"
	if err := os.WriteFile(filepath.Join(bundle, "knowledge", "premium-order.md"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	customers := filepath.Join(bundle, "tables", "customers.md")
	data, _ := os.ReadFile(customers)
	edited := "---\npersonal_data: [custname]\n" + strings.TrimPrefix(string(data), "---\n") + "\nAsk the sales team before contacting a Gold customer.\n"
	if err := os.WriteFile(customers, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(src, "shop_schema.txt")
	data, _ = os.ReadFile(schema)
	changed := strings.Replace(string(data), "paidflag boolean NULL,\n", "", 1)
	changed = strings.Replace(changed, "notes text NULL,\n    PRIMARY KEY (orderid)", "notes text NULL,\ngiftnote text NULL,\n    PRIMARY KEY (orderid)", 1)
	if changed == string(data) || strings.Contains(changed, "paidflag boolean") {
		t.Fatal("the schema edit did not apply")
	}
	os.WriteFile(schema, []byte(changed), 0o644)

	code, _, stderr := runOKF(t, "compile", src, "--out", out)
	if code != 0 {
		t.Fatalf("recompile: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"shop: keeping 1 concepts people wrote", "shop: columns added: orders.giftnote", "shop: columns removed: orders.paidflag", "names orders.paidflag, no longer in the database",
		"shop: 1 column marked as personal data is neither masked nor denied in okf.yaml; add to the entry of shop:\n  guard:\n    masked_columns: [customers.custname]\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	files := tree(t, bundle)
	if files["knowledge/premium-order.md"] != rule {
		t.Error("the hand-written rule changed")
	}
	if files["tables/customers.md"] != edited {
		t.Error("the edit of a generated concept is lost")
	}
	if !strings.Contains(files["knowledge/index.md"], "[Premium Order](premium-order.md) - A large order.") {
		t.Errorf("the hand-written rule is not in the index:\n%s", files["knowledge/index.md"])
	}
	if !strings.Contains(files["tables/orders.md"], "[Premium Order](/knowledge/premium-order.md): `amountusd`") || !strings.Contains(files["tables/orders.md"], "`giftnote`") ||
		strings.Contains(files["tables/orders.md"], "`paidflag`") {
		t.Errorf("tables/orders.md: linked to the rule, with giftnote, without paidflag:\n%s", files["tables/orders.md"])
	}
	if !strings.Contains(files["log.md"], "**Update**") || !strings.Contains(files["log.md"], "**Creation**") {
		t.Errorf("the log does not record both compiles:\n%s", files["log.md"])
	}
	// Compiling the same sources again changes nothing, the log included.
	if code, _, stderr := runOKF(t, "compile", src, "--out", out); code != 0 {
		t.Fatalf("third compile: %s", stderr)
	}
	if again := tree(t, bundle); !maps.Equal(again, files) {
		t.Error("a compile of unchanged sources changed the bundle")
	}
	b, err := okf.Load(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if r := okf.Validate(b, okf.Options{}); !r.Conformant() {
		t.Errorf("the merged bundle is not conformant: %v", r.Findings)
	}
}

// TestRecompileAfterExportKeepsEdits: the digest okf seals concepts with
// travels through a store and okf export, where the folder's record does
// not; a recompile into the exported folder still keeps a person's edit.
func TestRecompileAfterExportKeepsEdits(t *testing.T) {
	out, data, exported := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "bundles")
	if code, _, stderr := runOKF(t, "compile", shopDocs, "--out", out); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	if code, _, stderr := runOKF(t, "import", out, "--data", data); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	if code, _, stderr := runOKF(t, "export", exported, "--data", data); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(exported, "shop", ".okf-bundle")); !os.IsNotExist(err) {
		t.Fatalf("the record came through the store: %v", err)
	}
	orders := filepath.Join(exported, "shop", "tables", "orders.md")
	before, _ := os.ReadFile(orders)
	edited := string(before) + "\nOrders before 2024 were migrated and lack shipinfo.\n"
	os.WriteFile(orders, []byte(edited), 0o644)
	code, _, stderr := runOKF(t, "compile", shopDocs, "--out", exported)
	if code != 0 {
		t.Fatalf("recompile into the export: exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(orders); string(got) != edited {
		t.Errorf("the edit is lost:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(exported, "shop", "tables", "customers.md")); !strings.Contains(string(got), "  digest: ") {
		t.Error("the other concepts are not regenerated, sealed")
	}
}

// TestCompileOutIsAFile: --out naming a file is bad usage named as such,
// refused before anything is read, written or deleted.
func TestCompileOutIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bundles")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"compile", shopDocs, "--out", file},
		{"compile", shopDocs, "--out", file, "--check"},
	} {
		code, stdout, stderr := runOKF(t, args...)
		if code != exitUsage || stdout != "" || stderr != "okf: --out "+file+": is a file, not a folder\nRun 'okf --help' for usage.\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "mine" {
		t.Errorf("the file became %q, %v", got, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("the folder holds %v, %v; want the file alone", entries, err)
	}
}

// okf compile reads a BIRD folder's values from its .sqlite through the
// SQL guard and lists them in the table concepts; a recompile of the same
// database changes nothing. --no-values reads none, --skip-values leaves
// columns out, and okf.yaml's denied columns of the database (of the entry
// of the same file, and of the one of the same name) are never read.
func TestCompileValues(t *testing.T) {
	dir := shareddata.Dir(t, "bird", "superhero")
	file, err := filepath.Abs(filepath.Join(dir, "superhero.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	compileTree := func(args ...string) (map[string]string, string) {
		t.Helper()
		out := t.TempDir()
		code, _, stderr := runOKF(t, append([]string{"compile", dir, "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return tree(t, filepath.Join(out, "superhero")), stderr
	}
	const gender = "# Values\n\n* `gender`: 'Female', 'Male', 'N/A'\n"
	const race = "# Values\n\n* `race`: '-', 'Alien', "
	const publisher = "'Marvel Comics', 'Microsoft', "

	out := t.TempDir()
	code, _, stderr := runOKF(t, "compile", dir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "superhero: the values of 7 columns read from the database: 17 queries, ") {
		t.Errorf("stderr: %s", stderr)
	}
	first := tree(t, out)
	for file, want := range map[string]string{"superhero/tables/gender.md": gender, "superhero/tables/race.md": race, "superhero/tables/publisher.md": publisher} {
		if !strings.Contains(first[file], want) {
			t.Errorf("%s lacks %q:\n%s", file, want, first[file])
		}
	}
	if code, _, stderr := runOKF(t, "compile", dir, "--out", out); code != 0 || !maps.Equal(tree(t, out), first) {
		t.Errorf("a recompile changed the bundle: exit %d: %s", code, stderr)
	}

	none, stderr := compileTree("--no-values")
	if strings.Contains(stderr, "values") {
		t.Errorf("--no-values: %s", stderr)
	}
	for p, data := range none {
		if strings.Contains(data, "# Values") || strings.Contains(data, "values read from the database") {
			t.Errorf("--no-values: %s lists values", p)
		}
	}

	skipped, _ := compileTree("--skip-values", "gender.gender,Race.Race")
	if strings.Contains(skipped["tables/gender.md"], "# Values") || strings.Contains(skipped["tables/race.md"], "# Values") || !strings.Contains(skipped["tables/publisher.md"], publisher) {
		t.Errorf("--skip-values gender.gender,Race.Race: gender, race, publisher:\n%s\n%s\n%s", skipped["tables/gender.md"], skipped["tables/race.md"], skipped["tables/publisher.md"])
	}
	if code, _, stderr := runOKF(t, "compile", dir, "--out", t.TempDir(), "--skip-values", "gender"); code != exitUsage || !strings.Contains(stderr, "table.column") {
		t.Errorf("--skip-values gender: exit %d: %s", code, stderr)
	}

	config := filepath.Join(t.TempDir(), "okf.yaml")
	yaml := "databases:\n" +
		"  - name: heroes\n    dsn: sqlite:" + file + "\n    guard:\n      denied_columns: [publisher.publisher_name]\n" +
		"  - name: superhero\n    dsn: sqlite:elsewhere.sqlite\n    guard:\n      denied_columns: [race]\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	denied, _ := compileTree("--config", config)
	if strings.Contains(denied["tables/publisher.md"], "# Values") || strings.Contains(denied["tables/race.md"], "# Values") || !strings.Contains(denied["tables/gender.md"], gender) {
		t.Errorf("denied publisher.publisher_name by the file, race by the name: publisher, race, gender:\n%s\n%s\n%s", denied["tables/publisher.md"], denied["tables/race.md"], denied["tables/gender.md"])
	}
}

// --from a PostgreSQL database reads the values of its text columns, and
// cites the database, its password left out, for them.
func TestCompileValuesFromPostgres(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
CREATE TABLE publisher (id int PRIMARY KEY, publisher_name text);
INSERT INTO publisher VALUES (1, 'Marvel Comics'), (2, 'DC Comics'), (3, 'O''Reilly'), (4, NULL);`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", "--from", dsn, "--out", out, "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var name string
	for p, data := range tree(t, out) {
		if strings.HasSuffix(p, "/tables/publisher.md") {
			name = p
			if !strings.Contains(data, "\n# Values\n\n* `publisher_name`: 'DC Comics', 'Marvel Comics', 'O''Reilly'\n") ||
				!strings.Contains(data, "  - id: values\n    resource: postgres://postgres@") {
				t.Errorf("%s:\n%s", p, data)
			}
		}
	}
	if name == "" {
		t.Fatal("no tables/publisher.md")
	}
}

// Values that changed in the database are a change like any other: the
// concept lists the new ones, and the log gains an entry (under the
// compile's date, here none) saying the values were read.
func TestRecompileAfterValuesChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "superhero")
	if err := os.CopyFS(dir, os.DirFS(shareddata.Dir(t, "bird", "superhero"))); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", dir, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	file := filepath.Join(dir, "superhero.sqlite")
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", "file:"+file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(`UPDATE gender SET gender = 'Other' WHERE gender = 'N/A'`)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runOKF(t, "compile", dir, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files := tree(t, filepath.Join(out, "superhero"))
	if !strings.Contains(files["tables/gender.md"], "* `gender`: 'Female', 'Male', 'Other'\n") {
		t.Errorf("gender:\n%s", files["tables/gender.md"])
	}
	if log := files["log.md"]; !strings.HasPrefix(log, "# Update Log\n\n## 1970-01-01\n\n* **Update**: ") || !strings.Contains(log, "; the values of 7 columns read from the database.\n\n* **Creation**") {
		t.Errorf("log.md:\n%s", log)
	}
}

// A column a person marks as personal data in a bundle compiled from a
// live database is never read again, though okf.yaml does not mask it:
// the recompile reads one column fewer, keeps the person's concept and
// says which okf.yaml lines would mask it; once okf.yaml masks it, the
// note is gone.
func TestCompileReadsNoValuesOfPersonalData(t *testing.T) {
	dir := shareddata.Dir(t, "bird", "superhero")
	out := t.TempDir()
	if code, _, stderr := runOKF(t, "compile", dir, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gender := filepath.Join(out, "superhero", "tables", "gender.md")
	data, err := os.ReadFile(gender)
	if err != nil {
		t.Fatal(err)
	}
	before, _, ok := strings.Cut(string(data), "# Values\n")
	if !ok {
		t.Fatalf("no values listed:\n%s", data)
	}
	edited := strings.Replace(before, "\ntitle: gender\n", "\ntitle: gender\npersonal_data: [gender]\n", 1)
	if err := os.WriteFile(gender, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runOKF(t, "compile", dir, "--out", out)
	if code != 0 {
		t.Fatalf("recompile: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "superhero: the values of 6 columns read from the database") ||
		!strings.HasSuffix(stderr, "superhero: 1 column marked as personal data is neither masked nor denied in okf.yaml; add to the entry of superhero:\n  guard:\n    masked_columns: [gender.gender]\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.Contains(stdout, "personal data") {
		t.Errorf("the note is on stdout:\n%s", stdout)
	}
	if got, _ := os.ReadFile(gender); string(got) != edited {
		t.Errorf("the person's concept changed:\n%s", got)
	}
	config := filepath.Join(t.TempDir(), "okf.yaml")
	yaml := "databases:\n  - name: superhero\n    dsn: sqlite:elsewhere.sqlite\n    guard:\n      masked_columns: [gender.gender]\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runOKF(t, "compile", dir, "--out", out, "--config", config); code != 0 || strings.Contains(stderr, "personal data") {
		t.Errorf("masked in okf.yaml: exit %d, stderr:\n%s", code, stderr)
	}
}
