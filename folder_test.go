package okf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/shareddata"
)

// writeFolder writes files (slash path → content) under a new folder.
func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(p)), content)
	}
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestReadFolderPicksWhatLoadPicks checks that ReadFolder picks exactly the
// documents Load does, with their exact bytes: regular .md files, nothing
// hidden, no link followed.
func TestReadFolderPicksWhatLoadPicks(t *testing.T) {
	dir := writeFolder(t, map[string]string{
		"sales/index.md":          "---\r\nokf_version: \"0.2\"\r\n---\r\n# Sales\r\n",
		"sales/tables/orders.md":  "\xef\xbb\xbf---\ntype: Table\n---\nOne row per order.",
		"sales/tables/empty.md":   "",
		"sales/latin1.md":         "caf\xe9 \xff\n",
		"sales/notes.txt":         "not markdown",
		"sales/.obsidian/conf.md": "hidden",
		"sales/.draft.md":         "hidden",
		"ops/deploy.md":           "# Deploy\n",
	})
	outside := writeFolder(t, map[string]string{"secret.md": "outside", "more/secret.md": "outside"})
	symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(dir, "ops", "link.md"))
	symlink(t, filepath.Join(outside, "more"), filepath.Join(dir, "sales", "linked-dir"))
	got, err := ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ops/deploy.md", "sales/index.md", "sales/latin1.md", "sales/tables/empty.md", "sales/tables/orders.md"}
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, want) {
		t.Errorf("ReadFolder read %v, want %v", paths, want)
	}
	dirs := []string{dir, filepath.Join(dir, "sales")}
	if root := shareddata.Find(); root != "" {
		dirs = append(dirs, root, filepath.Join(root, "okf-samples", "okf-skills", ".okf"))
	}
	for _, d := range dirs {
		got, err := ReadFolder(d)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(b.Docs) {
			t.Errorf("%s: ReadFolder read %d documents, Load %d", d, len(got), len(b.Docs))
		}
		for _, doc := range b.Docs {
			if !bytes.Equal(got[doc.Path], doc.Raw) {
				t.Errorf("%s: %s differs between ReadFolder and Load", d, doc.Path)
			}
		}
	}
}

func TestFindBundles(t *testing.T) {
	outside := writeFolder(t, map[string]string{"x.md": "outside"})
	cases := []struct {
		name  string
		files map[string]string
		links map[string]string // link → target under outside
		want  []string          // name=folder, folder relative to the root
	}{
		{"one bundle", map[string]string{"index.md": "", "tables/t.md": ""}, nil, []string{"=."}},
		{"bundle folders", map[string]string{"b/a.md": "", "a/deep/x.md": "", "images/p.png": "", "README.txt": ""}, nil,
			[]string{"a=a", "b=b"}},
		{"names", map[string]string{"Sales Team/a.md": "", ".git/x.md": "", "_site/x.md": ""}, nil,
			[]string{"sales-team=Sales Team", "site=_site"}},
		{"hidden or linked markdown at the top", map[string]string{".notes.md": "", "b/a.md": ""},
			map[string]string{"link.md": "x.md"}, []string{"b=b"}},
		{"linked folder", map[string]string{"b/a.md": ""}, map[string]string{"c": "."}, []string{"b=b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFolder(t, c.files)
			for link, target := range c.links {
				symlink(t, filepath.Join(outside, target), filepath.Join(dir, link))
			}
			got, err := FindBundles(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, b := range got {
				rel, err := filepath.Rel(dir, b.Dir)
				if err != nil {
					t.Fatal(err)
				}
				if rel == "." {
					// The folder itself, named after it.
					if b.Name != BundleName(filepath.Base(dir)) {
						t.Errorf("the folder %s is called %s", dir, b.Name)
					}
					b.Name = ""
				}
				names = append(names, b.Name+"="+rel)
			}
			if !slices.Equal(names, c.want) {
				t.Errorf("bundles %v, want %v", names, c.want)
			}
		})
	}
}

func TestFindBundlesRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"one name, two folders", map[string]string{"Sales/a.md": "", "sales/b.md": ""}, []string{"Sales", "sales", "both make the bundle name sales"}},
		{"no markdown", map[string]string{"notes.txt": "", "b/c.txt": "", ".git/x.md": ""}, []string{"no markdown files"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFolder(t, c.files)
			_, err := FindBundles(dir)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want an error naming %q", err, w)
				}
			}
		})
	}
}

// TestBundlesKeepsLooseDocuments checks that documents at the top of a
// folder of bundles are reported, not read as a bundle.
func TestBundlesKeepsLooseDocuments(t *testing.T) {
	dir := writeFolder(t, map[string]string{"README.md": "", "b/a.md": "", ".hidden.md": ""})
	bundles, loose, err := Bundles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) != 1 || bundles[0].Name != "b" || !slices.Equal(loose, []string{"README.md"}) {
		t.Errorf("bundles %v, loose %v", bundles, loose)
	}
}

func TestBundleName(t *testing.T) {
	for in, want := range map[string]string{
		"sales":                 "sales",
		"Sales Team":            "sales-team",
		".okf":                  "okf",
		"_drafts":               "drafts",
		"a.b_c-d":               "a.b_c-d",
		"Über":                  "ber",
		"---":                   "bundle",
		"":                      "bundle",
		strings.Repeat("x", 70): strings.Repeat("x", 64),
	} {
		if got := BundleName(in); got != want {
			t.Errorf("BundleName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFolderFSStaysInside checks the file system the folder readers share:
// files of folders read in any order, every error naming the whole path,
// and no path out of the folder, through a link or otherwise.
func TestFolderFSStaysInside(t *testing.T) {
	dir := writeFolder(t, map[string]string{"a/x.md": "ax", "a/y.md": "ay", "b/c/z.md": "bcz", "top.md": "top"})
	outside := writeFolder(t, map[string]string{"secret.md": "outside"})
	symlink(t, outside, filepath.Join(dir, "a", "out"))
	symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(dir, "b", "c", "secret.md"))
	err := inFolder(dir, func(fsys fs.FS) error {
		for _, p := range []string{"a/x.md", "b/c/z.md", "a/y.md", "top.md", "b/c/z.md"} {
			got, err := fs.ReadFile(fsys, p)
			if err != nil || string(got) != strings.ReplaceAll(strings.TrimSuffix(p, ".md"), "/", "") {
				t.Errorf("%s: %q, %v", p, got, err)
			}
		}
		entries, err := fs.ReadDir(fsys, "a")
		var names []string
		for _, e := range entries {
			names = append(names, e.Name()+":"+e.Type().String())
		}
		if err != nil || strings.Join(names, " ") != "out:L--------- x.md:---------- y.md:----------" {
			t.Errorf("listing a: %v, %v", names, err)
		}
		for _, p := range []string{"a/out/secret.md", "b/c/secret.md", "../secret.md", "a/../../secret.md", "a/missing.md", "nope/x.md"} {
			_, err := fs.ReadFile(fsys, p)
			var pe *fs.PathError
			if err == nil || !errors.As(err, &pe) || pe.Path != p {
				t.Errorf("%s: read through the folder, or an error without the path: %v", p, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
