package sqlstore

import (
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestRebind(t *testing.T) {
	got := Rebind(`SELECT a FROM t WHERE x = ? AND y IN (?, ?)`)
	want := `SELECT a FROM t WHERE x = $1 AND y IN ($2, $3)`
	if got != want {
		t.Fatalf("Rebind = %q, want %q", got, want)
	}
}

func TestCleanMessage(t *testing.T) {
	if got := cleanMessage("a\x00b\xffc"); got != "ab\uFFFDc" {
		t.Fatalf("cleanMessage = %q", got)
	}
}
