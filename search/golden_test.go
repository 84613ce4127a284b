package search

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/readmodel"
)

// warehouse is a database whose picks reference stock by a composite key
// (bin, sku), and stock references bins by one column.
func warehouse() *compile.Database {
	return &compile.Database{
		Name: "warehouse", Engine: "postgres",
		Tables: []*compile.Table{
			{
				Name: "bins", PrimaryKey: []string{"binid"},
				Columns: []*compile.Column{
					{Name: "binid", Type: "integer", NotNull: true, Meaning: "Bin number."},
					{Name: "aisle", Type: "text", Meaning: "Aisle the bin stands in."},
				},
			},
			{
				Name: "stock", PrimaryKey: []string{"stockbin", "sku"},
				Columns: []*compile.Column{
					{Name: "stockbin", Type: "integer", NotNull: true, Meaning: "The bin."},
					{Name: "sku", Type: "text", NotNull: true, Meaning: "Stock keeping unit."},
					{Name: "onhand", Type: "integer", NotNull: true, Meaning: "Units in the bin."},
				},
				ForeignKeys: []compile.ForeignKey{{Columns: []string{"stockbin"}, RefTable: "bins", RefColumns: []string{"binid"}}},
			},
			{
				Name: "picks", PrimaryKey: []string{"pickid"},
				Columns: []*compile.Column{
					{Name: "pickid", Type: "integer", NotNull: true, Meaning: "Pick number."},
					{Name: "pickbin", Type: "integer", NotNull: true, Meaning: "Bin picked from."},
					{Name: "picksku", Type: "text", NotNull: true, Meaning: "Unit picked."},
					{Name: "pickqty", Type: "integer", NotNull: true, Meaning: "Units picked."},
				},
				ForeignKeys: []compile.ForeignKey{{Columns: []string{"pickbin", "picksku"}, RefTable: "stock", RefColumns: []string{"stockbin", "sku"}}},
			},
		},
		Rules: []*compile.Rule{
			{ID: 1, Name: "Overpick", Kind: compile.DomainKind, Definition: "A pick whose pickqty is above the onhand of its stock."},
			{ID: 2, Name: "Aisle Overpicks", Kind: compile.CalculationKind, Definition: "The Overpick count per aisle.", DependsOn: []int{1}},
		},
	}
}

func TestContextPackGoldenCompositeKey(t *testing.T) {
	b, err := compile.Build(warehouse(), compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	var docs []readmodel.Doc
	for _, p := range b.Paths() {
		docs = append(docs, readmodel.Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
	}
	s, _ := readmodel.Build("t", docs)
	pack := Build(s).Context("How many overpicks does each aisle have?", PackOptions{Count: countWords})
	golden.Check(t, "composite-key.txt", []byte(pack.Text))
	js, err := json.MarshalIndent(pack, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "composite-key.json", append(js, '\n'))

	for _, want := range []string{
		"* picks.pickbin = stock.stockbin AND picks.picksku = stock.sku\n",
		"* stock.stockbin = bins.binid\n",
	} {
		if !strings.Contains(pack.Text, want) {
			t.Errorf("the pack lacks the join %q", want)
		}
	}
	// The schema rows a pack shows are the rows its tables' concepts hold.
	for _, line := range strings.Split(pack.Text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		found := false
		for _, f := range b.Files {
			found = found || bytes.Contains(f, []byte("\n"+line+"\n"))
		}
		if !found {
			t.Errorf("the pack's row %q is in no concept", line)
		}
	}
}
