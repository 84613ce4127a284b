package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/store/sqlite"
)

// sourceBundles is the knowledge every Source backend is tested with: two
// bundles, one with an index.md.
var sourceBundles = map[string]map[string]string{
	"sales": {
		"index.md":            "---\ntype: Index\ndescription: Sales.\n---\n# Sales\n\n- [Orders](tables/orders.md)\n",
		"tables/orders.md":    "---\ntype: Table\ndescription: One row per order.\n---\nOne row per order, with [customers](customers.md).\n",
		"tables/customers.md": "---\ntype: Table\ndescription: One row per customer.\n---\nWho buys.\n",
	},
	"hr": {
		"tables/staff.md": "---\ntype: Table\ndescription: One row per employee.\n---\nWho works here.\n",
	},
}

// TestSources is the conformance suite of engine.Source: a folder and a
// store holding the same bundles read the same, byte for byte.
func TestSources(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := map[string]map[string][]byte{}
	for b, files := range sourceBundles {
		docs[b] = map[string][]byte{}
		for p, text := range files {
			writeFile(t, filepath.Join(dir, b, p), text)
			docs[b][p] = []byte(text)
		}
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "okf.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Sync(ctx, "acme", docs, "import"); err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for name, src := range map[string]Source{"folder": Folder(dir, "acme"), "store": StoreHead(st, "acme")} {
		t.Run(name, func(t *testing.T) {
			if src.Tenant() != "acme" {
				t.Errorf("tenant %q", src.Tenant())
			}
			names, err := src.Bundles(ctx)
			if err != nil || !slices.Equal(names, []string{"hr", "sales"}) {
				t.Errorf("bundles %v, %v", names, err)
			}
			v, err := Open(ctx, src, "")
			if err != nil {
				t.Fatal(err)
			}
			if v.Tenant != "acme" || len(v.Snap.Bundles) != 2 || len(v.Snap.Concepts) != 3 {
				t.Errorf("whole view: tenant %q, %d bundles, %d concepts", v.Tenant, len(v.Snap.Bundles), len(v.Snap.Concepts))
			}
			one, err := Open(ctx, src, "sales")
			if err != nil {
				t.Fatal(err)
			}
			if len(one.Snap.Bundles) != 1 || one.Snap.Bundles[0].Name != "sales" || len(one.Snap.Concepts) != 2 {
				t.Errorf("narrowed view: %d bundles, %d concepts", len(one.Snap.Bundles), len(one.Snap.Concepts))
			}
			digests[name+" whole"], digests[name+" sales"] = v.Snap.Digest, one.Snap.Digest
			if _, err := Open(ctx, src, "nope"); !errors.Is(err, ErrNoBundle) || !strings.Contains(err.Error(), `"nope" (bundles: hr sales)`) {
				t.Errorf("an unknown bundle: %v", err)
			}
			files, done, err := Files(src, one, "sales")
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			data, err := fs.ReadFile(files, "tables/orders.md")
			if err != nil || !strings.Contains(string(data), "One row per order, with [customers](customers.md).") {
				t.Errorf("browse files: %q, %v", data, err)
			}
			if len(Pick(names, "", "sales")) == 0 || Pick(names) != "" || Pick([]string{"hr"}) != "hr" {
				t.Errorf("Pick: %q %q %q", Pick(names, "", "sales"), Pick(names), Pick([]string{"hr"}))
			}
		})
	}
	if digests["folder whole"] != digests["store whole"] || digests["folder sales"] != digests["store sales"] || digests["folder whole"] == "" {
		t.Errorf("a folder and a store of the same bundles read differently: %v", digests)
	}
}

// A store tenant with no commit says how to give it knowledge; a folder
// that does not exist is an error naming it.
func TestSourcesEmpty(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "okf.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Open(ctx, StoreHead(st, "acme"), ""); err == nil || !strings.Contains(err.Error(), "tenant acme has no knowledge yet") {
		t.Errorf("an empty tenant: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if _, err := Open(ctx, Folder(missing, "acme"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
}
