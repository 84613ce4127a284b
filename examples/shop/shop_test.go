package shop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/examples/shop"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/sqlguard"
)

// shop.sql is what the generator writes now: nobody edited it by hand,
// and nobody changed the generator or the schema without regenerating.
func TestSQLIsGenerated(t *testing.T) {
	want, err := shop.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(shop.SQLFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run go generate ./examples/shop", shop.SQLFile)
	}
}

// Every question's gold SQL runs through the guard on the created
// database and returns rows; every rule it names exists.
func TestQuestionsRunOnTheDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shop.db")
	if err := shop.Create(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := shop.Create(ctx, path); err == nil {
		t.Error("Create overwrote an existing file")
	}
	db, err := sqlguard.Open(ctx, "shop", "sqlite:"+path, sqlguard.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counts := map[string]int{"customers": 300, "orders": 1812, "payments": 1910, "deliveries": 1701, "returns": 110}
	for table, want := range counts {
		res, err := db.Query(ctx, "test", "SELECT count(*) FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0][0]; got != int64(want) {
			t.Errorf("%s: %v rows, want %d", table, got, want)
		}
	}
	qs, err := eval.LoadQuestions(shop.QuestionsFile)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[int]bool{}
	kb, err := os.ReadFile(shop.RulesFile)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(kb)), "\n") {
		var r struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s:%d: %v", shop.RulesFile, i+1, err)
		}
		rules[r.ID] = true
	}
	if len(qs) < 8 || len(qs) > 12 {
		t.Errorf("%d questions, want 8 to 12", len(qs))
	}
	for _, q := range qs {
		if q.Database != shop.Name || len(q.SQL) != 1 || len(q.Rules) == 0 {
			t.Errorf("%s: database %q, %d gold SQL, rules %v", q.ID, q.Database, len(q.SQL), q.Rules)
			continue
		}
		for _, r := range q.Rules {
			if !rules[r] {
				t.Errorf("%s: rule %d is not in %s", q.ID, r, shop.RulesFile)
			}
		}
		res, err := db.Query(ctx, "test", q.SQL[0])
		if err != nil {
			t.Errorf("%s: %v", q.ID, err)
			continue
		}
		if len(res.Rows) == 0 || res.Rows[0][0] == nil {
			t.Errorf("%s: the gold SQL returns nothing", q.ID)
		}
	}
}

// With customers.email and custname masked, every question's gold SQL
// still answers as it does unmasked: each result column that shows
// neither is the same, and each that does shows only the mask.
func TestQuestionsWithMaskedCustomers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shop.db")
	if err := shop.Create(ctx, path); err != nil {
		t.Fatal(err)
	}
	plain, err := sqlguard.Open(ctx, "shop", "sqlite:"+path, sqlguard.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	masked, err := sqlguard.Open(ctx, "shop", "sqlite:"+path, sqlguard.Options{MaskedColumns: []string{"customers.email", "customers.custname"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer masked.Close()
	qs, err := eval.LoadQuestions(shop.QuestionsFile)
	if err != nil {
		t.Fatal(err)
	}
	showing := 0
	for _, q := range qs {
		want, err := plain.Query(ctx, "test", q.SQL[0])
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		got, err := masked.Query(ctx, "test", q.SQL[0])
		if err != nil {
			t.Errorf("%s: refused with masked columns: %v", q.ID, err)
			continue
		}
		if len(got.MaskedColumns) > 0 {
			showing++
		}
		for i, c := range got.Columns {
			isMasked := slices.Contains(got.MaskedColumns, c.Name)
			for r := range got.Rows {
				switch g, w := got.Rows[r][i], want.Rows[r][i]; {
				case isMasked && g != nil && g != sqlguard.Mask:
					t.Errorf("%s: row %d column %s shows %v", q.ID, r, c.Name, g)
				case !isMasked && g != w:
					t.Errorf("%s: row %d column %s is %v, unmasked %v", q.ID, r, c.Name, g, w)
				}
			}
		}
	}
	if showing == 0 || showing == len(qs) {
		t.Errorf("%d of %d questions show a masked column: the test no longer tells the two kinds apart", showing, len(qs))
	}
	t.Logf("%d of %d questions' results show a masked column", showing, len(qs))
}
