package compile

import (
	"github.com/okf-tools/okf/internal/identwords"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestWriteSwapsWholeBundlesOrNothing(t *testing.T) {
	out := t.TempDir()
	first := &Bundle{Name: "a", Files: map[string][]byte{"index.md": []byte("one\n"), "tables/t.md": []byte("t\n")}}
	if err := Write(out, WriteOptions{}, first); err != nil {
		t.Fatal(err)
	}
	// The second run replaces a, but b cannot be written: a must stay as
	// it was, and no temporary folder may be left behind.
	next := &Bundle{Name: "a", Files: map[string][]byte{"index.md": []byte("two\n")}}
	broken := &Bundle{Name: "b", Files: map[string][]byte{"bad\x00name.md": []byte("x")}}
	if err := Write(out, WriteOptions{}, next, broken); err == nil {
		t.Fatal("writing a file name with a NUL byte succeeded")
	}
	if got, _ := os.ReadFile(filepath.Join(out, "a", "index.md")); string(got) != "one\n" {
		t.Errorf("a/index.md is %q after a failed run", got)
	}
	if _, err := os.Stat(filepath.Join(out, "a", "tables", "t.md")); err != nil {
		t.Errorf("a/tables/t.md is gone after a failed run: %v", err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a"}) {
		t.Errorf("out holds %v, want only a", names)
	}
	if err := Write(out, WriteOptions{}, next); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "a", "index.md")); string(got) != "two\n" {
		t.Errorf("a/index.md is %q after a good run", got)
	}
	if _, err := os.Stat(filepath.Join(out, "a", "tables")); !os.IsNotExist(err) {
		t.Errorf("a/tables survived a replacement: %v", err)
	}
	if err := Write(out, WriteOptions{}, next, next); err == nil || !strings.Contains(err.Error(), "two databases are named a") {
		t.Errorf("two bundles with one name: %v", err)
	}
}

// TestWriteLeavesAnUnchangedBundleAlone: a recompile that would write a
// folder byte for byte as it is, a person's edits and files included,
// leaves that folder in place (issue 25, defect 10: rewriting all of it
// made a recompile cost 2.6 first compiles); a changed bundle beside it is
// still replaced whole, and so is a folder whose marker differs.
func TestWriteLeavesAnUnchangedBundleAlone(t *testing.T) {
	out := t.TempDir()
	a := &Bundle{Name: "a", Files: map[string][]byte{"index.md": []byte("a\n"), "tables/t.md": []byte("t\n")}}
	b := &Bundle{Name: "b", Files: map[string][]byte{"index.md": []byte("b\n")}}
	if err := Write(out, WriteOptions{}, a, b); err != nil {
		t.Fatal(err)
	}
	stat := func(p string) os.FileInfo {
		t.Helper()
		info, err := os.Stat(filepath.Join(out, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	folderA, fileA, folderB := stat("a"), stat("a/tables/t.md"), stat("b")
	if err := Write(out, WriteOptions{}, a, b); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(folderA, stat("a")) || !os.SameFile(fileA, stat("a/tables/t.md")) || !os.SameFile(folderB, stat("b")) {
		t.Error("an unchanged bundle was written again")
	}
	// A person's edit and file are what the folder would hold again.
	os.WriteFile(filepath.Join(out, "a", "tables", "t.md"), []byte("edited\n"), 0o644)
	os.WriteFile(filepath.Join(out, "a", "notes.md"), []byte("mine\n"), 0o644)
	b.Files["index.md"] = []byte("b, changed\n")
	if err := Write(out, WriteOptions{}, a, b); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(folderA, stat("a")) {
		t.Error("a bundle holding only a person's edit and file was written again")
	}
	if os.SameFile(folderB, stat("b")) {
		t.Error("a changed bundle was not replaced")
	}
	for p, want := range map[string]string{"a/tables/t.md": "edited\n", "a/notes.md": "mine\n", "b/index.md": "b, changed\n"} {
		if got, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(p))); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	// The marker is part of what is compared: one okf would write otherwise
	// is written again.
	record := filepath.Join(out, "a", Marker)
	want, _ := os.ReadFile(record)
	os.WriteFile(record, append(want, '\n'), 0o644)
	if err := Write(out, WriteOptions{}, a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(record); string(got) != string(want) || os.SameFile(folderA, stat("a")) {
		t.Errorf("a folder whose marker differs was left as it is: %q", got)
	}
}

// TestWriteTakesFilesAlreadyRead: the files a caller has just read (okf
// compile, for the drift report) are not read again; files it did not
// read are, and none it names that the folder lacks is written.
func TestWriteTakesFilesAlreadyRead(t *testing.T) {
	out := t.TempDir()
	b := &Bundle{Name: "a", Files: map[string][]byte{"index.md": []byte("a\n"), "tables/t.md": []byte("t\n")}}
	if err := Write(out, WriteOptions{}, b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "a", "tables", "t.md"), []byte("edited since\n"), 0o644)
	os.WriteFile(filepath.Join(out, "a", "notes.txt"), []byte("mine\n"), 0o644)
	read := map[string]map[string][]byte{"a": {"tables/t.md": []byte("edited\n"), "gone.md": []byte("gone\n")}}
	b.Files["index.md"] = []byte("a, changed\n")
	if err := Write(out, WriteOptions{Read: read}, b); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"tables/t.md": "edited\n", "notes.txt": "mine\n", "index.md": "a, changed\n", "gone.md": ""} {
		if got, _ := os.ReadFile(filepath.Join(out, "a", filepath.FromSlash(p))); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

func TestCheckRejectsWhatNoBundleCanHold(t *testing.T) {
	table := func() *Table {
		return &Table{Name: "t", Columns: []*Column{{Name: "id", Type: "integer"}}, PrimaryKey: []string{"id"}}
	}
	for _, c := range []struct {
		db   *Database
		want string
	}{
		{&Database{Name: "x"}, "has no tables"},
		{&Database{Name: "../up", Tables: []*Table{table()}}, "cannot name a bundle folder"},
		{&Database{Name: "x", Tables: []*Table{{Name: "t", Columns: []*Column{{Name: "id"}}, ForeignKeys: []ForeignKey{{Columns: []string{"id"}, RefTable: "t"}}}}}, "references 0"},
		{&Database{Name: "x", Tables: []*Table{table(), table()}}, "table t is defined twice"},
		{&Database{Name: "x", Tables: []*Table{{Name: "t", Columns: []*Column{{Name: "id"}}, PrimaryKey: []string{"nope"}}}}, "primary key column nope"},
		{&Database{Name: "x", Tables: []*Table{table()}, Rules: []*Rule{{ID: 1, Name: "a"}, {ID: 1, Name: "b"}}}, "rule id 1 is used twice"},
		{&Database{Name: "x", Tables: []*Table{table()}, Rules: []*Rule{{ID: 1, Name: "a", DependsOn: []int{2}}}}, "depends on rule 2"},
	} {
		if err := c.db.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
		if _, err := Build(c.db, Options{Generator: "okf/test"}); err == nil {
			t.Errorf("Build accepted a database Check rejects (%s)", c.want)
		}
	}
}

func TestAbbreviations(t *testing.T) {
	for _, c := range []struct {
		key, name string
		want      bool
	}{
		{"powratew", "PowerRatedW", true},
		{"soillosspct", "SoilingLossPct", true},
		{"ffactorinit", "FillFactor", false},
		{"latms", "LatencyMs", true},
		{"power", "PowerRatedW", false},
	} {
		if got := abbreviates(c.key, identwords.Split(c.name)); got != c.want {
			t.Errorf("abbreviates(%q, %q) = %v", c.key, c.name, got)
		}
	}
	for _, c := range []struct{ name, full, inner string }{
		{"Resource Utilization Ratio (RUR)", "Resource Utilization Ratio", "RUR"},
		{"hazlevel", "hazlevel", ""},
		{"SoilingLossPct (Soiling Loss Percentage)", "SoilingLossPct", "Soiling Loss Percentage"},
	} {
		if full, inner := splitName(c.name); full != c.full || inner != c.inner {
			t.Errorf("splitName(%q) = %q, %q", c.name, full, inner)
		}
	}
	if !isAbbrev("RUR") || !isAbbrev("PM25") || isAbbrev("Latency") || isAbbrev("Soiling Loss") {
		t.Error("isAbbrev misjudges")
	}
}

func TestWriteReplacesOnlyWhatOkfWrote(t *testing.T) {
	out := t.TempDir()
	b := &Bundle{Name: "shop", Files: map[string][]byte{"index.md": []byte("one\n"), "tables/t.md": []byte("t\n")}}
	write := func(o WriteOptions) error { return Write(out, o, b) }

	// A folder of someone's own documents where the bundle would go.
	mine := filepath.Join(out, "shop")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(WriteOptions{}); err == nil || !strings.Contains(err.Error(), "okf did not write it") || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("over a folder okf did not write: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(got) != "mine" {
		t.Fatal("the refused write touched the folder")
	}
	// The sources being compiled are never replaced, not even with Force.
	if err := write(WriteOptions{Force: true, Sources: []string{mine}}); err == nil || !strings.Contains(err.Error(), "being compiled") {
		t.Fatalf("over its own sources: %v", err)
	}
	if err := write(WriteOptions{Force: true, Sources: []string{filepath.Join(mine, "notes.txt")}}); err == nil {
		t.Fatal("over a folder holding a source: no error")
	}
	if err := write(WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// What okf wrote, unchanged, is regenerated; a file a person edited or
	// added is kept, and an edit the sources now contradict is reported.
	if err := write(WriteOptions{}); err != nil {
		t.Fatalf("recompile over its own output: %v", err)
	}
	if err := os.WriteFile(filepath.Join(mine, "tables", "t.md"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "notes.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var conflicts []string
	o := WriteOptions{Conflict: func(bundle, p, why string) { conflicts = append(conflicts, bundle+"/"+p+": "+why) }}
	b.Files = map[string][]byte{"index.md": []byte("two\n"), "tables/t.md": []byte("t\n")}
	if err := write(o); err != nil || len(conflicts) != 0 {
		t.Fatalf("over edits: %v, %v", err, conflicts)
	}
	for p, want := range map[string]string{"tables/t.md": "edited\n", "notes.md": "mine\n", "index.md": "two\n"} {
		if got, _ := os.ReadFile(filepath.Join(mine, filepath.FromSlash(p))); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	b.Files["tables/t.md"] = []byte("t, with a new column\n")
	if err := write(o); err != nil || len(conflicts) != 1 || !strings.HasPrefix(conflicts[0], "shop/tables/t.md: edited by a person, and the sources now say otherwise") {
		t.Fatalf("an edit the sources contradict: %v, %v", err, conflicts)
	}
	// A person's file where okf would now write one: refused, named.
	b.Files["notes.md"] = []byte("generated notes\n")
	if err := write(WriteOptions{}); err == nil || !strings.Contains(err.Error(), "notes.md, which okf did not write") {
		t.Fatalf("a clash: %v", err)
	}
}
