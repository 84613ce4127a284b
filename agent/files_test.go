package agent_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/okf-tools/okf/engine"
)

func TestSnapshotFiles(t *testing.T) {
	s := newShop(t)
	files := engine.SnapshotFiles(s.view.Snap, "shop")
	if err := fstest.TestFS(files, "tables/orders.md", "knowledge/net-order-value.md"); err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(files, "knowledge/net-order-value.md")
	if err != nil || !strings.HasPrefix(string(data), "---\ndescription: What an order is worth to the shop after discounts.\ntitle: Net Order Value (NOV)\n---\n") ||
		!strings.Contains(string(data), "NOV = grossamt - COALESCE(discamt, 0)") {
		t.Errorf("read %q, %v", data, err)
	}
	root, _ := fs.ReadDir(files, ".")
	if len(root) != 2 || root[0].Name() != "knowledge" || !root[0].IsDir() || root[1].Name() != "tables" {
		t.Errorf("root = %v", root)
	}
}
