package okf

import "testing"

func TestCheckRuleColumns(t *testing.T) {
	b := NewBundle([]*Document{
		Parse("tables/orders.md", []byte("---\ntype: Table\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `ordid` | integer | primary key | Order. |\n| `grossamt` | numeric |  | Total. |\n")),
		Parse("knowledge/nov.md", []byte("---\ntype: Calculation\n---\n# Definition\n\nNOV = grossamt - discamt.\n\n# Columns used\n\n* [orders](../tables/orders.md): `grossamt`, `discamt` (`discamt.value`)\n* [nowhere](../tables/nowhere.md): `x`\n")),
	})
	got := CheckRuleColumns(b)
	if len(got) != 1 || got[0].Code != "rule-column-unknown" || got[0].Path != "knowledge/nov.md" || got[0].Line != 10 ||
		got[0].Message != "`discamt` is not a column of tables/orders" || got[0].Severity != Warning {
		t.Errorf("findings %+v", got)
	}
}
