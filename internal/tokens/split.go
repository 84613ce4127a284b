package tokens

import (
	"unicode"
	"unicode/utf8"
)

// o200k splits text into pieces before byte-pair encoding with this
// expression, its alternatives tried in order at each position, the first
// that matches taking the piece (a backtracking engine's leftmost-first):
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// nextPiece does what the engine does, alternative by alternative, with
// the backtracking worked out: tokens_test.go holds it to the expression.
// Every position starts some alternative, so the pieces tile the text.

// Character classes of the expression.
const (
	classUpper  = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	classLower              // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	classNumber             // \p{N}
	classSpace              // \s: unicode.IsSpace
	classLetter             // \p{L}
	classBreak              // \r or \n
	classNone               // U+007F, which regexp2's negated classes miss
)

// asciiClass is slowClass for the ASCII range, which most text is: no
// ASCII rune is Lt, Lm, Lo or a mark.
func asciiClass(c byte) uint8 {
	switch {
	case 'a' <= c && c <= 'z':
		return classLower | classLetter
	case 'A' <= c && c <= 'Z':
		return classUpper | classLetter
	case '0' <= c && c <= '9':
		return classNumber
	case c == '\r' || c == '\n':
		return classSpace | classBreak
	case c == ' ' || '\t' <= c && c <= '\f':
		return classSpace
	case c == 0x7f:
		return classNone
	}
	return 0
}

func slowClass(r rune) uint8 {
	var c uint8
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= classUpper
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= classLower
	}
	if unicode.Is(unicode.N, r) {
		c |= classNumber
	}
	if unicode.IsSpace(r) {
		c |= classSpace
	}
	if unicode.IsLetter(r) {
		c |= classLetter
	}
	if r == '\r' || r == '\n' {
		c |= classBreak
	}
	return c
}

// at returns the class and width of the rune at i.
func at(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass(c), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return slowClass(r), w
}

// isPrefix is [^\r\n\p{L}\p{N}]; isSymbol is [^\s\p{L}\p{N}].
func isPrefix(c uint8) bool { return c&(classBreak|classLetter|classNumber|classNone) == 0 }
func isSymbol(c uint8) bool { return c&(classSpace|classLetter|classNumber|classNone) == 0 }

// nextPiece returns where the piece that starts at i ends, or i when no
// piece starts there (at U+007F, which tiktoken-go then skips).
func nextPiece(s string, i int) int {
	c, w := at(s, i)
	if c&classNone != 0 {
		return i
	}
	if isPrefix(c) && i+w < len(s) {
		if e := word(s, i+w, true); e > 0 {
			return e
		}
	}
	if e := word(s, i, true); e > 0 {
		return e
	}
	if isPrefix(c) && i+w < len(s) {
		if e := word(s, i+w, false); e > 0 {
			return e
		}
	}
	if e := word(s, i, false); e > 0 {
		return e
	}
	if c&classNumber != 0 {
		e := i + w
		for k := 1; k < 3 && e < len(s); k++ {
			d, dw := at(s, e)
			if d&classNumber == 0 {
				break
			}
			e += dw
		}
		return e
	}
	if e := symbols(s, i); e > 0 {
		return e
	}
	// White space: c is \s here, every other class having matched above.
	// \s*[\r\n]+ ends with the first run of line breaks in the space, as if
	// \s* were lazy: so regexp2 matches it within the whole expression
	// (alone it does not), and tiktoken-go with it. Python's tiktoken would
	// take the space up to the last break.
	end, breaks, lastStart := i, -1, i
	for end < len(s) {
		d, dw := at(s, end)
		if d&classSpace == 0 {
			break
		}
		if d&classBreak != 0 {
			if breaks < 0 {
				breaks = end
			}
		} else if breaks >= 0 {
			return end // \s*?[\r\n]+
		}
		lastStart = end
		end += dw
	}
	switch {
	case breaks >= 0: // \s*?[\r\n]+, the breaks running to the end of the space
		return end
	case end == len(s) || lastStart == i: // \s+(?!\S) at the end, or \s+
		return end
	}
	return lastStart // \s+(?!\S): the run but its last space
}

// word matches from j what follows the optional prefix in the first
// alternative (lowerRequired) or the second: letters and marks as the
// classes allow, then a contraction. It returns the end, or 0.
func word(s string, j int, lowerRequired bool) int {
	// The run of [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] that the first class takes
	// greedily, and the last rune in it that the second class also takes.
	k, lastLower := j, -1
	for k < len(s) {
		c, w := at(s, k)
		if c&classUpper == 0 {
			break
		}
		if c&classLower != 0 {
			lastLower = k + w
		}
		k += w
	}
	if !lowerRequired && k == j {
		return 0 // the second alternative takes one upper rune at least
	}
	var e int
	if k < len(s) {
		if c, _ := at(s, k); c&classLower != 0 {
			// The lower run starts right after: it takes all it can.
			e = k
			for e < len(s) {
				c, w := at(s, e)
				if c&classLower == 0 {
					break
				}
				e += w
			}
		}
	}
	switch {
	case e > 0:
	case lowerRequired && lastLower > 0:
		e = lastLower // the upper run gives back its last lower rune
	case lowerRequired:
		return 0
	default:
		e = k
	}
	return contraction(s, e)
}

// contraction extends e over (?i:'s|'t|'re|'ve|'m|'ll|'d). The engine
// compares without case as Unicode folds it: 's' also matches 'S' and
// the long s, 'ſ'.
func contraction(s string, e int) int {
	if e >= len(s) || s[e] != '\'' {
		return e
	}
	r1, w1 := runeAt(s, e+1)
	for _, c := range "stmd" {
		if sameFold(r1, c) {
			return e + 1 + w1
		}
	}
	for _, pair := range [...]string{"re", "ve", "ll"} {
		if sameFold(r1, rune(pair[0])) {
			if r2, w2 := runeAt(s, e+1+w1); sameFold(r2, rune(pair[1])) {
				return e + 1 + w1 + w2
			}
		}
	}
	return e
}

func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// sameFold reports whether r is c or one of its case-folding equivalents.
func sameFold(r, c rune) bool {
	for f := c; ; {
		if f == r {
			return true
		}
		if f = unicode.SimpleFold(f); f == c {
			return false
		}
	}
}

// symbols matches " ?[^\s\p{L}\p{N}]+[\r\n/]*" at i, or returns 0.
func symbols(s string, i int) int {
	e := i
	if s[e] == ' ' {
		e++
	}
	start := e
	for e < len(s) {
		c, w := at(s, e)
		if !isSymbol(c) {
			break
		}
		e += w
	}
	if e == start {
		return 0
	}
	for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
		e++
	}
	return e
}
