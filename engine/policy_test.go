package engine

import (
	"testing"

	"github.com/okf-tools/okf/sqlguard"
)

// TestPolicyOptions: a policy's options name it, for the row-level
// security okf prepare installs by that name, and hold both the
// database's row filter and the policy's.
func TestPolicyOptions(t *testing.T) {
	p := &Policy{Name: "north", RowFilters: map[string]string{"orders": "region = :caller.region"}}
	o := p.Options(sqlguard.Options{RowFilters: map[string]string{"orders": "open"}})
	if o.Policy != "north" || o.RowFilters["orders"] != "(open) AND (region = :caller.region)" {
		t.Errorf("options %+v", o)
	}
	var none *Policy
	if o := none.Options(sqlguard.Options{}); o.Policy != "" || !none.Allows("any") {
		t.Errorf("no policy: %+v", o)
	}
}
