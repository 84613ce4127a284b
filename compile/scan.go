package compile

import "strings"

// The scanners below find the names a rule's text mentions. The linker
// runs them over every rule and column meaning, where they were regular
// expressions and a quarter of a compile's time; each says the expression
// it matches as, leftmost first, and scan_test.go holds it to it.

func isIdentStart(c byte) bool { return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

func isIdentByte(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// identEnd returns the end of the run of identifier bytes at s[i:].
func identEnd(s string, i int) int {
	for i < len(s) && isIdentByte(s[i]) {
		i++
	}
	return i
}

// words returns the identifiers of s with any dotted continuation, as in
// "hubutilpct" or "impactMetrics.population.affected":
// `[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`.
func words(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isIdentStart(s[i]) {
			i++
			continue
		}
		end := dottedEnd(s, i)
		out = append(out, s[i:end])
		i = end
	}
	return out
}

// dottedEnd returns the end of the dotted identifier that starts at s[i].
func dottedEnd(s string, i int) int {
	end := identEnd(s, i+1)
	for end+1 < len(s) && s[end] == '.' && isIdentStart(s[end+1]) {
		end = identEnd(s, end+2)
	}
	return end
}

// firstWord returns the first of words(s), or "".
func firstWord(s string) string {
	for i := 0; i < len(s); i++ {
		if isIdentStart(s[i]) {
			return s[i:dottedEnd(s, i)]
		}
	}
	return ""
}

// pipeRef is a "db|table|column" reference: three identifiers joined by
// "|", `([A-Za-z_][A-Za-z0-9_]*)\|([A-Za-z_][A-Za-z0-9_]*)\|([A-Za-z_][A-Za-z0-9_]*)`,
// and where it is in the text.
type pipeRef struct {
	start, end int
	names      [3]string
}

// pipeRefs returns the references of s, in order.
func pipeRefs(s string) []pipeRef {
	var out []pipeRef
	for i := 0; i < len(s); {
		if r, ok := pipeRefAt(s, i); ok {
			out = append(out, r)
			i = r.end
			continue
		}
		i++
	}
	return out
}

func pipeRefAt(s string, i int) (pipeRef, bool) {
	r := pipeRef{start: i}
	for k := range r.names {
		if k > 0 {
			if i >= len(s) || s[i] != '|' {
				return r, false
			}
			i++
		}
		if i >= len(s) || !isIdentStart(s[i]) {
			return r, false
		}
		end := identEnd(s, i+1)
		r.names[k] = s[i:end]
		i = end
	}
	r.end = i
	return r, true
}

// withoutPipeRefs returns s with each reference replaced by a space.
func withoutPipeRefs(s string, refs []pipeRef) string {
	if len(refs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(s[last:r.start])
		b.WriteByte(' ')
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// isRESpace reports whether c is white space as regexp's \s means it.
func isRESpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// trailingParen finds a trailing parenthesis of a rule name, "(RUR)" in
// "Resource Utilization Ratio (RUR)", with the white space around it:
// `\s*\(([^()]*)\)\s*$`. It returns the start of the match and the text
// in the brackets.
func trailingParen(s string) (start int, inner string, ok bool) {
	end := len(s)
	for end > 0 && isRESpace(s[end-1]) {
		end--
	}
	if end == 0 || s[end-1] != ')' {
		return 0, "", false
	}
	open := strings.LastIndexAny(s[:end-1], "()")
	if open < 0 || s[open] != '(' {
		return 0, "", false
	}
	start = open
	for start > 0 && isRESpace(s[start-1]) {
		start--
	}
	return start, s[open+1 : end-1], true
}

// abbrevShaped reports whether s is a letter, then letters, digits, "&",
// "/" and "-": `^[A-Za-z][A-Za-z0-9&/-]*$`.
func abbrevShaped(s string) bool {
	if s == "" || !isIdentStart(s[0]) || s[0] == '_' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isIdentByte(c) && c != '_' || c == '&' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

// symbols returns the abbreviations introduced in brackets after white
// space, "Voc" in "open-circuit voltage (Voc)" but nothing in "references
// Panel(PaneMark)": `\s\(([A-Z][A-Za-z0-9]{1,11})\)`.
func symbols(s string) []string {
	var out []string
	for i := 0; i+4 < len(s); i++ {
		if !isRESpace(s[i]) || s[i+1] != '(' || s[i+2] < 'A' || s[i+2] > 'Z' {
			continue
		}
		end := i + 3
		for end < len(s) && isIdentByte(s[end]) && s[end] != '_' {
			end++
		}
		if n := end - (i + 3); n >= 1 && n <= 11 && end < len(s) && s[end] == ')' {
			out = append(out, s[i+2:end])
			i = end
		}
	}
	return out
}

// formerNames returns the former names a meaning documents, "PowerRatedW"
// in "(was 'PowerRatedW')": `\bwas '([A-Za-z_][A-Za-z0-9_]*)'`.
func formerNames(meaning string) []string {
	var out []string
	const mark = "was '"
	for from := 0; ; {
		i := strings.Index(meaning[from:], mark)
		if i < 0 {
			return out
		}
		at := from + i
		from = at + 1
		if at > 0 && isIdentByte(meaning[at-1]) {
			continue
		}
		start := at + len(mark)
		if start >= len(meaning) || !isIdentStart(meaning[start]) {
			continue
		}
		end := identEnd(meaning, start+1)
		if end < len(meaning) && meaning[end] == '\'' {
			out = append(out, meaning[start:end])
			from = end + 1
		}
	}
}
