package queries

import (
	"strings"
	"testing"

	"github.com/okf-tools/okf"
)

func TestPromote(t *testing.T) {
	d, err := Promote(Promotion{
		Question: "List the churned customers of the West region who ordered more than 3 times since 2025-01-01.",
		SQL: "SELECT c.custid FROM customers c JOIN orders o ON o.custref = c.custid\n" +
			"WHERE c.region = 'West' AND o.orderdt >= '2025-01-01' AND o.note <> 'it''s' -- 'West'\n" +
			"GROUP BY c.custid HAVING count(*) > 3 AND max(o.grossamt) > 3.5 AND o.orderdt > DATE '2025-01-01' LIMIT 30;",
		Bundle:    "shop",
		Reads:     []string{"tables/customers", "knowledge/churned-customer"},
		Run:       "3f2a1c9e77",
		Generator: "okf/test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "list-the-churned-customers-of-the-3f2a1c9e.md" {
		t.Errorf("name %s", d.Name)
	}
	if got := strings.Join(d.Params, " "); got != "region orderdt value" {
		t.Errorf("params %s", got)
	}
	doc := okf.Parse("queries/"+d.Name, d.Text)
	q, findings := okf.ParseQuery(doc)
	if len(findings) > 0 {
		t.Fatalf("the draft has findings %v:\n%s", findings, d.Text)
	}
	want := "SELECT c.custid FROM customers c JOIN orders o ON o.custref = c.custid\n" +
		"WHERE c.region = :region AND o.orderdt >= :orderdt AND o.note <> 'it''s' -- 'West'\n" +
		"GROUP BY c.custid HAVING count(*) > :value AND max(o.grossamt) > 3.5 AND o.orderdt > DATE '2025-01-01' LIMIT 30"
	if q.SQL != want {
		t.Errorf("SQL\n%s\nwant\n%s", q.SQL, want)
	}
	if doc.Status() != "draft" || len(q.Questions) != 1 || len(q.Params) != 3 || q.Params[1].Type != "date" || q.Params[2].Type != "integer" || q.Params[2].Default.Value != "3" {
		t.Errorf("draft %+v status %s", q, doc.Status())
	}
	for _, s := range []string{"status: draft\ngenerated:\n  by: okf/test\n", "resource: okf run 3f2a1c9e77\n", "* [knowledge/churned-customer](/knowledge/churned-customer.md)\n"} {
		if !strings.Contains(string(d.Text), s) {
			t.Errorf("the draft lacks %q:\n%s", s, d.Text)
		}
	}
	if findings := CheckSQL(okf.NewBundle([]*okf.Document{doc})); len(findings) > 0 {
		t.Errorf("the guard refuses the draft: %v", findings)
	}
	for _, bad := range []string{"", " ; ", "SELECT '```'"} {
		if _, err := Promote(Promotion{Question: "q", SQL: bad}); err == nil {
			t.Errorf("%q promoted", bad)
		}
	}
}
