package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// TestStages holds every package to the stages of docs/architecture.md:
// it imports only packages of its stage or an earlier one, packages that
// belong to one reader are imported by it alone, and the edges against
// the flow that remain are the ones the page lists.
func TestStages(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	stages, only, allowed := stageTables(t, string(doc))
	const module = "github.com/okf-tools/okf"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "okf", true
		}
		return strings.CutPrefix(p, module+"/")
	}
	used := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from, _ := rel(fields[0])
		if strings.HasSuffix(from, "/gen") {
			continue
		}
		stage, ok := stages[from]
		if !ok {
			t.Errorf("docs/architecture.md gives package %s no stage", from)
			continue
		}
		for _, imp := range fields[1:] {
			to, ours := rel(imp)
			if !ours {
				continue
			}
			edge := from + " → " + to
			if readers, ok := only[to]; ok && !slices.Contains(readers, from) {
				t.Errorf("%s: %s is imported only by %s", edge, to, strings.Join(readers, ", "))
			}
			if stages[to] > stage {
				if allowed[edge] {
					used[edge] = true
					continue
				}
				t.Errorf("%s: stage %d imports stage %d, against the flow", edge, stage, stages[to])
			}
		}
	}
	for edge := range allowed {
		if !used[edge] {
			t.Errorf("docs/architecture.md lists %s against the flow, but no package has that edge: take it off the list", edge)
		}
	}
}

// stageTables reads the three tables of docs/architecture.md's Stages
// section: package → stage, package → its only readers, and the edges
// against the flow that remain, which may be none.
func stageTables(t *testing.T, doc string) (stages map[string]int, only map[string][]string, allowed map[string]bool) {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Stages\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Stages section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	stages, only, allowed = map[string]int{}, map[string][]string{}, map[string]bool{}
	code := regexp.MustCompile("`([^`]+)`")
	names := func(cell string) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 2 {
			continue
		}
		head, rest := strings.TrimSpace(cells[0]), cells[1]
		if n, err := strconv.Atoi(head); err == nil {
			for _, p := range names(rest) {
				stages[p] = n
			}
			continue
		}
		switch pkgs := names(head); {
		case len(pkgs) == 2 && strings.Contains(head, "→"):
			allowed[pkgs[0]+" → "+pkgs[1]] = true
		case len(pkgs) == 1:
			readers, _, _ := strings.Cut(rest, ":")
			only[pkgs[0]] = names(readers)
		}
	}
	if len(stages) == 0 || len(only) == 0 {
		t.Fatalf("the Stages section reads as %d stages, %d single-reader packages", len(stages), len(only))
	}
	return stages, only, allowed
}
