// Package shareddata finds the third-party corpora that tests and benchmarks
// read in place from ../shared/data, beside the repository. The data is
// never copied into the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvRequire names the variable that turns a missing data folder from a
// loud skip into a test failure; CI sets it.
const EnvRequire = "OKF_REQUIRE_SHARED"

// EnvDir names a variable that points at the data folder directly.
const EnvDir = "OKF_SHARED_DATA"

// Find returns the shared data folder: $OKF_SHARED_DATA, else ../shared/data
// beside the repository root (the folder holding go.mod above the working
// directory). It returns "" when there is none.
func Find() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(dir), "shared", "data")
			if info, err := os.Stat(data); err == nil && info.IsDir() {
				return data
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the shared data folder joined with elem, skipping the test
// loudly when it is absent, or failing it when OKF_REQUIRE_SHARED=1.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	root := Find()
	p := filepath.Join(append([]string{root}, elem...)...)
	if root != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "SKIP: shared test data not found at " + p + " (set " + EnvDir + ", or " + EnvRequire + "=1 to make this a failure)"
	if os.Getenv(EnvRequire) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// LiveSQLBenchDatabases returns the folder of every reconstructed
// LiveSQLBench database (livesqlbench/base-lite/<db>), sorted, skipping or
// failing the test as Dir does when the data is absent.
func LiveSQLBenchDatabases(t testing.TB) []string {
	t.Helper()
	root := Dir(t, "livesqlbench", "base-lite")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("no databases in %s", root)
	}
	return dirs
}
