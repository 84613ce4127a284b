package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGraphCommand(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", "../../examples/shop", "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	page := filepath.Join(dir, "shop.html")
	code, _, stderr := run(t, "graph", filepath.Join(dir, "bundles", "shop"), "-o", page, "--today", "2026-07-01")
	if code != 0 || stderr != "wrote "+page+": 15 concepts, 66 links; open it in a browser\n" {
		t.Fatalf("graph: exit %d, %q", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(html), `<title>shop</title>`) || !strings.Contains(string(html), `"ref": "shop/tables/orders"`) {
		t.Fatalf("page: %v\n%.400s", err, html)
	}
	// A folder of bundles, one picked, to standard output.
	code, out, stderr := run(t, "graph", filepath.Join(dir, "bundles"), "--bundle", "shop", "-o", "-", "--today", "2026-07-01")
	if code != 0 || out != string(html) {
		t.Errorf("graph of the picked bundle to stdout: exit %d, same page %v, %s", code, out == string(html), stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"graph"}, 2, "graph takes one bundle folder"},
		{[]string{"graph", filepath.Join(dir, "nope")}, 2, "nope"},
		{[]string{"graph", filepath.Join(dir, "bundles"), "--bundle", "sales", "-o", "-"}, 2, `no bundle "sales"`},
		{[]string{"graph", filepath.Join(dir, "bundles"), "--today", "tomorrow"}, 2, "--today"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}
