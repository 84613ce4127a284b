package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every command has its page under docs/, and the README links it.
func TestEveryCommandHasAPage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range newRoot(&env{}).Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		page := filepath.Join("docs", c.Name()+".md")
		if _, err := os.Stat(filepath.Join("../..", page)); err != nil {
			t.Errorf("okf %s has no page: %v", c.Name(), err)
		}
		if !strings.Contains(string(readme), "("+page+")") {
			t.Errorf("README.md does not link %s", page)
		}
	}
}

// TestPackageMap: docs/architecture.md names every package of the module,
// and every package the command line is built from, so the map a newcomer
// reads is the code as it is.
func TestPackageMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/okf-tools/okf/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const module = "github.com/okf-tools/okf"
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module+"/")
		switch {
		case p == module:
			rel = "okf"
		case !ok, strings.HasSuffix(rel, "/gen"), rel == "cmd/okf":
			continue
		}
		if !strings.Contains(string(doc), "`"+rel+"`") {
			t.Errorf("docs/architecture.md does not name package %s", rel)
		}
	}
}
