package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
)

// grid is a bundle whose rules write their formulas in column names and
// acronyms, as documentation does, while the schema says in words what
// each column is.
func grid() map[string]string {
	rule := func(title, def, uses string) string {
		return "---\ntype: Calculation\ntitle: " + title + "\n---\n\n# Definition\n\n" + def + "\n\n# Columns used\n\n" + uses + "\n"
	}
	return map[string]string{
		"solar:tables/inverter.md": "---\ntype: PostgreSQL Table\ngrain: invid\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
			"| `invid` | text | primary key | inverter identifier |\n" +
			"| `pwrqualidx` | numeric |  | power quality rating of the output |\n" +
			"| `thdpct` | numeric |  | total harmonic distortion percentage |\n" +
			"| `pf` | numeric |  | power factor |\n" +
			"| `invtempc` | numeric |  | inverter temperature in degrees |\n",
		"solar:knowledge/giq.md": rule("Grid Integration Quality (GIQ)", "GIQ = PWRQUALIDX × (1 - THDPCT/100) × PF.",
			"* [inverter](/tables/inverter.md): `pwrqualidx`, `thdpct`, `pf`"),
		"solar:knowledge/thermal-stress.md": rule("Inverter Thermal Stress", "Stress when INVTEMPC > 60.",
			"* [inverter](/tables/inverter.md): `invtempc`"),
	}
}

// TestRulesFoundByTheirColumnsMeanings: a question that describes a rule
// in the words of its columns' meanings, never its name, finds it: a rule
// is indexed under the meanings of the columns it names itself.
func TestRulesFoundByTheirColumnsMeanings(t *testing.T) {
	docs := grid()
	q := "Score each unit by its harmonic distortion and power factor"
	without := BuildWeighted(snap(t, docs), Weights{Name: 4, Cell: 2, Body: 1})
	if got := ids(without.Search(q, Options{Bundle: "solar", NoExpand: true})); slices.Contains(got, "solar/knowledge/giq") {
		t.Fatalf("without the meanings %v: the test no longer shows the gap", got)
	}
	got := ids(Build(snap(t, docs)).Search(q, Options{Bundle: "solar", NoExpand: true}))
	if i := slices.Index(got, "solar/knowledge/giq"); i < 0 || i > 1 || slices.Index(got, "solar/knowledge/thermal-stress") >= 0 {
		t.Errorf("with the meanings %v, want the rule after its table, alone", got)
	}
}

// TestAliases: a concept's aliases name it. A question holding one finds
// the rule as if it named its title: search ranks it first and a pack
// takes it as named, saying the alias in its heading; the manifest row
// lists them. An acronym alias names it only as written.
func TestAliases(t *testing.T) {
	docs := grid()
	docs["solar:knowledge/thermal-stress.md"] = strings.Replace(docs["solar:knowledge/thermal-stress.md"], "title: Inverter Thermal Stress\n",
		"title: Inverter Thermal Stress\naliases: [running hot, ITS]\n", 1)
	s := snap(t, docs)
	ix := Build(s)
	c := &s.Concepts[slices.IndexFunc(s.Concepts, func(c readmodel.Concept) bool { return c.ID == "knowledge/thermal-stress" })]
	if !slices.Equal(c.Aliases, []string{"running hot", "ITS"}) || !strings.Contains(c.Summary, "Also called: running hot; ITS.") {
		t.Fatalf("aliases %q, summary %q", c.Aliases, c.Summary)
	}
	for _, q := range []string{"Which inverters are running hot?", "List the ITS of each inverter"} {
		if got := ids(ix.Search(q, Options{Bundle: "solar", NoExpand: true})); len(got) == 0 || got[0] != "solar/knowledge/thermal-stress" {
			t.Errorf("%q: %v, want the aliased rule first", q, got)
		}
		p := ix.Context(q, PackOptions{Bundle: "solar", Count: tokens.Count})
		if len(p.Rules) == 0 || p.Rules[0] != "solar/knowledge/thermal-stress" || !strings.Contains(p.Text, "### Inverter Thermal Stress (knowledge/thermal-stress), also called running hot; ITS\n") {
			t.Errorf("%q: pack rules %v\n%s", q, p.Rules, p.Text)
		}
	}
	if _, named := ix.naming("its temperature", 0, int32(len(s.Concepts))); len(named) > 0 {
		t.Errorf("the word \"its\" names %v; only \"ITS\" as written should", named)
	}
}

// TestTitleCoverage: a question that holds every word of a rule's title,
// in another order and form, raises the rule as search's best rule; one
// that holds some of them does not.
func TestTitleCoverage(t *testing.T) {
	docs := grid()
	docs["solar:knowledge/wce.md"] = "---\ntype: Calculation\ntitle: Weather Corrected Efficiency (WCE)\n---\n\n# Definition\n\nWCE = EFF × (1 + COEF × (25 - TEMPC)).\n"
	docs["solar:knowledge/eff-loss.md"] = "---\ntype: Calculation\ntitle: Efficiency Loss\n---\n\n# Definition\n\nThe efficiency an inverter loses, its efficiency below rated efficiency at its current temperature.\n"
	ix := Build(snap(t, docs))
	rules := func(q string) []string {
		var out []string
		for _, id := range ids(ix.Search(q, Options{Bundle: "solar", NoExpand: true})) {
			if strings.Contains(id, "/knowledge/") {
				out = append(out, id)
			}
		}
		return out
	}
	if got := rules("each panel's efficiency, corrected for the weather it was measured in"); len(got) == 0 || got[0] != "solar/knowledge/wce" {
		t.Errorf("covered: %v, want the weather-corrected rule first", got)
	}
	if got := ix.covered("the efficiency of each panel at its current temperature", 0, int32(len(ix.snap.Concepts))); len(got) != 0 {
		t.Errorf("half a title covers %v", got)
	}
}

// TestHedgingPacks: a question that names no rule gets a pack of the few
// best rule hits, not the best alone; a question that names its rule gets
// that rule first.
func TestHedgingPacks(t *testing.T) {
	docs := grid()
	docs["solar:knowledge/power-quality-band.md"] = "---\ntype: Business Rule\ntitle: Power Quality Band\n---\n\n# Definition\n\nGood when PWRQUALIDX > 0.95 and THDPCT < 3.\n\n# Columns used\n\n* [inverter](/tables/inverter.md): `pwrqualidx`, `thdpct`\n"
	ix := Build(snap(t, docs))
	q := "How clean is the power of each unit, with its distortion and power factor?"
	strict := ix.Context(q, PackOptions{Bundle: "solar", Count: tokens.Count, HedgeRelevance: DefaultMinRelevance, HedgeFirst: 1})
	if len(strict.Rules) != 1 {
		t.Fatalf("at the bar of a question that names its rule, the pack took %v: the test no longer shows the hedge", strict.Rules)
	}
	hedged := ix.Context(q, PackOptions{Bundle: "solar", Count: tokens.Count})
	if !slices.Contains(hedged.Rules, "solar/knowledge/giq") || !slices.Contains(hedged.Rules, "solar/knowledge/power-quality-band") {
		t.Errorf("hedged pack rules %v, want both power quality rules\n%s", hedged.Rules, hedged.Text)
	}
	named := ix.Context("Show the Grid Integration Quality of each inverter", PackOptions{Bundle: "solar", Count: tokens.Count})
	if len(named.Rules) == 0 || named.Rules[0] != "solar/knowledge/giq" {
		t.Errorf("named pack rules %v, want the named rule first\n%s", named.Rules, named.Text)
	}
}

// TestColumnIllustrationsNamedInWords: an illustration titled with a
// column's name ("Inverter.PowerFactor") is named by the column's words as
// a person writes them; a single-word column name is not a name.
func TestColumnIllustrationsNamedInWords(t *testing.T) {
	docs := grid()
	docs["solar:knowledge/inverter-powerfactor.md"] = "---\ntype: Value Illustration\ntitle: Inverter.PowerFactor\n---\n\n# Definition\n\nBetween 0 and 1; below 0.9 the utility charges for reactive power.\n"
	docs["solar:knowledge/inverter-thd.md"] = "---\ntype: Value Illustration\ntitle: Inverter.Thd\n---\n\n# Definition\n\nPercent; above 5 the output is dirty.\n"
	s := snap(t, docs)
	ix := Build(s)
	_, named := ix.naming("each unit's power-factor level", 0, int32(len(s.Concepts)))
	if len(named) != 1 || s.Concepts[named[0]].ID != "knowledge/inverter-powerfactor" {
		t.Errorf("named %v, want the power factor illustration", named)
	}
	if _, named := ix.naming("the thd of each unit", 0, int32(len(s.Concepts))); len(named) != 0 {
		t.Errorf("a one-word column name names %v", named)
	}
}

// TestHedgingPrefersRulesToColumnIllustrations: when a question names no
// rule and its best hits are illustrations of single columns' values, the
// pack takes the best of them, then the rules, and only then more
// illustrations, whose columns' rows say what they say.
func TestHedgingPrefersRulesToColumnIllustrations(t *testing.T) {
	docs := grid()
	for c, gloss := range map[string]string{"PwrQualIdx": "Power Quality Index", "ThdPct": "Harmonic Distortion Percentage", "PwrFact": "Power Factor", "PwrOut": "Power Output Quality"} {
		docs["solar:knowledge/inverter-"+strings.ToLower(c)+".md"] = "---\ntype: Value Illustration\ntitle: " + c + " (" + gloss +
			")\n---\n\n# Definition\n\nThe inverter's " + strings.ToLower(gloss) + " reading: typical values range widely.\n"
	}
	ix := Build(snap(t, docs))
	q := "How good is each inverter's power quality, given its harmonic distortion and power factor?"
	p := ix.Context(q, PackOptions{Bundle: "solar", Count: tokens.Count})
	if i := slices.Index(p.Rules, "solar/knowledge/giq"); i != 1 {
		t.Errorf("pack rules %v, want the quality rule after the best illustration\n%s", p.Rules, p.Text)
	}
}

// TestDecimalsAndWordFormsMatch: a threshold is one token, as the rule and
// the question both write it, and a word's derived forms share a stem.
func TestDecimalsAndWordFormsMatch(t *testing.T) {
	if got := Tokens("a score above 0.7. Then 3.x"); !slices.Equal(got, []string{"a", "score", "above", "0.7", "then", "3", "x"}) {
		t.Errorf("tokens %q", got)
	}
	for _, pair := range [][2]string{{"installed", "installation"}, {"engaged", "engagement"}, {"highly", "high"}, {"monthly", "months"}} {
		if a, b := string(stem([]byte(pair[0]))), string(stem([]byte(pair[1]))); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q", pair[0], a, pair[1], b)
		}
	}
}

// TestPacksShowJSONFields: a pack that shows a JSON column a rule uses
// shows the documented fields the rule reads, with their meanings and the
// values they list, under the column's row: every field when the rule uses
// the column whole, the named paths when it names them. The fields say
// what the column holds, so its row drops its meaning.
func TestPacksShowJSONFields(t *testing.T) {
	table := "---\ntype: PostgreSQL Table\ngrain: id\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
		"| `id` | integer | primary key | customer |\n| `housing` | jsonb |  | JSONB column. Bundles the housing facts. |\n\n" +
		"# JSON fields\n\n* `housing.tenure`: An enum (Tenure_enum) describing ownership (Rent, Living with Parents, Own).\n" +
		"* `housing.mortgage.balance`: A DECIMAL(15,2) mortgage balance.\n"
	rule := func(title, def, uses string) string {
		return "---\ntype: Calculation\ntitle: " + title + "\n---\n\n# Definition\n\n" + def + "\n\n# Columns used\n\n* [homes](/tables/homes.md): " + uses + "\n"
	}
	docs := map[string]string{
		"b:tables/homes.md":       table,
		"b:knowledge/housing.md":  rule("Housing Cost", "Rent paid, or what owners pay monthly.", "`housing`"),
		"b:knowledge/mortgage.md": rule("Mortgage Load", "The balance still owed.", "`housing` (`housing.mortgage.balance`)"),
	}
	ix := Build(snap(t, docs))
	whole := ix.Context("What is the Housing Cost of each customer?", PackOptions{Bundle: "b", Count: tokens.Count})
	want := "- `housing` jsonb\n  - `tenure`: describing ownership (Rent, Living with Parents, Own).\n  - `mortgage.balance`: mortgage balance.\n"
	if !strings.Contains(whole.Text, want) {
		t.Errorf("a rule using the column whole: pack\n%s\nwant\n%s", whole.Text, want)
	}
	// A pack takes the best rule hit besides the rules a question names:
	// without Housing Cost, the named rule is the pack's one use of the column.
	delete(docs, "b:knowledge/housing.md")
	named := Build(snap(t, docs)).Context("What is the Mortgage Load of each customer?", PackOptions{Bundle: "b", Count: tokens.Count})
	if want := "- `housing` jsonb\n  - `mortgage.balance`: mortgage balance.\n"; !strings.Contains(named.Text, want) || strings.Contains(named.Text, "tenure") {
		t.Errorf("a rule naming a path: pack\n%s\nwant\n%s", named.Text, want)
	}
}
