package drift

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
)

func build(t *testing.T, db *compile.Database) map[string][]byte {
	t.Helper()
	b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	return b.Files
}

func shop(extra ...*compile.Column) *compile.Database {
	orders := &compile.Table{Name: "orders", PrimaryKey: []string{"ordid"}, Columns: append([]*compile.Column{
		{Name: "ordid", Type: "integer", Meaning: "Order."},
		{Name: "grossamt", Type: "numeric", Meaning: "Total."},
	}, extra...)}
	return &compile.Database{Name: "shop", Tables: []*compile.Table{orders, {Name: "legacy", Columns: []*compile.Column{{Name: "x", Type: "text"}}}},
		Rules: []*compile.Rule{{ID: 1, Name: "Net Order Value", Kind: compile.CalculationKind, Definition: "grossamt - discamt"}}}
}

func TestCompare(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	was := build(t, shop(&compile.Column{Name: "discamt", Type: "numeric", Meaning: "Discount."}, &compile.Column{Name: "note", Type: "text"}))
	// A person's own rule, past its stale_after, naming a column.
	was["knowledge/mine.md"] = []byte("---\ntype: Business Rule\ntitle: Mine\nstale_after: 2026-01-01\n---\n# Definition\n\nDiscounted orders.\n\n# Columns used\n\n* [orders](../tables/orders.md): `discamt`, `grossamt`\n")
	if r := Compare("shop", was, was, now); len(r.Stale) != 1 || r.Drifted() != true || len(r.Rules)+len(r.ColumnsAdded)+len(r.TablesAdded) != 0 {
		t.Errorf("against itself: %+v", r)
	}
	now2 := shop(&compile.Column{Name: "note", Type: "character varying"}, &compile.Column{Name: "giftwrap", Type: "boolean"})
	now2.Tables = append(now2.Tables[:1], &compile.Table{Name: "carriers", Columns: []*compile.Column{{Name: "id", Type: "integer"}}})
	r := Compare("shop", was, build(t, now2), now)
	want := Report{Bundle: "shop", TablesAdded: []string{"carriers"}, TablesRemoved: []string{"legacy"},
		ColumnsAdded: []string{"orders.giftwrap"}, ColumnsRemoved: []string{"orders.discamt"},
		ColumnsRetyped: []Retyped{{"orders.note", "text", "character varying"}},
		// The person's rule, and the generated one whose formula names it.
		Rules: []RuleDrift{{Concept: "knowledge/mine", Path: "knowledge/mine.md", Columns: []string{"orders.discamt"}},
			{Concept: "knowledge/net-order-value", Path: "knowledge/net-order-value.md", Columns: []string{"orders.discamt"}}},
		Stale: []string{"knowledge/mine"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
	if r := Compare("shop", nil, was, now); !r.Missing || !r.Drifted() || r.Text() != "shop: no bundle yet: compile it first\n" {
		t.Errorf("no bundle: %+v", r)
	}
	if got := Compare("shop", build(t, shop()), build(t, shop()), now).Text(); got != "shop: no drift\n" {
		t.Errorf("no drift: %q", got)
	}
}

// TestStaleAsValidateFindsIt: Compare validates only the concepts that
// may state a stale_after (issue 25, defect 10: it parsed the whole bundle
// a third time); it finds stale what validating the whole bundle does, in
// every shape a stale_after takes.
func TestStaleAsValidateFindsIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	files := build(t, shop())
	for p, staleAfter := range map[string]string{
		"knowledge/date.md":      "2026-01-01",
		"knowledge/spaced.md":    `"  2026-01-01  "`,
		"knowledge/instant.md":   "2026-11-30T23:00:00Z",
		"knowledge/later.md":     "2027-01-01",
		"knowledge/no-offset.md": "2026-01-01T00:00:00",
		"knowledge/blank.md":     `"  "`,
		"knowledge/list.md":      "[2026-01-01]",
		"knowledge/index.md":     "2026-01-01",
		"notes.md":               "2026-01-01",
	} {
		files[p] = []byte("---\ntype: Business Rule\ntitle: T\nstale_after: " + staleAfter + "\n---\n# Definition\n\nText.\n")
	}
	// The key spelled by an escape (YAML reads stale_after), and split over
	// two lines (a key YAML refuses).
	files["knowledge/escaped.md"] = []byte("---\ntype: Business Rule\n\"stale\\x5fafter\": 2026-01-01\n---\nText.\n")
	files["knowledge/joined.md"] = []byte("---\ntype: Business Rule\n\"stale_\\\n  after\": 2026-01-01\n---\nText.\n")
	files["knowledge/bad-yaml.md"] = []byte("---\ntype: [\nstale_after: 2026-01-01\n---\nText.\n")
	files["knowledge/not-utf8.md"] = []byte("---\ntype: Business Rule\nstale_after: 2026-01-01\n---\nText \xff.\n")
	var want []string
	for _, f := range okf.Validate(bundleOf(files), okf.Options{Now: now}).Findings {
		if f.Code == "stale" {
			want = append(want, strings.TrimSuffix(f.Path, ".md"))
		}
	}
	if got := Compare("shop", files, files, now).Stale; !reflect.DeepEqual(got, want) || len(want) != 5 {
		t.Errorf("stale: got %v, validating the whole bundle %v", got, want)
	}
}

// touched returns the files with a newline added to each: it changes no
// fact, and makes every file differ, so that Compare reads them all.
func touched(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, data := range files {
		out[p] = append(slices.Clip(data), '\n')
	}
	return out
}

// TestCompareReadsOnlyWhatDiffers: Compare does not read the files the
// sources would write as they are (issue 25, defect 10), and reports what
// it reports when it reads every file: people's own tables and rules, and
// their edits, beside unchanged ones.
func TestCompareReadsOnlyWhatDiffers(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	was := build(t, shop(&compile.Column{Name: "discamt", Type: "numeric", Meaning: "Discount."}))
	is := build(t, shop(&compile.Column{Name: "giftwrap", Type: "boolean"}))
	with := func(p, data string) map[string][]byte {
		out := maps.Clone(was)
		out[p] = []byte(data)
		return out
	}
	// A person's table of the same name as a generated one, first and
	// last in id order: the last is the table of that name.
	own := string(is["tables/orders.md"])
	rule := "---\ntype: Business Rule\ntitle: Mine\n---\n# Columns used\n\n* [orders](../tables/orders.md): `grossamt`, `nosuch`\n"
	for _, c := range []struct {
		name              string
		current, compiled map[string][]byte
		drifted           bool
	}{
		{"itself", was, was, false},
		{"sources changed", was, is, true},
		{"own table first", with("archive/orders.md", own), was, false},
		{"own table last", with("zz/orders.md", own), was, true},
		{"own rule", with("knowledge/mine.md", rule), was, true},
		{"edited table", with("tables/orders.md", string(was["tables/orders.md"])+"\nA note.\n"), is, true},
	} {
		got, want := Compare("shop", c.current, c.compiled, now), Compare("shop", c.current, touched(c.compiled), now)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v\nwant %+v", c.name, got, want)
		}
		if got.Drifted() != c.drifted {
			t.Errorf("%s: drifted %v, want %v: %+v", c.name, got.Drifted(), c.drifted, got)
		}
	}
}

// TestCompiledBundlesHaveNoDrift holds what Compare takes for granted of
// the files it does not read: a bundle as compile writes it, read by the
// read model, names in its rules only columns its tables list. Each shared
// corpus compared with itself has no drift, read or not.
func TestCompiledBundlesHaveNoDrift(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	bundles := compiletest.Shared(t, "livesqlbench/base-lite", "bird", "dbt")
	for _, dir := range []string{"../livesqlbench/testdata", "../../examples/shop"} {
		bundles = append(bundles, compiletest.Folder(t, dir)...)
	}
	for _, b := range bundles {
		read, unread := Compare(b.Name, b.Files, touched(b.Files), now), Compare(b.Name, b.Files, b.Files, now)
		if read.Drifted() || !reflect.DeepEqual(read, unread) {
			t.Errorf("%s against itself: %+v, not reading the unchanged files %+v", b.Name, read, unread)
		}
	}
	if len(bundles) < 12 {
		t.Errorf("%d bundles compiled", len(bundles))
	}
}
