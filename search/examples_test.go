package search

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// withExamples is the compiled hub bundle with a verified query, a draft
// one, and a common query pattern on the teams table.
func withExamples() map[string]string {
	docs := maps.Clone(compiled)
	query := "---\ntype: SQL Query\ntitle: %s\ndescription: %s\nparameters:\n  - {name: least, type: number}\nstatus: %s\n---\n\n# SQL\n\n```sql\n%s\n```\n\n# Questions\n\n* %s\n"
	docs["hub:queries/busy-hubs.md"] = fmt.Sprintf(query, "Busy hubs", "Hubs whose utilization is at least a share.", "stable",
		"SELECT hubid, hubname FROM hubs WHERE hubutilpct >= :least", "Which hubs run above a utilization of 80 percent?")
	docs["hub:queries/draft.md"] = fmt.Sprintf(query, "Hub names", "Names of hubs whose utilization is at least a share.", "draft",
		"SELECT hubname FROM hubs WHERE hubutilpct >= :least", "Which hubs run above a utilization of 80 percent?")
	docs["hub:tables/teams.md"] += "\n# Common query patterns\n\n```sql\nSELECT teamopsref, sum(teamsize) AS head_count\nFROM warehouse.teams\nGROUP BY teamopsref\n```\n"
	return docs
}

// TestWorkedExamples: a question like a verified query's gets its SQL as
// a worked example, never a draft's; a table's common query pattern is an
// example too; an unrelated question gets none, and Examples: -1 turns
// them off.
func TestWorkedExamples(t *testing.T) {
	ix := Build(snap(t, withExamples()))
	pack := ix.Context("Which hubs run above a utilization of 90 percent?", PackOptions{Budget: 600, Count: countWords})
	if !slices.Equal(pack.Examples, []string{"hub/queries/busy-hubs"}) {
		t.Fatalf("examples %v\n%s", pack.Examples, pack.Text)
	}
	for _, want := range []string{
		"## Worked example: SQL that answers a question like this one\n",
		"### Busy hubs (queries/busy-hubs, a verified query: run_query runs it)\nAnswers: Which hubs run above a utilization of 80 percent?\n```sql\nSELECT hubid, hubname FROM hubs WHERE hubutilpct >= :least\n```\n",
	} {
		if !strings.Contains(pack.Text, want) {
			t.Errorf("pack lacks %q:\n%s", want, pack.Text)
		}
	}
	if slices.ContainsFunc(pack.Rules, func(r string) bool { return strings.Contains(r, "queries/") }) {
		t.Errorf("a query concept was taken as a rule: %v", pack.Rules)
	}

	pack = ix.Context("What is the head count of the teams of each operation?", PackOptions{Budget: 600, Count: countWords})
	if !slices.Equal(pack.Examples, []string{"hub/tables/teams"}) || !strings.Contains(pack.Text, "### A common query of teams (tables/teams)\n```sql\nSELECT teamopsref, sum(teamsize)") {
		t.Errorf("the teams pattern: examples %v\n%s", pack.Examples, pack.Text)
	}

	if pack := ix.Context("List every operation.", PackOptions{Budget: 600, Count: countWords}); len(pack.Examples) != 0 {
		t.Errorf("an unrelated question got examples %v", pack.Examples)
	}
	drafts := withExamples()
	delete(drafts, "hub:queries/busy-hubs.md")
	if pack := Build(snap(t, drafts)).Context("Which hubs run above a utilization of 90 percent?", PackOptions{Budget: 600, Count: countWords}); len(pack.Examples) != 0 {
		t.Errorf("a draft query was an example: %v", pack.Examples)
	}
	off := ix.Context("Which hubs run above a utilization of 90 percent?", PackOptions{Budget: 600, Count: countWords, Examples: -1})
	if len(off.Examples) != 0 || strings.Contains(off.Text, "Worked example") {
		t.Errorf("Examples -1 still holds %v", off.Examples)
	}
}
