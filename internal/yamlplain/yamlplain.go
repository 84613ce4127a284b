// Package yamlplain knows how yaml.v3 reads a plain (unquoted) scalar:
// as a string, or as a boolean, null, number or time. Both the compiler's
// frontmatter writer and the document parser's frontmatter reader decide
// with it when they may do yaml.v3's work themselves.
package yamlplain

import (
	"strconv"
	"strings"
	"time"
)

// What a string written plain reads back as.
const (
	String = iota
	Other  // a boolean, null, number or time, or an old boolean yaml.v3 quotes
)

// ReadsAs tells what yaml.v3 would read s, written plain, back as,
// following its resolve on the first byte: a letter or punctuation other
// than those below always reads as a string; y, n, t, f, o, ~ and < only
// as the words of its table of booleans, nulls and the merge key; a "."
// as a float when it parses as one; a digit or a sign as a time when it
// parses as one of yaml.v3's formats, and as a number when it parses as
// one of its integers or floats once "_" are removed.
func ReadsAs(s string) int {
	switch c := s[0]; {
	case IsWord(s):
		return Other
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		if isTime(s) || isNumber(strings.ReplaceAll(s, "_", "")) {
			return Other
		}
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return Other
		}
	}
	return String
}

// isTime reports whether yaml.v3 reads s as a timestamp: YYYY- and then
// one of its layouts.
func isTime(s string) bool {
	digits := 0
	for digits < len(s) && '0' <= s[digits] && s[digits] <= '9' {
		digits++
	}
	if digits != 4 || len(s) == 4 || s[4] != '-' {
		return false
	}
	for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isNumber reports whether yaml.v3 reads s, without its "_", as an
// integer (Go's literals, 0b and 0o with a sign) or a float.
func isNumber(s string) bool {
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(s, 0, 64); err == nil {
		return true
	}
	if isFloat(s) {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return true
		}
	}
	for _, base := range []struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		if rest, ok := strings.CutPrefix(s, base.prefix); ok {
			_, err1 := strconv.ParseInt(rest, base.base, 64)
			_, err2 := strconv.ParseUint(rest, base.base, 64)
			return err1 == nil || err2 == nil
		}
		if rest, ok := strings.CutPrefix(s, "-"+base.prefix); ok {
			_, err := strconv.ParseInt("-"+rest, base.base, 64)
			return err == nil
		}
	}
	return false
}

// isFloat matches yaml.v3's float syntax,
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func isFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// IsWord reports whether s is one of the words yaml.v3 reads as
// something other than a string, or quotes as an old boolean.
func IsWord(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}
