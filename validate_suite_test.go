package okf

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/internal/golden"
)

var update = golden.Update

// suiteDir holds one folder a case: the crafted bundle in bundle/ and the
// golden text report in expected.txt.
const suiteDir = "testdata/validate"

// suiteNow is the "today" every golden report is rendered with.
var suiteNow = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// suiteDisk builds the folder a case stands for when its bundle cannot be
// committed as it is: git refuses to track a .git folder, symlinks do not
// survive every checkout, and file modes do not survive git at all. Every
// other case is its bundle/ folder as committed.
var suiteDisk = map[string]func(t *testing.T, dir string) string{
	"file-unreadable": func(t *testing.T, dir string) string {
		tmp := copyBundle(t, dir)
		if err := os.Chmod(filepath.Join(tmp, "secret.md"), 0); err != nil {
			t.Fatal(err)
		}
		return tmp
	},
	"hidden-folders": func(t *testing.T, dir string) string {
		tmp := copyBundle(t, dir)
		mustWrite(t, filepath.Join(tmp, ".git", "HEAD.md"), "ref: refs/heads/main\n")
		mustWrite(t, filepath.Join(tmp, ".git", "info", "notes.md"), "\xff no frontmatter, not UTF-8\n")
		return tmp
	},
	"symlink": func(t *testing.T, dir string) string {
		tmp := copyBundle(t, dir)
		for link, target := range map[string]string{
			"alias.md":       "real.md",                // a second name for a concept
			"outside.md":     "../../../../etc/passwd", // a way out of the bundle
			"loop.md":        "loop.md",                // a link that never resolves
			"dir/up":         "..",                     // a folder cycle
			"linked-dir":     "dir",                    // a folder alias
			"dir/broken.md":  "nowhere.md",             // a dangling link
			"dir/inside2.md": "inside.md",
		} {
			if err := os.Symlink(target, filepath.Join(tmp, link)); err != nil {
				t.Skipf("cannot create symlinks here: %v", err)
			}
		}
		return tmp
	},
}

// caseDir returns the folder of a case's bundle, built by suiteDisk when
// the committed one does not stand for it.
func caseDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(suiteDir, name, "bundle")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("case %s has no bundle folder: %v", name, err)
	}
	if build, ok := suiteDisk[name]; ok {
		return build(t, dir)
	}
	return dir
}

// loadCase loads a case's bundle. Root, as CI runs, reads a file without
// read permission all the same, so file-unreadable's file fails to open
// through the file system it is loaded from.
func loadCase(t *testing.T, name string) (*Bundle, error) {
	t.Helper()
	dir := caseDir(t, name)
	if name == "file-unreadable" {
		return LoadFS(unreadableFS{os.DirFS(dir), map[string]bool{"secret.md": true}})
	}
	return Load(dir)
}

// unreadableFS fails to open the listed files, as a file without read
// permission does for anyone but root.
type unreadableFS struct {
	fs.FS
	unreadable map[string]bool
}

func (u unreadableFS) Open(name string) (fs.File, error) {
	if u.unreadable[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return u.FS.Open(name)
}

func copyBundle(t *testing.T, dir string) string {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return tmp
}

func mustWrite(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// suiteCases returns the case names, sorted.
func suiteCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// renderCase validates a case's bundle and returns its text report.
func renderCase(t *testing.T, name string) string {
	t.Helper()
	b, err := loadCase(t, name)
	if err != nil {
		t.Fatalf("load case %s: %v", name, err)
	}
	var out bytes.Buffer
	if err := Validate(b, Options{Now: suiteNow}).WriteText(&out, name, -1, false); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestValidateSuite(t *testing.T) {
	names := suiteCases(t)
	if len(names) < 45 {
		t.Errorf("only %d cases in %s; the suite wants at least 45", len(names), suiteDir)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, name)
			golden := filepath.Join(suiteDir, name, "expected.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(want) != got {
				t.Errorf("report differs from %s (- expected, + got; rerun with -update to accept):\n%s",
					golden, lineDiff(splitLines(string(want)), splitLines(got)))
			}
		})
	}
}

// splitLines splits a text after each newline, without the empty string
// that follows a final one.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineDiff renders the difference of two texts line by line, from their
// longest common subsequence of lines.
func lineDiff(a, b []string) string {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	line := func(mark, s string) { fmt.Fprintf(&out, "%s %s\n", mark, strings.TrimSuffix(s, "\n")) }
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			line(" ", a[i])
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			line("-", a[i])
			i++
		default:
			line("+", b[j])
			j++
		}
	}
	return out.String()
}

func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"a\n", "b\n", "c\n"}, []string{"a\n", "x\n", "c\n", "d\n"})
	want := "  a\n- b\n+ x\n  c\n+ d\n"
	if got != want {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
}

var findingCodeRe = regexp.MustCompile(`^  (?:✗ ERROR|! warn  |· info  ) .* \[([a-z0-9-]+)\]$`)

func TestSuiteCoversEveryRule(t *testing.T) {
	seen := map[string][]string{}
	for _, name := range suiteCases(t) {
		raw, err := os.ReadFile(filepath.Join(suiteDir, name, "expected.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if m := findingCodeRe.FindStringSubmatch(l); m != nil {
				seen[m[1]] = append(seen[m[1]], name)
			}
		}
	}
	for _, r := range Checks {
		// Some of okf's own conventions are checked beside Validate,
		// through Options.Checks, and tested where the check lives.
		if len(seen[r.Code]) == 0 && r.Section != "okf" {
			t.Errorf("no case of %s finds %s; add testdata/validate/%s", suiteDir, r.Code, r.Code)
		}
		delete(seen, r.Code)
	}
	for code, cases := range seen {
		t.Errorf("golden files of %v hold the unknown code %s", cases, code)
	}
}

// TestReservedFilesDecideConformance pins the verdicts of §11.3: an
// index.md or log.md that breaks the structure §8, §9 and §12 give it makes
// the bundle non-conformant, each case through its own code only, while
// the reserved-file matters §11 leaves soft stay warnings. Rewriting the
// golden files cannot turn these errors back into warnings unnoticed.
func TestReservedFilesDecideConformance(t *testing.T) {
	for name, code := range map[string]string{
		"index-frontmatter":      "index-frontmatter",
		"index-root-keys":        "index-root-keys",
		"index-root-yaml":        "index-root-yaml",
		"index-root-not-mapping": "index-root-yaml",
		"log-heading-invalid":    "log-heading-invalid",
		"log-entry-undated":      "log-entry-undated",
		"log-order":              "log-order",
		"log-frontmatter":        "",
		"index-out-of-sync":      "",
	} {
		t.Run(name, func(t *testing.T) {
			b, err := loadCase(t, name)
			if err != nil {
				t.Fatal(err)
			}
			rep := Validate(b, Options{Now: suiteNow})
			if rep.Conformant() != (code == "") {
				t.Errorf("conformant = %v, want %v", rep.Conformant(), code == "")
			}
			for _, f := range rep.Findings {
				if f.Severity == Error && (f.Code != code || f.Section != "§11.3") {
					t.Errorf("unexpected error %s", f)
				}
			}
		})
	}
}
