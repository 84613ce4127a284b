package compile

import (
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
)

// TestLogEntryIsDated checks that the log's one entry sits under a
// `## YYYY-MM-DD` heading whether or not a generation time is given, as
// §9 wants and W4G1's and skosovsky's validators demand, and that the date
// comes from the options, never the clock.
func TestLogEntryIsDated(t *testing.T) {
	db := &Database{
		Name:    "shop",
		Tables:  []*Table{{Name: "t", Columns: []*Column{{Name: "id", Type: "integer"}}, PrimaryKey: []string{"id"}}},
		Sources: []Source{{ID: "schema", Resource: "shop_schema.txt"}},
	}
	entry := "* **Creation**: Compiled 1 tables and 0 business rules of `shop` from `shop_schema.txt` with `okf/test`.\n"
	for _, c := range []struct {
		name string
		at   time.Time
		day  string
	}{
		{"no time", time.Time{}, "1970-01-01"},
		// The date is the UTC one, as generated.at is written.
		{"a time", time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("UTC-1", -3600)), "2026-11-30"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Build(db, Options{Generator: "okf/test", GeneratedAt: c.at})
			if err != nil {
				t.Fatal(err)
			}
			want := "# Update Log\n\n## " + c.day + "\n\n" + entry
			if got := string(b.Files["log.md"]); got != want {
				t.Errorf("log.md:\n%s\nwant:\n%s", got, want)
			}
			var docs []*okf.Document
			for _, p := range b.Paths() {
				docs = append(docs, okf.Parse(p, b.Files[p]))
			}
			for _, f := range okf.Validate(okf.NewBundle(docs), okf.Options{Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}).Findings {
				if strings.HasPrefix(f.Path, "log.md") || f.Severity == okf.Error {
					t.Errorf("%s", f)
				}
			}
		})
	}
}
