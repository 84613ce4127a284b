// Package sqlshapes makes SQL texts of hostile shapes and a given size
// (long operator chains, deep nesting, long lists), for the tests that
// check no query can crash or stall okf.
package sqlshapes

import "strings"

// Shape is one hostile form of query.
type Shape struct {
	Name string
	head string // written once
	unit string // repeated
	tail string // written once, then closing is repeated
	// closing matches unit: a ")" for every "(".
	closing string
}

// Shapes are the forms the PostgreSQL parser's C code recursed on without
// a bound, and the long flat forms that cost the validator time.
var Shapes = []Shape{
	{Name: "chain of +", head: "SELECT 1", unit: "+1"},
	{Name: "chain of ||", head: "SELECT 'a'", unit: "||'a'"},
	{Name: "chain of casts", head: "SELECT 1", unit: "::int"},
	{Name: "chain of IS NULL", head: "SELECT 1", unit: " IS NULL"},
	{Name: "chain of COLLATE", head: "SELECT 'a'", unit: ` COLLATE "C"`},
	{Name: "chain of ->", head: "SELECT '{}'::jsonb", unit: "->'a'"},
	{Name: "chain of NOT", head: "SELECT ", unit: "NOT ", tail: "true"},
	{Name: "chain of unary -", head: "SELECT ", unit: "-", tail: "1"},
	{Name: "nested brackets", head: "SELECT ", unit: "(", tail: "1", closing: ")"},
	{Name: "nested subqueries", head: "", unit: "SELECT (", tail: "1", closing: ")"},
	{Name: "nested functions", head: "SELECT ", unit: "abs(", tail: "1", closing: ")"},
	{Name: "nested ARRAY", head: "SELECT ", unit: "ARRAY[", tail: "1", closing: "]"},
	{Name: "nested CASE", head: "SELECT ", unit: "CASE WHEN true THEN ", tail: "1", closing: " END"},
	{Name: "chain of UNION", head: "SELECT 1", unit: " UNION SELECT 1"},
	{Name: "chain of JOIN", head: "SELECT 1 FROM (SELECT 1 AS x) t0", unit: " JOIN (SELECT 1 AS x) t USING (x)"},
	{Name: "long IN list", head: "SELECT 1 WHERE 1 IN (", unit: "1,", tail: "1)"},
	{Name: "long AND list", head: "SELECT 1 WHERE true", unit: " AND true"},
	{Name: "long VALUES", head: "VALUES (1)", unit: ",(1)"},
	{Name: "nested comments", head: "SELECT 1 ", unit: "/*", tail: "x", closing: "*/"},
}

// Text writes the shape at about size bytes.
func (s Shape) Text(size int) string {
	per := len(s.unit) + len(s.closing)
	n := max((size-len(s.head)-len(s.tail))/per, 1)
	var b strings.Builder
	b.Grow(len(s.head) + n*per + len(s.tail))
	b.WriteString(s.head)
	for range n {
		b.WriteString(s.unit)
	}
	b.WriteString(s.tail)
	for range n {
		b.WriteString(s.closing)
	}
	return b.String()
}
