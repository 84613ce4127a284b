package search

import (
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"

	"github.com/okf-tools/okf/internal/lazy"
)

// foldTable maps the Latin letters with diacritics (U+00C0–U+024F) to their
// lowercase base letters, so "Operações" and "operacoes" give one token.
var foldTable = lazy.Value[map[rune]string]{New: func() map[rune]string {
	m := map[rune]string{}
	for r := rune(0xC0); r <= 0x24F; r++ {
		var base []rune
		for _, d := range norm.NFD.String(string(unicode.ToLower(r))) {
			if !unicode.Is(unicode.Mn, d) {
				base = append(base, d)
			}
		}
		if s := string(base); s != string(r) {
			m[r] = s
		}
	}
	m['ß'] = "ss"
	m['æ'], m['Æ'] = "ae", "ae"
	m['ø'], m['Ø'] = "o", "o"
	m['œ'], m['Œ'] = "oe", "oe"
	return m
}}

// tokenize calls fn for every token of s: runs of letters and digits,
// lowercased, accents folded, with the byte offset where each starts. Every
// other character separates tokens, so "order_id" and "order id" tokenize
// alike. buf is scratch space; fn must not keep the slice it is given.
func tokenize(s []byte, buf []byte, fn func(tok []byte, off int)) []byte {
	tok := buf[:0]
	start := -1
	fold := foldTable.Get()
	flush := func() {
		if len(tok) > 0 {
			fn(tok, start)
			tok = tok[:0]
		}
		start = -1
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				if start < 0 {
					start = i
				}
				tok = append(tok, c)
			case 'A' <= c && c <= 'Z':
				if start < 0 {
					start = i
				}
				tok = append(tok, c+'a'-'A')
			case c == '.' && start >= 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]):
				// A decimal point stays in its number: "0.7" is one token,
				// and a question keeps the threshold a rule states.
				tok = append(tok, c)
			default:
				flush()
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case fold[r] != "":
			if start < 0 {
				start = i
			}
			tok = append(tok, fold[r]...)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			tok = utf8.AppendRune(tok, unicode.ToLower(r))
		case unicode.Is(unicode.Mn, r):
			// A combining accent written as its own character: fold it away.
		default:
			flush()
		}
		i += n
	}
	flush()
	return tok
}

// Tokens returns the tokens of a text, as search indexes them.
func Tokens(text string) []string {
	var out []string
	tokenize([]byte(text), nil, func(tok []byte, _ int) { out = append(out, string(tok)) })
	return out
}

// textBytes is s as bytes without a copy, for tokenize, which reads its
// input and never writes it.
func textBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
