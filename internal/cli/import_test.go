package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/shareddata"
)

// awkwardFiles are contents an export must give back unchanged.
var awkwardFiles = map[string]string{
	"sales/index.md":          "---\r\nokf_version: \"0.2\"\r\n---\r\n# Sales\r\n",
	"sales/tables/orders.md":  "\xef\xbb\xbf---\ntype: Table\n---\nOne row per order.",
	"sales/tables/empty.md":   "",
	"sales/latin1.md":         "caf\xe9 \xff\n",
	"sales/notes.txt":         "not markdown, not stored",
	"sales/.obsidian/conf.md": "hidden, not stored",
	"ops/deploy.md":           "# Deploy\n\n  trailing spaces   \n\n\n",
}

// storeArgs points a command at a fresh store in a temporary data folder.
func storeArgs(t *testing.T) []string {
	return []string{"--data", filepath.Join(t.TempDir(), "data")}
}

func cmd(args []string, more ...string) []string {
	return append(append([]string{}, more...), args...)
}

// readTree returns every regular file under dir, slash path → bytes.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bundleTree is what a bundle folder should export as, read straight from
// disk rather than through okf.Load: every regular .md file outside hidden
// folders, under prefix.
func bundleTree(t *testing.T, dir, prefix string, into map[string][]byte) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		into[prefix+filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameTree(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("export lacks %s", p)
		case !bytes.Equal(g, w):
			t.Errorf("%s: exported %d bytes differ from the %d imported", p, len(g), len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("export has an extra file %s", p)
		}
	}
}

func TestImportExportRoundTrip(t *testing.T) {
	src := writeBundle(t, awkwardFiles)
	st := storeArgs(t)
	code, out, errOut := run(t, cmd(st, "import", src)...)
	if code != 0 {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	wantOut := "" +
		"bundle  added  modified  deleted  unchanged\n" +
		"ops         1         0        0          0\n" +
		"sales       4         0        0          0\n" +
		"tenant default: commit 1, 5 documents changed\n"
	if out != wantOut {
		t.Fatalf("import printed\n%s\nwant\n%s", out, wantOut)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := run(t, cmd(st, "export", dst)...); code != 0 {
		t.Fatalf("export: exit %d: %s%s", code, out, errOut)
	}
	want := map[string][]byte{}
	bundleTree(t, filepath.Join(src, "sales"), "sales/", want)
	bundleTree(t, filepath.Join(src, "ops"), "ops/", want)
	if len(want) != 5 {
		t.Fatalf("fixture has %d documents, want 5", len(want))
	}
	sameTree(t, readTree(t, dst), want)

	// Importing the same folder again makes no commit.
	code, out, _ = run(t, cmd(st, "import", src)...)
	if code != 0 || !strings.Contains(out, "ops         0         0        0          1\n") ||
		!strings.HasSuffix(out, "tenant default: nothing changed, still at commit 1\n") {
		t.Fatalf("re-import: exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, cmd(st, "history")...)
	if code != 0 || strings.Count(out, "commit ") != 1 {
		t.Fatalf("history after re-import: exit %d:\n%s", code, out)
	}
}

func TestImportRecordsChanges(t *testing.T) {
	src := writeBundle(t, awkwardFiles)
	st := storeArgs(t)
	if code, out, errOut := run(t, cmd(st, "import", src, "-m", "first")...); code != 0 {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, "sales", "tables", "empty.md"), []byte("now with text\n"), 0o644))
	must(os.Remove(filepath.Join(src, "sales", "latin1.md")))
	must(os.WriteFile(filepath.Join(src, "sales", "new.md"), []byte("# New\n"), 0o644))
	code, out, _ := run(t, cmd(st, "import", src, "-m", "second")...)
	if code != 0 || !strings.Contains(out, "sales       1         1        1          2\n") ||
		!strings.HasSuffix(out, "tenant default: commit 2, 3 documents changed\n") {
		t.Fatalf("second import: exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, cmd(st, "history")...)
	if code != 0 {
		t.Fatalf("history: exit %d", code)
	}
	// Times vary; everything else is fixed.
	out = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`).ReplaceAllString(out, "TIME")
	want := `commit 2  TIME  second
  1 added, 1 modified, 1 deleted
  D f5f9e191338f  sales/latin1.md
  A f676b43bd55f  sales/new.md
  M 4eecab81c472  sales/tables/empty.md

commit 1  TIME  first
  5 added, 0 modified, 0 deleted
  A 61a79443388b  ops/deploy.md
  A 7eb033786dc4  sales/index.md
  A f5f9e191338f  sales/latin1.md
  A e3b0c44298fc  sales/tables/empty.md
  A bfad0805c5ac  sales/tables/orders.md
`
	if out != want {
		t.Fatalf("history printed\n%s\nwant\n%s", out, want)
	}
	code, out, _ = run(t, cmd(st, "history", "-n", "1")...)
	if code != 0 || strings.Count(out, "commit ") != 1 || !strings.Contains(out, "commit 2 ") {
		t.Fatalf("history -n 1: exit %d:\n%s", code, out)
	}
}

func TestImportOneBundle(t *testing.T) {
	src := writeBundle(t, map[string]string{"index.md": "# Root\r\n", "a/b.md": "b"})
	st := storeArgs(t)
	if code, out, errOut := run(t, cmd(st, "import", src, "--bundle", "solo", "--tenant", "acme")...); code != 0 {
		t.Fatalf("import --bundle: exit %d: %s%s", code, out, errOut)
	}
	dst := filepath.Join(t.TempDir(), "solo")
	if code, out, errOut := run(t, cmd(st, "export", dst, "--bundle", "solo", "--tenant", "acme")...); code != 0 {
		t.Fatalf("export --bundle: exit %d: %s%s", code, out, errOut)
	}
	want := map[string][]byte{}
	bundleTree(t, src, "", want)
	sameTree(t, readTree(t, dst), want)
	// The default tenant stays empty.
	code, _, errOut := run(t, cmd(st, "export", filepath.Join(t.TempDir(), "x"))...)
	if code != 1 || !strings.Contains(errOut, "tenant default has no documents") {
		t.Fatalf("export of the empty default tenant: exit %d, %q", code, errOut)
	}
}

func TestImportRefusesBadInput(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  string
	}{
		{"loose markdown", map[string]string{"README.md": "x", "b/a.md": "a"}, nil, 2, "README.md"},
		{"two folders, one name", map[string]string{"Sales Team/a.md": "a", "sales-team/a.md": "a"}, nil, 1, "Sales Team and sales-team"},
		{"file name", map[string]string{"b/x\\y.md": "a", "b/a.md": "a"}, nil, 1, `x\y.md`},
		{"no bundles", map[string]string{"notes.txt": "x"}, nil, 2, "no bundle folders"},
		{"bundle flag", map[string]string{"a.md": "a"}, []string{"--bundle", "Bad"}, 2, "--bundle"},
		{"tenant flag", map[string]string{"b/a.md": "a"}, []string{"--tenant", "no way"}, 2, "--tenant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := storeArgs(t)
			src := writeBundle(t, c.files)
			code, out, errOut := run(t, cmd(st, append([]string{"import", src}, c.args...)...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %q (stdout %q)", code, errOut, c.code, c.want, out)
			}
			// Nothing was stored.
			// Nothing was stored (an embedded store was not even made).
			code, out, errOut = run(t, cmd(st, "history")...)
			if !(code == 0 && out == "tenant default has no commits\n") && !(code == 1 && strings.Contains(errOut, "no store at")) {
				t.Fatalf("after a refused import: exit %d, %q, %q", code, out, errOut)
			}
		})
	}
	code, _, errOut := run(t, "import", t.TempDir(), "--data", t.TempDir(), "--store", "x.db")
	if code != 2 || !strings.Contains(errOut, "--store and --data") {
		t.Fatalf("--store with --data: exit %d, %q", code, errOut)
	}
}

func TestExportTarget(t *testing.T) {
	src := writeBundle(t, map[string]string{"b/a.md": "a"})
	st := storeArgs(t)
	if code, _, errOut := run(t, cmd(st, "import", src)...); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	dst := writeBundle(t, map[string]string{"keep.txt": "mine"})
	code, _, errOut := run(t, cmd(st, "export", dst)...)
	if code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("export into a non-empty folder: exit %d, %q", code, errOut)
	}
	if got := readTree(t, dst); len(got) != 1 || string(got["keep.txt"]) != "mine" {
		t.Fatalf("refused export touched the folder: %v", got)
	}
	if code, _, errOut := run(t, cmd(st, "export", dst, "--force")...); code != 0 {
		t.Fatalf("export --force: exit %d, %q", code, errOut)
	}
	sameTree(t, readTree(t, dst), map[string][]byte{"b/a.md": []byte("a")})
	// An empty folder is fine without --force, and no temporary folders
	// are left beside it.
	parent := t.TempDir()
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, cmd(st, "export", empty)...); code != 0 {
		t.Fatalf("export into an empty folder: exit %d, %q", code, errOut)
	}
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("beside the export: %v, %v", entries, err)
	}
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, cmd(st, "export", file, "--force")...); code != 2 || !strings.Contains(errOut, "not a folder") {
		t.Fatalf("export onto a file: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, cmd(st, "export", filepath.Join(parent, "n"), "--bundle", "nope")...); code != 1 || !strings.Contains(errOut, "no bundle nope") {
		t.Fatalf("export of a missing bundle: exit %d, %q", code, errOut)
	}
}

// TestSharedDataRoundTrip imports every bundle of ../shared/data and checks
// that export gives back identical bytes.
func TestSharedDataRoundTrip(t *testing.T) {
	samples := shareddata.Dir(t, "okf-samples")
	live := shareddata.Dir(t, "livesqlbench", "okf-sql-knowledge-bundles")
	cases := []struct {
		name   string
		dir    string
		bundle string // "" imports each subfolder as a bundle
	}{
		{"knowledge-catalog", filepath.Join(samples, "knowledge-catalog", "okf", "bundles"), ""},
		{"livesqlbench", live, ""},
		{"okf-skills sample", filepath.Join(samples, "okf-skills", "examples", "sample-bundle"), "sample-bundle"},
		{"okf-skills .okf", filepath.Join(samples, "okf-skills", ".okf"), "okf-skills"},
		{"okf-skills fixture", filepath.Join(samples, "okf-skills", "tests", "fixtures", "non-conformant"), "non-conformant"},
		{"whole shared data", shareddata.Dir(t), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := map[string][]byte{}
			args := []string{"import", c.dir}
			if c.bundle != "" {
				args = append(args, "--bundle", c.bundle)
				bundleTree(t, c.dir, "", want)
			} else {
				entries, err := os.ReadDir(c.dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
						bundleTree(t, filepath.Join(c.dir, e.Name()), e.Name()+"/", want)
					}
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s holds no documents", c.dir)
			}
			st := storeArgs(t)
			if code, out, errOut := run(t, cmd(st, args...)...); code != 0 {
				t.Fatalf("import: exit %d: %s%s", code, out, errOut)
			}
			dst := filepath.Join(t.TempDir(), "out")
			exportArgs := []string{"export", dst}
			if c.bundle != "" {
				exportArgs = append(exportArgs, "--bundle", c.bundle)
			}
			if code, out, errOut := run(t, cmd(st, exportArgs...)...); code != 0 {
				t.Fatalf("export: exit %d: %s%s", code, out, errOut)
			}
			sameTree(t, readTree(t, dst), want)
			code, out, _ := run(t, cmd(st, args...)...)
			if code != 0 || !strings.Contains(out, "nothing changed, still at commit 1") {
				t.Fatalf("re-import: exit %d:\n%s", code, out)
			}
		})
	}
}

// TestReadingCommandsCreateNoStore: okf manifest, get and mcp with a
// mistyped --data once each left a new empty okf.db, and mcp served 0
// concepts with exit 0.
func TestReadingCommandsCreateNoStore(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{{"manifest"}, {"get", "tables/orders"}, {"search", "orders"}, {"context", "orders"}, {"history"}, {"export", filepath.Join(t.TempDir(), "x")}, {"mcp"}} {
		code, _, errOut := run(t, append(args, "--data", typo)...)
		if code != 1 || !strings.Contains(errOut, "no store at "+filepath.Join(typo, "okf.db")) {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("%v made %s", args, typo)
		}
	}
}
