package cli

import (
	"os"
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
