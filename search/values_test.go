package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/tokens"
)

// heroes is a bundle whose lookup tables list their stored values, as
// okf compile writes them from a database.
func heroes() map[string]string {
	table := func(rows, values string) string {
		return "---\ntype: SQLite Table\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" + rows + "\n# Values\n\n" + values
	}
	return map[string]string{
		"hero:tables/superhero.md": "---\ntype: SQLite Table\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
			"| `id` | INTEGER | primary key | the hero |\n| `superhero_name` | TEXT |  | the hero's name |\n| `gender_id` | INTEGER |  | the gender |\n| `publisher_id` | INTEGER |  | the publisher |\n| `eye_colour_id` | INTEGER |  | the colour of the eyes |\n\n" +
			"# Joins\n\n* `gender_id` references `id` in [gender](/tables/gender.md).\n* `publisher_id` references `id` in [publisher](/tables/publisher.md).\n* `eye_colour_id` references `id` in [colour](/tables/colour.md).\n",
		"hero:tables/gender.md": table("| `id` | INTEGER | primary key | the gender |\n| `gender` | TEXT |  | the gender |\n",
			"* `gender`: 'Female', 'Male', 'N/A'\n"),
		"hero:tables/publisher.md": table("| `id` | INTEGER | primary key | the publisher |\n| `publisher_name` | TEXT |  | the publisher's name |\n",
			"* `publisher_name` (25 values, the most frequent): 'Marvel Comics', 'DC Comics', 'Dark Horse Comics', 'NBC - Heroes'\n"),
		"hero:tables/colour.md": table("| `id` | INTEGER | primary key | the colour |\n| `colour` | TEXT |  | the colour |\n",
			"* `colour`: 'Amber', 'Blue', 'Green', 'No Colour'\n"),
	}
}

// TestPacksShowStoredValues: a pack shows, with their columns, the stored
// spelling of the values a question names: folded for case and plurals,
// as phrases (Marvel Comics, not Marvel of another value), with one typo
// in a long word forgiven, by the words no other value of the column has
// ("Marvel", "DC"), or with their words a little apart ("no eye color");
// words too short or framing words name no value, and a bundle that lists
// none gets no section.
func TestPacksShowStoredValues(t *testing.T) {
	ix := Build(snap(t, heroes()))
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"How many female heroes were published by marvel comics?", []string{"hero/tables/publisher.publisher_name=Marvel Comics", "hero/tables/gender.gender=Female"}},
		{"Which heroes have blue eyes?", []string{"hero/tables/colour.colour=Blue"}},
		{"List the heroes with greeen eyes", []string{"hero/tables/colour.colour=Green"}},
		{"Is there a hero with no gender, n/a?", nil},
		// Named by their distinctive words, or written loosely.
		{"How many female heroes were published by Marvel?", []string{"hero/tables/publisher.publisher_name=Marvel Comics", "hero/tables/gender.gender=Female"}},
		{"Which publisher created more heroes: DC or Marvel Comics?", []string{"hero/tables/publisher.publisher_name=Marvel Comics", "hero/tables/publisher.publisher_name=DC Comics"}},
		{"List the heroes with no eye color", []string{"hero/tables/colour.colour=No Colour"}},
	} {
		p := ix.Context(tc.question, PackOptions{Bundle: "hero", Count: tokens.Count})
		if !slices.Equal(p.Values, tc.want) {
			t.Errorf("%q: values %q, want %q\n%s", tc.question, p.Values, tc.want, p.Text)
		}
		for _, v := range tc.want {
			ref, value, _ := strings.Cut(v, "=")
			col := strings.TrimPrefix(ref, "hero/tables/")
			if !strings.Contains(p.Text, "* `"+col+"` = '"+value+"'\n") || !slices.Contains(p.Columns, ref) {
				t.Errorf("%q: the pack does not show %s = '%s' with its column\n%s", tc.question, col, value, p.Text)
			}
		}
	}
	plain := Build(snap(t, grid()))
	if p := plain.Context("Which units are blue?", PackOptions{Bundle: "solar", Count: tokens.Count}); strings.Contains(p.Text, "Stored values") {
		t.Errorf("a bundle without values:\n%s", p.Text)
	}
}
