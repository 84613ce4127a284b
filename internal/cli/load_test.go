package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPrintsAndCreates(t *testing.T) {
	code, stdout, stderr := runOKF(t, "load", shopDocs, "--print", "postgres", "--enums-from-meanings")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"CREATE TYPE tier_enum AS ENUM ('Bronze', 'Silver', 'Gold');",
		"CREATE TABLE orderlines (",
		"PRIMARY KEY (lineorderref, lineno)",
		"ALTER TABLE orders ADD FOREIGN KEY (ordcustref) REFERENCES customers (custid);",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("DDL lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "note: foreign key orderlines(sku) → products(skucode) left out: there is no table products") {
		t.Errorf("notes: %q", stderr)
	}

	path := filepath.Join(t.TempDir(), "shop.db")
	if code, _, stderr := runOKF(t, "load", shopDocs, "--into", "sqlite:"+path); code != 0 || !strings.Contains(stderr, "loaded shop: 3 tables") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runOKF(t, "load", shopDocs, "--into", "sqlite:"+path); code != exitFail || !strings.Contains(stderr, "already exists") {
		t.Errorf("second load into the same file: exit %d, %q", code, stderr)
	}
	// --into reads a DSN as every command does: a .db path is a SQLite file.
	bare := filepath.Join(t.TempDir(), "bare.db")
	if code, _, stderr := runOKF(t, "load", shopDocs, "--into", bare); code != 0 || !strings.Contains(stderr, "loaded shop: 3 tables") {
		t.Errorf("--into %s: exit %d, %q", bare, code, stderr)
	}
	for _, args := range [][]string{
		{"load", shopDocs},
		{"load", shopDocs, "--print", "mysql"},
		{"load", shopDocs, "--into", "mysql://x"},
		{"load", shopDocs, "--into", "sqlite:"},
		{"load", shopDocs, "--into", "shop"},
		{"load", shopDocs, "--into", "sqlite:x.db", "--print", "sqlite"},
	} {
		if code, _, _ := runOKF(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
