package sqlguard

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/okf-tools/okf/internal/lazy"
)

// token is a word, a quoted identifier or punctuation outside strings and
// comments, with its byte offset.
type token struct {
	text   string
	offset int
	quoted bool // text is the inside of a "quoted", `quoted` or [quoted] identifier
}

// scanSQLite splits SQLite text into bare words, quoted identifiers and
// single punctuation characters, skipping literals and comments.
func scanSQLite(sql string) []token {
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'':
			i = skipQuoted(sql, i, c, c)
		case c == '"' || c == '`' || c == '[':
			end := ']'
			if c != '[' {
				end = rune(c)
			}
			j := skipQuoted(sql, i, c, byte(end))
			toks = append(toks, token{text: sql[i+1 : max(i+1, j-1)], offset: i, quoted: true})
			i = j
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			if j := strings.Index(sql[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(sql)
			}
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			toks = append(toks, token{text: sql[i:j], offset: i})
			i = j
		default:
			r, size := utf8.DecodeRuneInString(sql[i:])
			if !unicode.IsSpace(r) {
				toks = append(toks, token{text: sql[i : i+size], offset: i})
			}
			i += size
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// skipQuoted returns the offset after the quoted run starting at i; a
// doubled closing quote is an escaped one.
func skipQuoted(sql string, i int, open, close byte) int {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == close {
			if open == close && j+1 < len(sql) && sql[j+1] == close {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

// backticksToQuotes turns MySQL-style `identifiers`, which SQLite accepts,
// into "identifiers" so the PostgreSQL parser can read the query. Only the
// parser sees the result; the database gets the original text.
func backticksToQuotes(sql string) string {
	if !strings.Contains(sql, "`") {
		return sql
	}
	b := []byte(sql)
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '\'', '"':
			i = skipQuoted(sql, i, c, c)
		case '`':
			end := skipQuoted(sql, i, '`', '`')
			inner := sql[i+1 : max(i+1, end-1)]
			if end <= len(sql) && sql[end-1] == '`' && !strings.ContainsAny(inner, "\"`") {
				b[i], b[end-1] = '"', '"'
			}
			i = end
		default:
			i++
		}
	}
	return string(b)
}

// nestedComment finds a /* inside a SQLite comment: PostgreSQL nests
// comments and SQLite does not, so the two read the rest differently.
func nestedComment(sql string) (int, bool) {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i, c, c)
		case c == '[':
			i = skipQuoted(sql, i, '[', ']')
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return 0, false
			}
			i += j + 1
		case strings.HasPrefix(sql[i:], "/*"):
			body := sql[i+2:]
			end := strings.Index(body, "*/")
			if end < 0 {
				end = len(body)
			}
			// PostgreSQL also reads a /* that overlaps SQLite's closing */.
			if k := strings.Index(body[:min(end+1, len(body))], "/*"); k >= 0 {
				return i + 2 + k, true
			}
			i += 2 + end + 2
		default:
			i++
		}
	}
	return 0, false
}

// Words that begin or belong to statements that change something.
var lexicalDenied = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "into": "INTO",
		"create": "CREATE", "drop": "DROP", "alter": "ALTER", "attach": "ATTACH", "detach": "DETACH",
		"pragma": "PRAGMA", "vacuum": "VACUUM", "reindex": "REINDEX", "analyze": "ANALYZE",
		"begin": "BEGIN", "commit": "COMMIT", "rollback": "ROLLBACK", "savepoint": "SAVEPOINT", "release": "RELEASE",
	}
}}

// lexicalCheck is the validator for SQLite text the PostgreSQL parser
// cannot read: one statement, starting with SELECT, VALUES or WITH, with no
// keyword of a changing statement and no refused function.
func (v *Validator) lexicalCheck(sql string) error {
	toks := scanSQLite(sql)
	if len(toks) == 0 {
		return refuse("empty", 0, "the SQL is empty", "Send one SELECT statement.")
	}
	first := strings.ToLower(toks[0].text)
	if first != "select" && first != "values" && first != "with" {
		return refuse("statement_kind", charPos(sql, toks[0].offset),
			fmt.Sprintf("%s is not allowed; only SELECT, VALUES and WITH queries may run", strings.ToUpper(toks[0].text)),
			"The database is read-only for you: write a SELECT.")
	}
	for i, t := range toks {
		word := strings.ToLower(t.text)
		if t.text == ";" {
			if i+1 < len(toks) {
				return refuse("one_statement", charPos(sql, toks[i+1].offset), "found more than one statement; send exactly one",
					"Remove the semicolon and everything after it.")
			}
			continue
		}
		if _, ok := v.deniedColumns[word]; ok {
			// By name: without a parse the column's table is unknown.
			return refuse("denied_column", charPos(sql, t.offset), fmt.Sprintf("column %s is hidden", t.text),
				"Leave the column out; it is not available to you.")
		}
		if t.quoted {
			continue
		}
		if kw, ok := lexicalDenied.Get()[word]; ok {
			return refuse("statement_kind", charPos(sql, t.offset), kw+" is not allowed; only SELECT, VALUES and WITH queries may run",
				"The database is read-only for you: write a SELECT.")
		}
		if word == "replace" && (i+1 >= len(toks) || toks[i+1].text != "(") {
			return refuse("statement_kind", charPos(sql, t.offset), "REPLACE is not allowed; only SELECT, VALUES and WITH queries may run",
				"The database is read-only for you: write a SELECT.")
		}
		if i+1 < len(toks) && toks[i+1].text == "(" && !v.allow.allows([]string{word}) && deniedClass(word) {
			return refuse("function", charPos(sql, t.offset), fmt.Sprintf("function %s is not allowed: %s", word, functionRefusal(word)),
				"Use the functions listed in docs/security.md.")
		}
	}
	return nil
}
