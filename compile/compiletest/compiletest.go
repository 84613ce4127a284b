// Package compiletest holds what the tests of okf compile's sources share.
package compiletest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
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
