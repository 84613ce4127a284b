package eval

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/okf-tools/okf"
)

// Literal recall (issue 27): the string values a gold SQL compares columns
// against are stored values the agent has to write exactly ('Female', not
// 'female' or 'F'); a question that does not spell one leaves it to what
// the agent was shown.

// comparedLiterals returns the distinct values, sorted, of the string
// literals a SQL text compares something against: either operand of =,
// <> or != (an UPDATE's SET col = 'v' assigns, it does not compare), an
// element of an IN (...) list of literals, and either operand of LIKE or
// ILIKE when it holds no % or _ wildcard. A literal counts only as a whole
// operand: the key of x->>'key' = 'v' or a piece of 'a' || x = 'v' does not.
// The bodies of dollar-quoted functions and DO blocks are read too.
func comparedLiterals(sql string) []string {
	var out []string
	type span struct{ start, end int }
	var lits []span
	// mask is the text with comments and dollar-quoted strings blanked,
	// quoted names made into plain words and strings emptied, so that what
	// is around a literal reads as operators and keywords only.
	mask := []byte(sql)
	fill := func(b []byte, c byte) {
		for i := range b {
			b[i] = c
		}
	}
	okf.ScanSQL(sql, func(kind okf.SQLToken, start, end int) {
		switch kind {
		case okf.SQLString:
			// An open string (an odd count of quotes) is no literal.
			if strings.Count(sql[start:end], "'")%2 == 0 {
				lits = append(lits, span{start, end})
				fill(mask[start+1:end-1], ' ')
			} else {
				fill(mask[start:end], ' ')
			}
		case okf.SQLComment:
			fill(mask[start:end], ' ')
		case okf.SQLDollar:
			fill(mask[start:end], ' ')
			tok := sql[start:end]
			tag := tok[:strings.IndexByte(tok[1:], '$')+2]
			body := strings.TrimSuffix(tok[len(tag):], tag)
			out = append(out, comparedLiterals(body)...)
		case okf.SQLQuotedName:
			fill(mask[start:end], '_')
		}
	})
	m := string(mask)
	value := func(l span) string { return strings.ReplaceAll(sql[l.start+1:l.end-1], "''", "'") }
	// inList reports whether lits[k] is an element of IN ('a', 'b', ...).
	inList := func(k int) bool {
		if after := skipCast(m[lits[k].end:]); !strings.HasPrefix(after, ",") && !strings.HasPrefix(after, ")") {
			return false
		}
		for j := k; ; j-- {
			before := strings.TrimRightFunc(m[:lits[j].start], unicode.IsSpace)
			if strings.HasSuffix(before, "(") {
				return strings.EqualFold(lastWord(strings.TrimRightFunc(before[:len(before)-1], unicode.IsSpace)), "IN")
			}
			if !strings.HasSuffix(before, ",") || j == 0 || len(trimCast(before[:len(before)-1])) != lits[j-1].end {
				return false
			}
		}
	}
	// levels are the open parentheses and CASE expressions, each with
	// whether it is in an UPDATE's SET list.
	type level struct{ isCase, set bool }
	levels := []level{{}}
	prevWord := ""
	for i, k := 0, 0; i < len(m); {
		if k < len(lits) && lits[k].start == i {
			l, v := lits[k], value(lits[k])
			before := strings.TrimRightFunc(m[:l.start], unicode.IsSpace)
			after := skipCast(m[l.end:])
			// The literal on the right of its comparison, else on its left;
			// either way no other operator may hold it.
			op, whole := trailingOp(before), after == "" || !strings.ContainsRune(operatorChars, rune(after[0]))
			if op == "" || !whole {
				op, whole = leadingOp(after), before == "" || !strings.ContainsRune(operatorChars, rune(before[len(before)-1]))
			}
			switch {
			case op == "" || !whole:
				if inList(k) {
					out = append(out, v)
				}
			case op == "=" && levels[len(levels)-1].set: // an assignment
			case op == "LIKE" && strings.ContainsAny(v, "%_"): // a pattern
			default:
				out = append(out, v)
			}
			i, k = l.end, k+1
			continue
		}
		c := m[i]
		switch {
		case sqlWordByte(c):
			j := i
			for j < len(m) && sqlWordByte(m[j]) {
				j++
			}
			w := strings.ToUpper(m[i:j])
			top := &levels[len(levels)-1]
			switch w {
			case "CASE":
				if prevWord != "END" { // END CASE closes a PL/pgSQL CASE
					levels = append(levels, level{isCase: true})
				}
			case "END":
				if top.isCase {
					levels = levels[:len(levels)-1]
				}
			case "SET":
				top.set = true
			case "FROM", "WHERE", "RETURNING":
				top.set = false
			}
			prevWord, i = w, j
			continue
		case c == '(':
			levels = append(levels, level{})
		case c == ')' && len(levels) > 1:
			levels = levels[:len(levels)-1]
		case c == ';':
			levels = []level{{}}
		}
		if !unicode.IsSpace(rune(c)) {
			prevWord = ""
		}
		i++
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// operatorChars are the characters of SQL operators: a literal next to one
// that is not its comparison is a piece of a larger operand.
const operatorChars = "|+-*/%^<>=!~&#@["

// trailingOp is the comparison a text ends with, "=", "<>" (for != too),
// "LIKE" (for ILIKE too), or "".
func trailingOp(s string) string {
	switch {
	case strings.HasSuffix(s, "<>"), strings.HasSuffix(s, "!="):
		return "<>"
	case strings.HasSuffix(s, "="):
		if len(s) > 1 && strings.ContainsRune("<>:", rune(s[len(s)-2])) {
			return "" // <=, >=, PL/pgSQL's :=
		}
		return "="
	}
	if w := strings.ToUpper(lastWord(s)); w == "LIKE" || w == "ILIKE" {
		return "LIKE"
	}
	return ""
}

// leadingOp is the comparison a text starts with, as trailingOp.
func leadingOp(s string) string {
	switch {
	case strings.HasPrefix(s, "<>"), strings.HasPrefix(s, "!="):
		return "<>"
	case strings.HasPrefix(s, "=>"):
		return "" // a named argument
	case strings.HasPrefix(s, "="):
		return "="
	}
	j := 0
	for j < len(s) && sqlWordByte(s[j]) {
		j++
	}
	if w := strings.ToUpper(s[:j]); w == "LIKE" || w == "ILIKE" {
		return "LIKE"
	}
	return ""
}

// skipCast is the text after a literal from its first token on, past
// PostgreSQL casts ('v'::text).
func skipCast(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	for strings.HasPrefix(s, "::") {
		s = strings.TrimLeftFunc(s[2:], unicode.IsSpace)
		j := 0
		for j < len(s) && (sqlWordByte(s[j]) || s[j] == '.') {
			j++
		}
		s = strings.TrimLeftFunc(s[j:], unicode.IsSpace)
	}
	return s
}

// trimCast is the text before a comma up to its last token, past casts,
// as skipCast reads the text after a literal.
func trimCast(s string) string {
	for {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
		w := strings.TrimRightFunc(s, func(r rune) bool { return r < utf8.RuneSelf && (sqlWordByte(byte(r)) || r == '.') })
		if w == s || !strings.HasSuffix(strings.TrimRightFunc(w, unicode.IsSpace), "::") {
			return s
		}
		s = strings.TrimSuffix(strings.TrimRightFunc(w, unicode.IsSpace), "::")
	}
}

func lastWord(s string) string {
	j := len(s)
	for j > 0 && sqlWordByte(s[j-1]) {
		j--
	}
	return s[j:]
}

// sqlWordByte reports whether c is part of a keyword or name, as ScanSQL
// reads them.
func sqlWordByte(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c >= 0x80
}

// shows reports whether text holds value exactly as stored, case
// included: as a whole word or phrase (no letter, digit or _ joined to it,
// so quoted 'value' counts too), or quoted as SQL writes it, its own
// quotes doubled.
func shows(text, value string) bool {
	if strings.Contains(value, "'") && strings.Contains(text, "'"+strings.ReplaceAll(value, "'", "''")+"'") {
		return true
	}
	first, _ := utf8.DecodeRuneInString(value)
	last, _ := utf8.DecodeLastRuneInString(value)
	for from := 0; ; {
		i := strings.Index(text[from:], value)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(value):])
		if !(isWordRune(first) && isWordRune(before)) && !(isWordRune(last) && isWordRune(after)) {
			return true
		}
		from = i + 1
	}
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
