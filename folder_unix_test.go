//go:build unix

package okf

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFolderReadFile: the folder's ReadFile reads what os.ReadFile reads,
// follows a link to a file beside it as Open does, and refuses a pipe instead
// of waiting on it for ever (a file swapped for one after the listing).
func TestFolderReadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 300_000)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	files := map[string][]byte{"a.md": []byte("# A\n"), "sub/b.md": big, "sub/empty.md": nil}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("b.md", filepath.Join(dir, "sub", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := inFolder(dir, func(fsys fs.FS) error {
			for name, want := range files {
				got, err := fs.ReadFile(fsys, name)
				if err != nil || string(got) != string(want) {
					t.Errorf("%s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
				}
			}
			if got, err := fs.ReadFile(fsys, "sub/link.md"); err != nil || string(got) != string(big) {
				t.Errorf("a link inside the folder: %d bytes, %v", len(got), err)
			}
			if _, err := fs.ReadFile(fsys, "pipe.md"); err == nil {
				t.Error("a pipe was read")
			}
			if _, err := fs.ReadFile(fsys, "missing.md"); !os.IsNotExist(err) {
				t.Errorf("a missing file: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ReadFile of a pipe waits for a writer")
	}
}
