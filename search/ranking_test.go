package search

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// catalog has a table whose name the other tables' summaries and joins
// repeat, in a body long enough that BM25 alone ranks it below them.
var catalog = map[string]string{
	"d:tables/disasterevents.md": "---\ntype: Table\ntitle: disasterevents\ndescription: 9 columns, key distregistry.\n---\n# Schema\n" +
		strings.Repeat("| col | text | a column of the event, with a long meaning that pads the body |\n", 12),
	"d:tables/supplies.md":       "---\ntype: Table\ntitle: supplies\ndescription: Joins disasterevents.\n---\n# Schema\n| supplyid | disasterevents ref |\n\nJoins [disasterevents](disasterevents.md).\n",
	"d:tables/humanresources.md": "---\ntype: Table\ntitle: humanresources\ndescription: Joins disasterevents.\n---\n# Schema\n| hrid | disasterevents ref |\n\nJoins [disasterevents](disasterevents.md).\n",
	"d:knowledge/rur.md":         "---\ntype: Calculation\ntitle: Resource Utilization Ratio (RUR)\ndescription: Supplies used over supplies held.\n---\n# Definition\nRUR = used / held, from [supplies](../tables/supplies.md).\n",
	"d:knowledge/utilization.md": "---\ntype: Calculation\ntitle: Utilization\ndescription: Resource utilization ratio of hubs, resource by resource: utilization ratio, resource ratio.\n---\n# Definition\nResource utilization ratio: resource utilization, ratio of utilization.\n",
	"e:tables/disasterevents.md": "---\ntype: Table\ntitle: disasterevents\ndescription: Another bundle's events.\n---\n# Schema\n| eventid |\n",
}

func TestExactNameRanksFirst(t *testing.T) {
	ix := Build(snap(t, catalog))
	for _, tc := range []struct{ query, bundle, want string }{
		{"disasterevents", "d", "d/tables/disasterevents"},
		{"DisasterEvents", "d", "d/tables/disasterevents"},
		{"disaster_events", "d", "d/tables/disasterevents"},
		{"tables/disasterevents", "d", "d/tables/disasterevents"},
		{"resource utilization ratio", "d", "d/knowledge/rur"},
		{"Resource Utilization Ratio (RUR)", "d", "d/knowledge/rur"},
		{"disasterevents", "e", "e/tables/disasterevents"},
	} {
		hits := ix.Search(tc.query, Options{Bundle: tc.bundle, NoExpand: true})
		if got := ids(hits); len(got) == 0 || got[0] != tc.want {
			t.Errorf("%q in %s: got %v, want %s first", tc.query, tc.bundle, got, tc.want)
		}
	}
	// Across bundles, the concepts of that name come first, before any
	// concept that only mentions it.
	got := ids(ix.Search("disasterevents", Options{NoExpand: true}))
	if len(got) < 2 || !reflect.DeepEqual(sorted(got[:2]), []string{"d/tables/disasterevents", "e/tables/disasterevents"}) {
		t.Errorf("across bundles: got %v", got)
	}
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

func TestSharedTableNamesRankFirst(t *testing.T) {
	ix := Build(sharedSnapshot(t))
	tables := 0
	for i := range ix.Snapshot().Concepts {
		c := &ix.Snapshot().Concepts[i]
		if !c.IsTable() {
			continue
		}
		tables++
		name, want := tableName(c), ref(c)
		if got := ids(ix.Search(name, Options{K: 3, Bundle: c.Bundle, NoExpand: true})); len(got) == 0 || got[0] != want {
			t.Errorf("%s in %s: got %v", name, c.Bundle, got)
		}
		// Across bundles only a table of the same name may come before it.
		hits := ix.Search(name, Options{K: 20, NoExpand: true})
		at := slices.IndexFunc(hits, func(h Hit) bool { return h.Concept == c })
		if at < 0 {
			t.Errorf("%s across bundles: %s not found in %v", name, want, ids(hits))
			continue
		}
		for _, h := range hits[:at] {
			if !h.Concept.IsTable() || tableName(h.Concept) != name {
				t.Errorf("%s across bundles: %s/%s ranks before %s", name, h.Concept.Bundle, h.Concept.ID, want)
			}
		}
	}
	if tables < 80 {
		t.Errorf("only %d tables in the shared bundles", tables)
	}
}

var rulebook = map[string]string{
	"r:knowledge/active.md": "---\ntype: Business Rule\ntitle: Active Customer\ndescription: Bought in the last 90 days.\n---\n# Definition\nA paid order in the last 90 days.\n",
	"r:knowledge/per.md":    "---\ntype: Calculation\ntitle: Physical Endurance Rating (PER)\ndescription: How long a device lasts.\n---\n# Definition\nCycles survived over cycles rated.\n",
	"r:knowledge/orders.md": "---\ntype: Calculation\ntitle: Order Volume\ndescription: Orders placed per day, per region, per store.\n---\n# Definition\nOrders per day per region per store, counted per day.\n",
	"r:knowledge/region.md": "---\ntype: Calculation\ntitle: Regional Sales\ndescription: Orders per region per day.\n---\n# Definition\nSales per region per day, orders per store per day.\n",
	"r:tables/orders.md":    "---\ntype: Table\ntitle: orders\ndescription: One row per order, per store, per region, per day.\n---\n# Schema\n| orderid | store | region | day |\n",
}

func TestNamedRulesRankFirst(t *testing.T) {
	ix := Build(snap(t, rulebook))
	q := "For each region and store, count the orders per day placed by active customers, and list the stores per region with the most orders per day."
	got := ids(ix.Search(q, Options{K: 1, NoExpand: true}))
	if !reflect.DeepEqual(got, []string{"r/knowledge/active"}) {
		t.Errorf("a plural names a rule: got %v", got)
	}
	// An abbreviation names its rule only as the title writes it.
	if got := ids(ix.Search(q+" Show the PER too.", Options{K: 2, NoExpand: true})); !reflect.DeepEqual(sorted(got), []string{"r/knowledge/active", "r/knowledge/per"}) {
		t.Errorf("PER: got %v", got)
	}
	if got := ids(ix.Search(q, Options{K: 2, NoExpand: true})); slices.Contains(got, "r/knowledge/per") {
		t.Errorf("the word per named the PER rule: %v", got)
	}
}

// TestLongQuestionFindsTheRulesItNames holds search to a LiveSQLBench train
// question that names two rules, "Sensor Performance Index" and "Comfort
// Index", in 80 words: plain BM25 ranked the Comfort Index 14th.
func TestLongQuestionFindsTheRulesItNames(t *testing.T) {
	ix := Build(sharedSnapshot(t))
	q := trainQuestion(t, "gaming_10").Text
	hits := ix.Search(q, Options{Bundle: "gaming", NoExpand: true})
	for _, want := range []string{"gaming/knowledge/comfort-index", "gaming/knowledge/sensor-performance-index", "gaming/knowledge/premium-gaming-mouse"} {
		if !slices.Contains(ids(hits), want) {
			t.Errorf("%s is not in the top %d: %v", want, DefaultK, ids(hits))
		}
	}
}

type hitRow struct {
	Ref   string
	Score float64
	Pos   int
	Via   int
}

func rows(hits []Hit) []hitRow {
	var out []hitRow
	for _, h := range hits {
		out = append(out, hitRow{h.Concept.Bundle + "/" + h.Concept.ID, h.Score, h.Pos, h.Via})
	}
	return out
}

// TestBundleSearchIgnoresOtherBundles: a search of one bundle ranks and
// scores alike whatever else the tenant holds.
func TestBundleSearchIgnoresOtherBundles(t *testing.T) {
	alone := map[string]string{}
	for p, c := range shop {
		if strings.HasPrefix(p, "shop:") {
			alone[p] = c
		}
	}
	crowd := map[string]string{}
	for p, c := range shop {
		crowd[p] = c
	}
	// A crowd that makes "customer" common and "order" rare.
	for i := range 40 {
		crowd["crowd:tables/t"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"] = "---\ntype: Table\ntitle: Customer table\ndescription: Customers again.\n---\n# Schema\nCustomer customer customer who.\n"
	}
	a, b := Build(snap(t, alone)), Build(snap(t, crowd))
	for _, q := range []string{"customer who", "active customer", "paid order 90 days", "churned customer", "customers"} {
		for _, o := range []Options{{Bundle: "shop"}, {Bundle: "shop", K: 2}, {Bundle: "shop", NoExpand: true}} {
			if x, y := rows(a.Search(q, o)), rows(b.Search(q, o)); !reflect.DeepEqual(x, y) {
				t.Errorf("%q %+v: alone %v, in a crowd %v", q, o, x, y)
			}
		}
	}
	if hits := b.Search("customer", Options{Bundle: "nosuch"}); hits != nil {
		t.Errorf("an unknown bundle found %v", ids(hits))
	}
}

// TestSharedBundleSearchIgnoresOtherBundles runs every LiveSQLBench train
// question on its bundle alone and on the whole shared tenant.
func TestSharedBundleSearchIgnoresOtherBundles(t *testing.T) {
	whole := Build(sharedSnapshot(t))
	qs := trainQuestions(t)
	for _, db := range []string{"gaming", "solar"} {
		alone := Build(sharedSnapshot(t, db))
		n := 0
		for _, q := range qs {
			if q.DB != db {
				continue
			}
			n++
			o := Options{Bundle: db}
			if x, y := rows(alone.Search(q.Text, o)), rows(whole.Search(q.Text, o)); !reflect.DeepEqual(x, y) {
				t.Errorf("%s: %q\nalone %v\nwhole %v", db, q.Text, x, y)
			}
		}
		if n == 0 {
			t.Errorf("no %s questions", db)
		}
	}
}

// TestExpansionPutsDependenciesFirst: two rules hit and both link to the
// bins table, one also to the rule it depends on, which the expansion
// lists first although the table has more pointers.
func TestExpansionPutsDependenciesFirst(t *testing.T) {
	ix := Build(snap(t, map[string]string{
		"w:tables/bins.md":           "---\ntype: Table\ntitle: bins\ndescription: One row per bin.\n---\n# Schema\n| binid | integer |\n",
		"w:knowledge/bin-fill.md":    "---\ntype: Calculation\ntitle: Bin Fill\ndescription: Units over capacity.\n---\n# Definition\nUnits over capacity, per bin.\n",
		"w:knowledge/full-aisle.md":  "---\ntype: Business Rule\ntitle: Full Aisle\ndescription: Every bin filled.\n---\n# Definition\nAn aisle whose every bin has a Bin Fill above 0.9.\n\n# Columns used\n\n* [bins](../tables/bins.md): `binid`\n\n# Depends on\n\n* [Bin Fill](bin-fill.md)\n",
		"w:knowledge/aisle-count.md": "---\ntype: Calculation\ntitle: Aisle Count\ndescription: How many aisles.\n---\n# Definition\nHow many aisles [bins](../tables/bins.md) spans.\n",
	}))
	hits := ix.Search("full aisle count", Options{K: 2})
	want := []string{"w/knowledge/aisle-count", "w/knowledge/full-aisle", "w/knowledge/bin-fill+", "w/tables/bins+"}
	if got := ids(hits); !reflect.DeepEqual(sorted(got[:2]), want[:2]) || !reflect.DeepEqual(got[2:], want[2:]) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// BenchmarkQueryOneBundle searches one bundle of many, as context packs and
// the evaluation do.
func BenchmarkQueryOneBundle(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		s := synthSnapshot(b, n)
		ix := Build(s)
		bundle := s.Concepts[len(s.Concepts)/2].Bundle
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				ix.Search(benchQueries[i%len(benchQueries)], Options{Bundle: bundle})
				i++
			}
		})
	}
}
