package cli

import (
	"os"
	"path/filepath"
	"strconv"
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
	if code != 0 || stderr != "wrote "+page+": 18 concepts, 75 links; open it in a browser\n" {
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
	// A page goes over a regular file only: a link is not replaced by a
	// file, nor is what it points at written through it.
	target := filepath.Join(dir, "target.txt")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "graph", filepath.Join(dir, "bundles", "shop"), "-o", link); code == 0 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("graph over a link: exit %d, %q", code, stderr)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("the link's target became %q", got)
	}
	if info, err := os.Stat(page); err != nil || info.Mode().Perm() != 0o644&^umask() {
		t.Errorf("page mode %v, %v", info.Mode(), err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"graph"}, 2, "graph takes one bundle folder"},
		{[]string{"graph", filepath.Join(dir, "nope")}, 2, "okf: " + filepath.Join(dir, "nope") + ": no such file or directory\n"},
		{[]string{"graph", page}, 2, "okf: " + page + ": not a directory\n"},
		{[]string{"graph", filepath.Join(dir, "bundles"), "--bundle", "sales", "-o", "-"}, 2, `no bundle "sales"`},
		{[]string{"graph", filepath.Join(dir, "bundles"), "--today", "tomorrow"}, 2, "--today"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

// okf bench --write gives the synthetic catalogue as bundles, which okf
// graph draws whole, a card a bundle.
func TestGraphOfTheSyntheticCatalogue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "catalogue")
	if code, _, stderr := run(t, "bench", "--sizes", "1200", "--write", dir); code != 0 || stderr != "wrote "+dir+": 1200 concepts in 3 bundles\n" {
		t.Fatalf("bench --write: exit %d, %q", code, stderr)
	}
	code, page, stderr := run(t, "graph", dir, "-o", "-", "--today", "2026-07-01")
	if code != 0 || !strings.Contains(page, `<title>catalogue</title>`) || strings.Count(page, `"bundle": "b002"`) != 200 {
		t.Errorf("graph of the catalogue: exit %d, %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bench", "--sizes", "1200", "--write", dir}, 1, "is not empty"},
		{[]string{"bench", "--sizes", "500,5000", "--write", dir}, 2, "--write takes one positive size"},
	} {
		if code, _, stderr := run(t, c.args...); code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

// umask is the process's file-creation mask, from /proc (Linux), or 0.
func umask() os.FileMode {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			m, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return os.FileMode(m)
		}
	}
	return 0
}
