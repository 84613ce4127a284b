// Package golden compares a test's output with a golden file under
// testdata, and rewrites the file when the test runs with -update. A test
// package that uses it does not define its own -update flag.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag: rewrite the golden files instead of
// comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Check compares got with testdata/name, rewriting the file under -update.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	CheckFile(t, filepath.Join("testdata", name), got)
}

// CheckFile compares got with the file at path, rewriting it under
// -update: a golden file another package's testdata holds.
func CheckFile(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
