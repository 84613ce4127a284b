package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/tokens"
)

// TestContextPacksOnTheSharedTenant asks, of every database of
// ../shared/data in one tenant and without naming a bundle, the questions
// whose packs once lacked what their SQL needs.
func TestContextPacksOnTheSharedTenant(t *testing.T) {
	ix := Build(sharedTenant(t))
	for _, tc := range []struct {
		question, bundle string
		tables, columns  []string
	}{
		// The site name is zonelabel, which no rule names; scans joins
		// the point clouds to the sites.
		{"Show site code, site name, average Scan Quality Score for each site", "archeology",
			[]string{"archeology/tables/scans", "archeology/tables/sites", "archeology/tables/scanpointcloud"},
			[]string{"archeology/tables/sites.zonelabel"}},
		// BIRD: no rules, only tables; the power's name is a column of
		// superpower, reached through hero_power.
		{"How many superheroes have the super power of Super Strength?", "superhero",
			[]string{"superhero/tables/hero_power", "superhero/tables/superhero", "superhero/tables/superpower"},
			[]string{"superhero/tables/superpower.power_name", "superhero/tables/hero_power.power_id", "superhero/tables/hero_power.hero_id"}},
		// Once routed to a credit table, and without joins.
		{"Which distribution hubs are in high utilization?", "disaster",
			[]string{"disaster/tables/distributionhubs"}, nil},
	} {
		p := ix.Context(tc.question, PackOptions{Count: tokens.Count})
		if len(p.Routing) == 0 || p.Routing[0].Bundle != tc.bundle {
			t.Errorf("%q: routed %v, want %s first", tc.question, p.Routing, tc.bundle)
			continue
		}
		for _, want := range tc.tables {
			if !slices.Contains(p.Tables, want) {
				t.Errorf("%q: tables %v lack %s", tc.question, p.Tables, want)
			}
		}
		for _, want := range tc.columns {
			if !slices.Contains(p.Columns, want) {
				t.Errorf("%q: columns %v lack %s", tc.question, p.Columns, want)
			}
		}
		for _, r := range append(append(p.Rules, p.Tables...), p.Candidates...) {
			if !strings.HasPrefix(r, tc.bundle+"/") {
				t.Errorf("%q: %s is of another bundle", tc.question, r)
			}
		}
		if p.Tokens > DefaultBudget || p.Tokens < tokens.Count(p.Text)-10 || p.Tokens > tokens.Count(p.Text)+10 {
			t.Errorf("%q: %d tokens counted for a text of %d", tc.question, p.Tokens, tokens.Count(p.Text))
		}
	}
}

func TestStem(t *testing.T) {
	stemOf := func(w string) string { return string(stem([]byte(w))) }
	for _, same := range [][]string{
		{"name", "names", "naming", "named"},
		{"reference", "references", "referencing"},
		{"rate", "rated", "rates", "rating"},
		{"category", "categories"},
		{"stop", "stopped", "stopping"},
	} {
		for _, w := range same[1:] {
			if stemOf(w) != stemOf(same[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, stemOf(w), same[0], stemOf(same[0]))
			}
		}
	}
	// Words that end in s without being plurals keep it.
	for _, w := range []string{"status", "class", "bus"} {
		if stemOf(w) != w {
			t.Errorf("stem(%q) = %q", w, stemOf(w))
		}
	}
}
