package store

import (
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

// TestFolderNamesMakeBundleNames checks that every folder name okf reads
// as a bundle makes a name the store takes.
func TestFolderNamesMakeBundleNames(t *testing.T) {
	for _, folder := range []string{"sales", "Sales Team", ".okf", "_drafts", "-x", "Über", "日本", "---", "", "a\tb", strings.Repeat("X", 200)} {
		if err := ValidateBundle(okf.BundleName(folder)); err != nil {
			t.Errorf("folder %q: %v", folder, err)
		}
	}
}
