// Package identwords splits identifiers such as column names into the
// words they are made of, for matching them against prose.
package identwords

import (
	"slices"
	"strings"
	"unicode"
)

// Split splits a CamelCase or snake_case name into lower-case words,
// keeping runs of capitals together: "PowerRatedW" is power, rated, w and
// "MaintenanceCostUSD" is maintenance, cost, usd.
func Split(name string) []string {
	rs := []rune(name)
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		split := cur == '_' || prev == '_' ||
			unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) ||
			unicode.IsUpper(cur) && unicode.IsUpper(prev) && unicode.IsLower(next)
		if split {
			words = append(words, strings.ToLower(strings.Trim(string(rs[start:i]), "_")))
			start = i
		}
	}
	words = append(words, strings.ToLower(strings.Trim(string(rs[start:]), "_")))
	return slices.DeleteFunc(words, func(w string) bool { return w == "" })
}
