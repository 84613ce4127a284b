package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

// names lists what a folder holds.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	for _, content := range []string{"one\n", "two\n"} {
		if err := WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("read %q, %v; want %q", got, err, content)
		}
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", info.Mode(), err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"tokens.json"}) {
		t.Errorf("beside the file: %v", got)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Error("wrote into a folder that does not exist")
	}
}

// TestWriteFileReplacesOnlyRegularFiles: a link, a folder or a pipe at the
// path is left as it was, and the error names the path.
func TestWriteFileReplacesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, folder, pipe} {
		before, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(p, []byte("new"), 0o644); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("WriteFile(%s): %v, want a refusal naming it", p, err)
		}
		if after, err := os.Lstat(p); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v, %v", p, after, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "kept" {
		t.Errorf("the link's target holds %q", got)
	}
}

func TestDir(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	write := func(files map[string]string) error {
		d, err := NewDir(target)
		if err != nil {
			return err
		}
		defer d.Discard()
		for p, content := range files {
			if err := d.WriteFile(p, []byte(content)); err != nil {
				return err
			}
		}
		return d.Commit()
	}
	if err := write(map[string]string{"a.md": "one", "sub/b.md": "two"}); err != nil {
		t.Fatal(err)
	}
	if err := write(map[string]string{"c.md": "three"}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, target); !slices.Equal(got, []string{"c.md"}) {
		t.Errorf("out holds %v after a replacement", got)
	}
	if info, err := os.Stat(target); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("out: %v, %v; want mode 0755", info, err)
	}
	// A failed write leaves the folder as it was, and nothing beside it.
	if err := write(map[string]string{"d.md": "four", "../escape.md": "x"}); err == nil || !strings.Contains(err.Error(), "outside the folder") {
		t.Errorf("a path outside the folder: %v", err)
	}
	if got := names(t, target); !slices.Equal(got, []string{"c.md"}) {
		t.Errorf("out holds %v after a failed write", got)
	}
	if got := names(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside out: %v", got)
	}
	// What is not a folder is not replaced.
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	target = file
	if err := write(map[string]string{"a.md": "x"}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("replacing a file: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "kept" {
		t.Errorf("the file holds %q", got)
	}
}
