package sqlguard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenAuditLog(t *testing.T) {
	if a, err := OpenAuditLog(""); a != nil || err != nil || a.Close() != nil {
		t.Errorf("no path: %v, %v; want no log", a, err)
	}
	// A path under a regular file cannot be opened, root or not.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "audit.jsonl")
	if _, err := OpenAuditLog(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("OpenAuditLog(%s): %v, want an error naming it", bad, err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), "fixture", "sqlite:"+sqliteFixture(t), fixtureOptions, a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Query(context.Background(), "test", "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 || info.Size() == 0 {
		t.Errorf("audit log %v, %v; want one line, mode 0600", info, err)
	}
}

// TestAuditWriteErrorsSurface checks that a write that fails is reported
// once, at once, and again by Err and Close, naming the file.
func TestAuditWriteErrorsSurface(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	a, err := OpenAuditLog("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	a.OnError(func(err error) { reported = append(reported, err) })
	db, err := Open(context.Background(), "fixture", "sqlite:"+sqliteFixture(t), fixtureOptions, a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 2 {
		if _, err := db.Query(context.Background(), "test", "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "/dev/full") {
		t.Errorf("reported %v, want the first failure once, naming /dev/full", reported)
	}
	if err := a.Err(); err == nil || err.Error() != reported[0].Error() {
		t.Errorf("Err() = %v", err)
	}
	if err := a.Close(); err == nil || err.Error() != reported[0].Error() {
		t.Errorf("Close() = %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestAuditWriterErrors(t *testing.T) {
	a := NewAuditLog(failingWriter{})
	a.record(AuditEntry{SQL: "SELECT 1"})
	if err := a.Close(); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Close() = %v, want the write error", err)
	}
}
