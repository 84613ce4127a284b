package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A bundle shaped like okf compile's output: rules with "Columns used" and
// "Depends on", tables with "Schema" and "Joins".
var compiled = map[string]string{
	"hub:tables/hubs.md":        "---\ntype: PostgreSQL Table\ntitle: hubs\ngrain: hubid\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `hubid` | integer | primary key | Hub id. |\n| `hubutilpct` | numeric |  | Utilisation in percent. |\n| `storecapm3` | numeric |  | Storage capacity. |\n| `storeavailm3` | numeric |  | Storage available. |\n| `hubname` | text |  | Name. |\n",
	"hub:tables/ops.md":         "---\ntype: PostgreSQL Table\ntitle: ops\ngrain: opsid\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `opsid` | integer | primary key | Operation id. |\n| `opshubref` | integer | references hubs.hubid | Hub. |\n| `opsteam` | text |  | Team. |\n\n# Joins\n\n* `opshubref` references `hubid` in [hubs](/tables/hubs.md).\n",
	"hub:tables/teams.md":       "---\ntype: PostgreSQL Table\ntitle: teams\ngrain: teamid\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `teamid` | integer | primary key | Team id. |\n| `teamopsref` | integer | references ops.opsid | Operation. |\n| `teamsize` | integer |  | Head count. |\n\n# Joins\n\n* `teamopsref` references `opsid` in [ops](/tables/ops.md).\n",
	"hub:knowledge/rur.md":      "---\ntype: Calculation\ntitle: Resource Utilization Ratio (RUR)\n---\n# Definition\n\nRUR = hubutilpct / 100 * storecapm3 / (storeavailm3 + 1)\n\n# Columns used\n\n* [hubs](/tables/hubs.md): `hubutilpct`, `storecapm3`, `storeavailm3`\n\n# Used by\n\n* [High Utilization](/knowledge/high.md)\n",
	"hub:knowledge/high.md":     "---\ntype: Business Rule\ntitle: High Utilization\n---\n# Definition\n\nA hub whose RUR is above 5.\n\n# Columns used\n\n* [hubs](/tables/hubs.md): `hubutilpct`, through [RUR](/knowledge/rur.md)\n\n# Depends on\n\n* [Resource Utilization Ratio (RUR)](/knowledge/rur.md)\n",
	"hub:knowledge/big-team.md": "---\ntype: Business Rule\ntitle: Big Team\n---\n# Definition\n\nA team of more than 20 people.\n\n# Columns used\n\n* [teams](/tables/teams.md): `teamsize`\n",
}

func countWords(s string) int { return len(strings.Fields(s)) }

func TestContextPackHoldsRuleClosureColumnsAndJoins(t *testing.T) {
	ix := Build(snap(t, compiled))
	pack := ix.Context("which hubs are in high utilization", PackOptions{Budget: 400, Count: countWords})
	if len(pack.Rules) < 2 || pack.Rules[0] != "hub/knowledge/high" || pack.Rules[1] != "hub/knowledge/rur" {
		t.Fatalf("rules %v: want high utilization first, then the RUR rule it depends on", pack.Rules)
	}
	for _, want := range []string{
		"### High Utilization (knowledge/high)\nA hub whose RUR is above 5.",
		"RUR = hubutilpct / 100 * storecapm3 / (storeavailm3 + 1)",
		"### hubs\n",
		"- `hubutilpct` numeric: Utilisation in percent.\n",
		"- `hubid` integer, primary key",
	} {
		if !strings.Contains(pack.Text, want) {
			t.Errorf("pack lacks %q:\n%s", want, pack.Text)
		}
	}
	if strings.Contains(pack.Text, "`hubname`") {
		t.Errorf("a column neither a rule nor the question names made it into the pack:\n%s", pack.Text)
	}
	if pack.Tokens != countWords(pack.Text) || pack.Tokens > 400 {
		t.Errorf("tokens %d for a text of %d words", pack.Tokens, countWords(pack.Text))
	}
}

func TestContextPackJoinPath(t *testing.T) {
	ix := Build(snap(t, compiled))
	// Big Team uses teams; with RUR, hubs: the pack must show how teams
	// reach hubs, through ops.
	pack := ix.Context("big team hub utilization ratio RUR", PackOptions{Budget: 1000, Count: countWords})
	for _, want := range []string{
		"## Joins",
		"* teams.teamopsref = ops.opsid\n",
		"* ops.opshubref = hubs.hubid\n",
		"- `opshubref` integer: Hub.\n",
	} {
		if !strings.Contains(pack.Text, want) {
			t.Errorf("pack lacks %q:\n%s", want, pack.Text)
		}
	}
	// A key whose join the pack lists is not said twice.
	if strings.Contains(pack.Text, "references hubs.hubid") {
		t.Errorf("a listed join repeated in its row:\n%s", pack.Text)
	}
	if strings.Join(pack.Tables, " ") != "hub/tables/hubs hub/tables/ops hub/tables/teams" {
		t.Errorf("tables %v", pack.Tables)
	}
}

func TestContextPackRespectsBudget(t *testing.T) {
	ix := Build(snap(t, compiled))
	for _, budget := range []int{20, 40, 80, 160} {
		pack := ix.Context("which hubs are in high utilization", PackOptions{Budget: budget, Count: countWords})
		if pack.Tokens > budget || !utf8.ValidString(pack.Text) {
			t.Errorf("budget %d: pack of %d tokens", budget, pack.Tokens)
		}
	}
	small := ix.Context("which hubs are in high utilization", PackOptions{Budget: 40, Count: countWords})
	if len(small.Rules) != 0 || len(small.Tables)+len(small.Candidates) == 0 {
		t.Errorf("a budget too small for any rule should still point somewhere: %+v", small)
	}
}

func TestContextPackTakesTheRulesAQuestionNames(t *testing.T) {
	docs := map[string]string{}
	for k, v := range compiled {
		docs[k] = v
	}
	// A rule that matches many rare words of the question outscores the
	// one it names; the named one must still come.
	docs["hub:knowledge/staff.md"] = "---\ntype: Business Rule\ntitle: Staff Bands\n---\n# Definition\n\nCompanies with fewer than 50 staff are small; fewer than 250 staff, medium.\n"
	ix := Build(snap(t, docs))
	pack := ix.Context("How many big teams are companies with fewer than 50 staff?", PackOptions{Budget: 1000, Count: countWords})
	if !containsRef(pack.Rules, "hub/knowledge/big-team") || !containsRef(pack.Rules, "hub/knowledge/staff") {
		t.Errorf("rules %v: want the named Big Team rule beside Staff Bands", pack.Rules)
	}
	// By abbreviation.
	pack = ix.Context("hubs where RUR is above 5", PackOptions{Budget: 1000, Count: countWords})
	if !containsRef(pack.Rules, "hub/knowledge/rur") {
		t.Errorf("rules %v: want the rule named by its abbreviation", pack.Rules)
	}
	if singular("customers") != "customer" || singular("status") != "status" || singular("class") != "class" {
		t.Error("singular folds the wrong words")
	}
}

func containsRef(refs []string, ref string) bool {
	for _, r := range refs {
		if r == ref {
			return true
		}
	}
	return false
}

func TestTrimMeaning(t *testing.T) {
	for in, want := range map[string]string{
		"A NUMERIC(4,1) measuring the score.":                      "measuring the score.",
		"INTEGER PRIMARY KEY identifying each customer.":           "identifying each customer.",
		"INTEGER REFERENCES customers(custid): the customer.":      "the customer.",
		"FOREIGN KEY referencing Showcases(ShowcaseID), the case.": "the case.",
		"BIGSERIAL PRIMARY KEY":                                    "PRIMARY KEY",
		"Primary key of the table.":                                "Primary key of the table.",
		"REFERENCES tells which order.":                            "REFERENCES tells which order.",
		"TEXT":                                                     "TEXT",
	} {
		if got := trimMeaning(in); got != want {
			t.Errorf("trimMeaning(%q) = %q, want %q", in, got, want)
		}
	}
}
