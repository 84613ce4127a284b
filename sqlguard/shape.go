package sqlguard

import (
	"fmt"
	"strings"

	"github.com/okf-tools/okf/internal/pgast"

	"github.com/okf-tools/okf/internal/lazy"
)

// The PostgreSQL parser's C code and the protobuf encoding of its tree
// recurse once per level of the tree without checking the stack: about
// 20,000 levels (a 48 KB "1+1+…+1") crash the whole process. Before the
// parser sees a text, its tokens (from PostgreSQL's own scanner, which
// does not recurse) bound the depth the tree can reach: every level of
// nesting takes an open bracket or a token that nests an expression.
// Chains of AND and OR are flat lists in the tree and do not count.
const (
	// MaxNesting is the most brackets a query may have open at once.
	MaxNesting = 200
	// MaxNestingTokens is the most operators and nesting keywords (NOT,
	// IS, CASE, JOIN, UNION, ::, …) a query may hold.
	MaxNestingTokens = 4000
	// MaxOperatorRun is the longest run of operator characters outside
	// string literals. PostgreSQL's scanner rescans the rest of a run at
	// every "/*" or "--" in it, so "/*/*/*…" costs time in the square of
	// its length.
	MaxOperatorRun = 200
)

// checkOperatorRuns refuses a text with a run of operator characters
// longer than MaxOperatorRun, before any scanner sees it.
func checkOperatorRuns(sql string) error {
	run := 0
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c == '\'' {
			i = skipQuoted(sql, i, c, c) - 1
			run = 0
			continue
		}
		if !strings.ContainsRune("~!@#^&|`?+-*/%<>=", rune(c)) {
			run = 0
			continue
		}
		if run++; run > MaxOperatorRun {
			return refuse("too_deep", charPos(sql, i), fmt.Sprintf("the query has a run of more than %d operator characters", MaxOperatorRun),
				"Write operators one at a time, and comments one level deep.")
		}
	}
	return nil
}

// nestingKeywords are the keywords that can put one expression or query
// inside another without a bracket.
var nestingKeywords = lazy.Value[map[pgast.Token]bool]{New: func() map[pgast.Token]bool {
	return map[pgast.Token]bool{
		pgast.Token_NOT: true, pgast.Token_IS: true, pgast.Token_ISNULL: true, pgast.Token_NOTNULL: true,
		pgast.Token_COLLATE: true, pgast.Token_LIKE: true, pgast.Token_ILIKE: true, pgast.Token_SIMILAR: true,
		pgast.Token_BETWEEN: true, pgast.Token_IN_P: true, pgast.Token_AT: true, pgast.Token_CASE: true,
		pgast.Token_OVERLAPS: true, pgast.Token_ESCAPE: true, pgast.Token_UNION: true, pgast.Token_INTERSECT: true,
		pgast.Token_EXCEPT: true, pgast.Token_JOIN: true, pgast.Token_OPERATOR: true, pgast.Token_UESCAPE: true,
	}
}}

// checkShape refuses a text whose parse tree could be deep enough to
// crash the parser, given the text's tokens; sql is the query as sent, for
// positions.
func checkShape(sql string, scan *pgast.ScanResult) error {
	depth, nesting := 0, 0
	for _, tok := range scan.Tokens {
		switch t := tok.Token; {
		case t == pgast.Token_ASCII_40 || t == pgast.Token_ASCII_91: // ( [
			if depth++; depth > MaxNesting {
				return refuse("too_deep", charPos(sql, int(tok.Start)),
					fmt.Sprintf("the query nests more than %d brackets deep", MaxNesting),
					"Flatten the query: use WITH for intermediate results instead of nesting.")
			}
		case t == pgast.Token_ASCII_41 || t == pgast.Token_ASCII_93: // ) ]
			depth = max(depth-1, 0)
		case nestingToken(t):
			if nesting++; nesting > MaxNestingTokens {
				return refuse("too_deep", charPos(sql, int(tok.Start)),
					fmt.Sprintf("the query has more than %d operators and nesting keywords", MaxNestingTokens),
					"Write a shorter query: use IN (…) lists or a VALUES list instead of long chains of operators.")
			}
		}
	}
	return nil
}

func nestingToken(t pgast.Token) bool {
	switch t {
	case pgast.Token_ASCII_37, pgast.Token_ASCII_42, pgast.Token_ASCII_43, pgast.Token_ASCII_45,
		pgast.Token_ASCII_47, pgast.Token_ASCII_60, pgast.Token_ASCII_61, pgast.Token_ASCII_62,
		pgast.Token_ASCII_94, pgast.Token_Op, pgast.Token_TYPECAST, pgast.Token_LESS_EQUALS,
		pgast.Token_GREATER_EQUALS, pgast.Token_NOT_EQUALS:
		return true
	}
	return nestingKeywords.Get()[t]
}

// sameReading refuses SQLite text that PostgreSQL's scanner reads
// differently from SQLite (a nested comment, an E” string, a dollar
// quote): the validator's parse would then judge another query than the
// one SQLite runs. It compares where each reads a word to begin; text is
// sql as the PostgreSQL parser reads it (backticks turned into quotes).
func sameReading(sql, text string, scan *pgast.ScanResult) error {
	var pg []int
	for _, tok := range scan.Tokens {
		start := int(tok.Start)
		if start >= len(text) {
			continue
		}
		if tok.Token == pgast.Token_IDENT && text[start] != '"' || tok.KeywordKind != pgast.KeywordKind_NO_KEYWORD {
			pg = append(pg, start)
		}
	}
	var lite []int
	for _, t := range scanSQLite(sql) {
		if t.quoted || t.text == "" {
			continue
		}
		if c := t.text[0]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			lite = append(lite, t.offset)
		}
	}
	for i := 0; i < len(pg) || i < len(lite); i++ {
		if i < len(pg) && i < len(lite) && pg[i] == lite[i] {
			continue
		}
		at := 0
		switch {
		case i < len(pg) && i < len(lite):
			at = min(pg[i], lite[i])
		case i < len(pg):
			at = pg[i]
		default:
			at = lite[i]
		}
		return refuse("parser_differential", charPos(sql, at),
			"PostgreSQL's parser and SQLite read this text differently (a nested comment, an E'' string or a dollar quote)",
			"Write plain SQL: single quotes for strings, one level of /* */ comments.")
	}
	return nil
}
