package scriptjson

import (
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestMarshalCannotCloseTheScript(t *testing.T) {
	out, err := Marshal(map[string]string{"text": "</script><script>alert(1)</script> & more"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "</script>") || strings.Contains(string(out), "<") || strings.Contains(string(out), "&") {
		t.Errorf("unescaped markup in %s", out)
	}
	if !strings.Contains(string(out), `\u003c/script\u003e`) {
		t.Errorf("want the escaped tag in %s", out)
	}
}
