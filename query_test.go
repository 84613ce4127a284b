package okf

import (
	"slices"
	"strings"
	"testing"
)

func TestPlaceholders(t *testing.T) {
	for sql, want := range map[string][]string{
		"SELECT * FROM orders WHERE region = :region AND total > :min_total": {"region", "min_total"},
		"SELECT created::date, ':not' AS s, \":nor\" FROM t WHERE a = :a":    {"a"},
		"SELECT 1 -- :comment\n/* :block */ WHERE x = :x AND y = :x":         {"x"},
		"SELECT $$ :dollar $$, $q$ :tagged $q$, $1 FROM t WHERE z = :z":      {"z"},
		"SELECT 'it''s :quoted' WHERE b = :b9":                               {"b9"},
		"SELECT a:=1":                                                        nil,
	} {
		if got := Placeholders(sql); !slices.Equal(got, want) {
			t.Errorf("Placeholders(%q) = %v, want %v", sql, got, want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	doc := Parse("queries/sales-by-region.md", []byte(`---
type: SQL Query
title: Sales by region
description: Paid sales of one region over a period.
parameters:
  - {name: region, type: text, enum: [East, West]}
  - {name: since, type: date, default: "2026-01-01"}
  - {name: limit, type: integer, min: 1, max: 100, default: 10}
---
# SQL

`+"```sql"+`
SELECT region, sum(total) FROM orders
WHERE region = :region AND orderdt >= :since
GROUP BY region LIMIT :limit
`+"```"+`

# Questions

* What were the sales of the East region this year?
`))
	q, findings := ParseQuery(doc)
	if len(findings) != 0 || len(q.Params) != 3 || q.Params[2].Type != "integer" || !strings.HasPrefix(q.SQL, "SELECT region") ||
		q.SQLLine != 13 || len(q.Questions) != 1 {
		t.Fatalf("query %+v, findings %v", q, findings)
	}
	if v, err := q.Params[2].Value("42"); err != nil || v != int64(42) {
		t.Errorf("Value = %v, %v", v, err)
	}
}

func TestRewritePlaceholders(t *testing.T) {
	sql, names := RewritePlaceholders("SELECT ':a', x::int FROM t WHERE a = :a AND b = :b OR a = :a", func(_ string, n int) string { return "$" + string(rune('0'+n)) })
	if sql != "SELECT ':a', x::int FROM t WHERE a = $1 AND b = $2 OR a = $3" || !slices.Equal(names, []string{"a", "b", "a"}) {
		t.Errorf("%q %v", sql, names)
	}
}

// FuzzScanSQL: any text scans in one pass, its tokens in order, apart and
// within it; rewriting its placeholders gives back the text with each
// one replaced.
func FuzzScanSQL(f *testing.F) {
	for _, s := range []string{"SELECT :a, ':b', \"c\", $$:d$$, $t$x$t$, -- :e\n/* :f */ 1.5, x1 + 2., :g::int", "", "'", "/*", "$a", "1e5 .5 $1 ::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		last := 0
		ScanSQL(sql, func(kind SQLToken, start, end int) {
			if start < last || end <= start || end > len(sql) {
				t.Fatalf("%q: token %d at [%d, %d) after %d", sql, kind, start, end, last)
			}
			last = end
		})
		out, names := RewritePlaceholders(sql, func(string, int) string { return "?" })
		if len(out) != len(sql)-placeholderBytes(sql)+len(names) {
			t.Fatalf("%q rewrote to %q", sql, out)
		}
	})
}

func placeholderBytes(sql string) int {
	n := 0
	eachPlaceholder(sql, func(start, end int, _ string) { n += end - start })
	return n
}
