package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// TestDocsNameNoTestSetupPaths: the README and the docs are read by people
// who have only the repository, so they point at no path that exists only
// in its test setup (the shared corpora beside it): a corpus is named by
// where to get it and how to lay it out.
func TestDocsNameNoTestSetupPaths(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, "../../README.md") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "../shared") {
				t.Errorf("%s:%d names the test setup's folder: %s", strings.TrimPrefix(p, "../../"), i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Every command's help ends with examples, the subcommands' too.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s --help has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&env{}))
}

// make demo says what it is doing before Go compiles okf, which prints
// nothing for minutes on a cold cache.
func TestMakeDemoSaysItIsCompiling(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, ok := strings.Cut(string(data), "\ndemo:")
	if !ok {
		t.Fatal("the Makefile has no demo target")
	}
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	say, build := strings.Index(recipe, "\t@echo "), strings.Index(recipe, "$(GO) build")
	if say < 0 || build < 0 || say > build || !strings.Contains(recipe[say:build], "compiling okf") {
		t.Errorf("make demo does not say it is compiling okf before it does:\n%s", recipe)
	}
}

// A command that only groups others refuses a word that is none of them
// (cobra printed its help and exited 0), and prints its help when given
// none.
func TestUnknownSubcommand(t *testing.T) {
	code, stdout, stderr := run(t, "eval", "bogus")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, `okf: "bogus" is not a command of okf eval; its commands are compare, retrieval, run`) {
		t.Errorf("okf eval bogus: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := run(t, "eval"); code != 0 || !strings.Contains(stdout, "Available Commands:") {
		t.Errorf("okf eval: exit %d\n%s", code, stdout)
	}
}
