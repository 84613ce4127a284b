package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	t.Setenv("OKF_DATA", "/data/okf")
	cases := []struct {
		dsn, scheme, target string
	}{
		{"", "sqlite", "/data/okf/okf.db"},
		{"store.db", "sqlite", "store.db"},
		{"/abs/store.db", "sqlite", "/abs/store.db"},
		{"sqlite:rel/x.db", "sqlite", "rel/x.db"},
		{"sqlite:/abs/x.db", "sqlite", "/abs/x.db"},
		{"postgres://u:p@h/db", "postgres", "postgres://u:p@h/db"},
		{"postgresql://h/db?sslmode=disable", "postgres", "postgresql://h/db?sslmode=disable"},
		// Read by package dsn's rules, as every other command reads a DSN.
		{"host=db dbname=okf", "postgres", "host=db dbname=okf"},
		{"sqlite://rel/x.db", "sqlite", "rel/x.db"},
	}
	for _, c := range cases {
		scheme, target, err := parseDSN(c.dsn)
		if err != nil || scheme != c.scheme || target != c.target {
			t.Errorf("parseDSN(%q) = %q, %q, %v; want %q, %q", c.dsn, scheme, target, err, c.scheme, c.target)
		}
	}
	for _, bad := range []string{"sqlite:", "mysql://u:secret@h/db", "duckdb:x.duckdb", "x.duckdb"} {
		_, _, err := parseDSN(bad)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("parseDSN(%q): %v, want ErrInvalid", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseDSN(%q) leaks the password: %v", bad, err)
		}
	}
}

func TestDataDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cases := []struct {
		okfData, xdg, want string
	}{
		{"/o", "/x", "/o"},
		{"", "/x", "/x/okf"},
		{"", "relative", filepath.Join(home, ".local", "share", "okf")},
		{"", "", filepath.Join(home, ".local", "share", "okf")},
	}
	for _, c := range cases {
		t.Setenv("OKF_DATA", c.okfData)
		t.Setenv("XDG_DATA_HOME", c.xdg)
		got, err := DataDir()
		if err != nil || got != c.want {
			t.Errorf("OKF_DATA=%q XDG_DATA_HOME=%q: DataDir() = %q, %v; want %q", c.okfData, c.xdg, got, err, c.want)
		}
	}
}

func TestValidateNames(t *testing.T) {
	for _, ok := range []string{"a", "0", "acme_retail", "a-b", strings.Repeat("z", 64)} {
		if err := ValidateTenant(ok); err != nil {
			t.Errorf("ValidateTenant(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "A", "_a", "a.b", "a b", "é", strings.Repeat("z", 65)} {
		if err := ValidateTenant(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateTenant(%q): %v, want ErrInvalid", bad, err)
		}
	}
	if err := ValidateBundle("v1.2-x_y"); err != nil {
		t.Errorf("ValidateBundle: %v", err)
	}
	if err := ValidateBundle(".git"); err == nil || !strings.Contains(err.Error(), `".git"`) {
		t.Errorf("ValidateBundle(.git) should name the bundle: %v", err)
	}
	if err := ValidatePath("../x.md"); err == nil || !strings.Contains(err.Error(), `starts with a dot`) {
		t.Errorf("ValidatePath(../x.md) should say why: %v", err)
	}
}

func TestPreconditionError(t *testing.T) {
	err := error(&PreconditionError{Tenant: "t", Bundle: "b", Path: "p.md", Expected: "aa", Current: "bb"})
	if !errors.Is(err, ErrPrecondition) {
		t.Fatal("PreconditionError does not match ErrPrecondition")
	}
	if !strings.Contains(err.Error(), "current hash is bb") {
		t.Errorf("message does not carry the current hash: %v", err)
	}
}

// TestOpenHidesPasswords: a keyword/value DSN is PostgreSQL, not a SQLite
// file of that name, and the error (no postgres backend is linked into
// this test) does not show the password.
func TestOpenHidesPasswords(t *testing.T) {
	for _, s := range []string{"host=db password=secret dbname=okf", "postgres://u:secret@h/db"} {
		_, err := Open(context.Background(), s)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): %v, want an error without the password", s, err)
		}
	}
}
