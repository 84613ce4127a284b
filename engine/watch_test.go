package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/okf-tools/okf/readmodel"
)

// TestWatch: a change to the watched folder is compiled, and the next
// search sees it; a change the load does not read (in a dot-folder, a
// hidden file, a link) is not.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sales", "orders.md"), "---\ntype: Table\ndescription: Orders.\n---\nOne row per order.\n")
	docs, err := FolderDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := NewFolderLibrary("acme", docs)
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		reports []string
		done    = make(chan error, 1)
	)
	go func() {
		done <- lib.Watch(ctx, dir, WatchOptions{Debounce: 50 * time.Millisecond, Poll: 10 * time.Millisecond,
			Load: func() ([]readmodel.Doc, error) { return FolderDocs(dir) },
			Report: func(s string) {
				mu.Lock()
				reports = append(reports, s)
				mu.Unlock()
			}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	search := func(q string) string {
		v, err := lib.View(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		hits, err := Search(context.Background(), v, SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		return SearchText(v, hits, testNow)
	}
	// waitFor polls until the search answers as wanted; the deadline only
	// keeps a broken watcher from hanging the test.
	waitFor := func(q string, want bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if strings.Contains(search(q), "refunds\tsales") == want {
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("search %q never answered as wanted (%v); reports: %q", q, want, reports)
	}

	if strings.Contains(search("refund"), "refunds") {
		t.Fatal("found refunds before they were written")
	}
	before, err := fingerprint(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".git", "refunds.md"), "---\ntype: Table\n---\nrefund\n")
	if after, _ := fingerprint(dir); after != before {
		t.Error("a file in a dot-folder changed the fingerprint")
	}
	// Nor do a hidden file and a link, which the load does not read.
	writeFile(t, filepath.Join(dir, "sales", ".draft.md"), "hidden\n")
	if err := os.Symlink(filepath.Join(dir, "sales", "orders.md"), filepath.Join(dir, "sales", "link.md")); err != nil {
		t.Fatal(err)
	}
	if after, _ := fingerprint(dir); after != before {
		t.Error("a hidden file or a link changed the fingerprint")
	}
	writeFile(t, filepath.Join(dir, "sales", "refunds.md"), "---\ntype: Table\ndescription: Refunds.\n---\nOne row per refund.\n")
	waitFor("refund", true)
	if err := os.Remove(filepath.Join(dir, "sales", "refunds.md")); err != nil {
		t.Fatal(err)
	}
	waitFor("refund", false)
	mu.Lock()
	defer mu.Unlock()
	if len(reports) < 2 || !strings.HasPrefix(reports[0], "watch: snapshot ") {
		t.Errorf("reports = %q", reports)
	}
}

// writeFile writes content at path, making its folders.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, []byte(content), 0o644)); err != nil {
		t.Fatal(err)
	}
}

// TestWatchReloadKeepsLastGoodVersion: a reload that finds a document
// with diagnostics (a save caught half written: the frontmatter not yet
// closed) serves the last version that compiled cleanly, and says so; a
// document that never compiled cleanly is served as it is, and the next
// clean version replaces the kept one.
func TestWatchReloadKeepsLastGoodVersion(t *testing.T) {
	doc := func(path, content string) readmodel.Doc {
		return readmodel.Doc{Bundle: "sales", Path: path, Content: []byte(content)}
	}
	good := doc("orders.md", "---\ntype: Table\ndescription: One row per order.\n---\nOrders.\n")
	lib, st := NewFolderLibrary("acme", []readmodel.Doc{good})
	if len(st.Diagnostics) != 0 {
		t.Fatalf("diagnostics of the good version: %v", st.Diagnostics)
	}
	manifest := func() string {
		v, err := lib.View(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return string(v.Snap.Manifest)
	}

	half := doc("orders.md", "---\ntype: Table\ndescription: One row per ord")
	fresh := doc("notes.md", "---\ntype: Note\ndescription: Not closed yet")
	st = lib.Reload([]readmodel.Doc{half, fresh})
	var msgs []string
	for _, d := range st.Diagnostics {
		msgs = append(msgs, d.String())
	}
	want := []string{
		"sales/notes.md: no frontmatter, compiled as plain markdown",
		"sales/orders.md: no frontmatter, compiled as plain markdown (still serving its last good version)",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics of the half-written reload:\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if m := manifest(); !strings.Contains(m, "orders\tsales\ttable\t-\t-\tOne row per order.") || !strings.Contains(m, "notes\tsales\t") {
		t.Errorf("manifest after the half-written reload:\n%s", m)
	}

	// Still half written at the next reload: the same good version.
	if lib.Reload([]readmodel.Doc{half}); !strings.Contains(manifest(), "One row per order.") {
		t.Errorf("manifest after a second half-written reload:\n%s", manifest())
	}
	st = lib.Reload([]readmodel.Doc{doc("orders.md", "---\ntype: Table\ndescription: One row per order line.\n---\nOrder lines.\n")})
	if m := manifest(); len(st.Diagnostics) != 0 || !strings.Contains(m, "One row per order line.") || strings.Contains(m, "notes") {
		t.Errorf("manifest after the finished save (%v):\n%s", st.Diagnostics, m)
	}
}
