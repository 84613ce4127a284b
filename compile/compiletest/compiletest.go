// Package compiletest holds what the tests of okf compile's sources share.
package compiletest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/internal/shareddata"
)

// Now is the instant the sources' tests validate against.
var Now = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// ValidateStrictly writes a bundle, loads it back and fails the test on
// any finding but an info one, as okf validate --strict would.
func ValidateStrictly(t testing.TB, b *compile.Bundle) {
	t.Helper()
	out := t.TempDir()
	if err := compile.Write(out, compile.WriteOptions{}, b); err != nil {
		t.Fatal(err)
	}
	loaded, err := okf.Load(filepath.Join(out, b.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range okf.Validate(loaded, okf.Options{Now: Now}).Findings {
		if f.Severity != okf.Info {
			t.Errorf("%s: %s", b.Name, f)
		}
	}
}

// Shared compiles every database that okf compile reads in the given
// folders of ../shared/data (such as "livesqlbench/base-lite" and "bird"),
// a bundle each, in folder order; a missing folder skips the test loudly,
// as internal/shareddata does.
func Shared(tb testing.TB, folders ...string) []*compile.Bundle {
	tb.Helper()
	var out []*compile.Bundle
	for _, f := range folders {
		out = append(out, Folder(tb, shareddata.Dir(tb, strings.Split(f, "/")...))...)
	}
	return out
}

// Folder compiles the databases a folder documents, a bundle each, in
// folder order, with the values of those okf can read, as okf compile
// does.
func Folder(tb testing.TB, dir string) []*compile.Bundle {
	tb.Helper()
	dbs, err := source.Read(context.Background(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*compile.Bundle
	for _, db := range dbs {
		if _, err := catalog.ReadValues(context.Background(), db, catalog.ValueOptions{}); err != nil {
			tb.Fatal(err)
		}
		b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
