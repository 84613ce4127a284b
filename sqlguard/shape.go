package sqlguard

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

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
var nestingKeywords = lazy.Value[map[pg_query.Token]bool]{New: func() map[pg_query.Token]bool {
	return map[pg_query.Token]bool{
		pg_query.Token_NOT: true, pg_query.Token_IS: true, pg_query.Token_ISNULL: true, pg_query.Token_NOTNULL: true,
		pg_query.Token_COLLATE: true, pg_query.Token_LIKE: true, pg_query.Token_ILIKE: true, pg_query.Token_SIMILAR: true,
		pg_query.Token_BETWEEN: true, pg_query.Token_IN_P: true, pg_query.Token_AT: true, pg_query.Token_CASE: true,
		pg_query.Token_OVERLAPS: true, pg_query.Token_ESCAPE: true, pg_query.Token_UNION: true, pg_query.Token_INTERSECT: true,
		pg_query.Token_EXCEPT: true, pg_query.Token_JOIN: true, pg_query.Token_OPERATOR: true, pg_query.Token_UESCAPE: true,
	}
}}

// checkShape refuses a text whose parse tree could be deep enough to
// crash the parser, given the text's tokens; sql is the query as sent, for
// positions.
func checkShape(sql string, scan *pg_query.ScanResult) error {
	depth, nesting := 0, 0
	for _, tok := range scan.Tokens {
		switch t := tok.Token; {
		case t == pg_query.Token_ASCII_40 || t == pg_query.Token_ASCII_91: // ( [
			if depth++; depth > MaxNesting {
				return refuse("too_deep", charPos(sql, int(tok.Start)),
					fmt.Sprintf("the query nests more than %d brackets deep", MaxNesting),
					"Flatten the query: use WITH for intermediate results instead of nesting.")
			}
		case t == pg_query.Token_ASCII_41 || t == pg_query.Token_ASCII_93: // ) ]
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

func nestingToken(t pg_query.Token) bool {
	switch t {
	case pg_query.Token_ASCII_37, pg_query.Token_ASCII_42, pg_query.Token_ASCII_43, pg_query.Token_ASCII_45,
		pg_query.Token_ASCII_47, pg_query.Token_ASCII_60, pg_query.Token_ASCII_61, pg_query.Token_ASCII_62,
		pg_query.Token_ASCII_94, pg_query.Token_Op, pg_query.Token_TYPECAST, pg_query.Token_LESS_EQUALS,
		pg_query.Token_GREATER_EQUALS, pg_query.Token_NOT_EQUALS:
		return true
	}
	return nestingKeywords.Get()[t]
}

// sameReading refuses SQLite text that PostgreSQL's scanner reads
// differently from SQLite (a nested comment, an E” string, a dollar
// quote): the validator's parse would then judge another query than the
// one SQLite runs. It compares where each reads a word to begin; text is
// sql as the PostgreSQL parser reads it (backticks turned into quotes).
func sameReading(sql, text string, scan *pg_query.ScanResult) error {
	var pg []int
	for _, tok := range scan.Tokens {
		start := int(tok.Start)
		if start >= len(text) {
			continue
		}
		if tok.Token == pg_query.Token_IDENT && text[start] != '"' || tok.KeywordKind != pg_query.KeywordKind_NO_KEYWORD {
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
