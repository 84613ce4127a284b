package sqlguard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/okf-tools/okf/internal/pgast"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/okf-tools/okf/internal/lazy"
)

// Dialect is the SQL dialect of the database behind a validator.
type Dialect int

// The dialects. DuckDB's SQL is PostgreSQL's in shape: the validator reads
// it with PostgreSQL's parser, with DuckDB's function allowlist and the
// refusals of duckdb.go, and refuses what that parser cannot read.
const (
	DialectPostgres Dialect = iota
	DialectSQLite
	DialectDuckDB
)

// String names the dialect as its database does.
func (d Dialect) String() string {
	switch d {
	case DialectSQLite:
		return "SQLite"
	case DialectDuckDB:
		return "DuckDB"
	}
	return "PostgreSQL"
}

// Validator checks SQL text before it reaches a database. It is safe for
// concurrent use.
type Validator struct {
	dialect       Dialect
	maxBytes      int
	schemas       []string             // lower case
	tables        map[string]bool      // allowlist, lower case "table" and "schema.table"
	deniedColumns map[string][]string  // column → the tables it is denied in ("" for every table)
	maskedColumns map[string][]string  // column → the tables it is masked in ("" for every table)
	rowFilters    map[string]rowFilter // lower-case table → its filter (rowfilter.go)
	allow         allowList
	catalog       *Catalog // nil when the database's tables are not known
	// viewFiles: a DuckDB view's plan may scan files, which the engine
	// confines to Options.AllowedDirectories.
	viewFiles bool
}

// NewValidator builds the validator for a database whose tables and
// columns cat lists. With a nil catalog, column references are checked by
// name only and forms that need the columns of a table with hidden
// columns (an alias column list, attribute notation) are refused.
func NewValidator(d Dialect, opts Options, cat *Catalog) (*Validator, error) {
	opts = opts.withDefaults()
	v := &Validator{dialect: d, maxBytes: opts.MaxSQLBytes, tables: map[string]bool{}, deniedColumns: map[string][]string{}, maskedColumns: map[string][]string{}, catalog: cat,
		viewFiles: d == DialectDuckDB && len(opts.AllowedDirectories) > 0}
	var err error
	if v.allow, err = newAllowList(d, opts.AllowFunctions); err != nil {
		return nil, err
	}
	for _, s := range opts.Schemas {
		v.schemas = append(v.schemas, strings.ToLower(s))
	}
	if len(v.schemas) == 0 {
		v.schemas = []string{"public"}
		if d == DialectSQLite || d == DialectDuckDB {
			v.schemas = []string{"main"}
		}
	}
	for _, t := range opts.Tables {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || strings.Count(t, ".") > 1 {
			return nil, fmt.Errorf("allowed table %q: want \"table\" or \"schema.table\"", t)
		}
		v.tables[t] = true
	}
	for _, list := range []struct {
		what  string
		names []string
		into  map[string][]string
	}{{"denied", opts.DeniedColumns, v.deniedColumns}, {"masked", opts.MaskedColumns, v.maskedColumns}} {
		for _, c := range list.names {
			c = strings.ToLower(strings.TrimSpace(c))
			parts := strings.Split(c, ".")
			if c == "" || len(parts) > 3 || slices.Contains(parts, "") {
				return nil, fmt.Errorf("%s column %q: want \"column\" or \"table.column\"", list.what, c)
			}
			col := parts[len(parts)-1]
			table := ""
			if len(parts) > 1 {
				table = parts[len(parts)-2]
			}
			list.into[col] = append(list.into[col], table)
		}
	}
	// Checked last: the filters are read by the validator as it now is.
	if err := v.newRowFilters(opts.RowFilters); err != nil {
		return nil, err
	}
	return v, nil
}

// Validate returns nil if sql may run, else an *Error saying what was
// refused and where.
func (v *Validator) Validate(sql string) error {
	_, err := v.check(sql)
	return err
}

// checked is what validating a query found: the columns of its result,
// each marked when its values derive from a masked column, and the
// references to filtered tables to rewrite.
type checked struct {
	cols        []column
	edits       []edit
	readsMasked bool
}

// check validates sql and says what it found.
func (v *Validator) check(sql string) (checked, error) {
	if len(sql) > v.maxBytes {
		return checked{}, refuse("too_long", 0, fmt.Sprintf("the SQL is %d bytes long; the limit is %d", len(sql), v.maxBytes),
			"Write a shorter query: select only the columns you need and avoid long literal lists.")
	}
	if !utf8.ValidString(sql) {
		return checked{}, refuse("invalid_utf8", firstInvalidUTF8(sql), "the SQL is not valid UTF-8", "")
	}
	if i := strings.IndexByte(sql, 0); i >= 0 {
		return checked{}, refuse("nul_byte", utf8.RuneCountInString(sql[:i])+1, "the SQL contains a NUL character", "")
	}
	if strings.TrimSpace(sql) == "" {
		return checked{}, refuse("empty", 0, "the SQL is empty", "Send one SELECT statement.")
	}
	if err := checkOperatorRuns(sql); err != nil {
		return checked{}, err
	}
	text := sql
	if v.dialect == DialectSQLite {
		if at, ok := nestedComment(sql); ok {
			return checked{}, refuse("parser_differential", charPos(sql, at),
				"a comment inside a comment: PostgreSQL's parser and SQLite read the rest of the text differently",
				"Write plain SQL: one level of /* */ comments.")
		}
		text = backticksToQuotes(sql)
	}
	scan, err := pgast.Scan(text)
	if err == nil {
		err = checkShape(sql, scan)
	}
	if ge, ok := AsError(err); ok && ge.Refused {
		return checked{}, err
	}
	var tree *pgast.ParseResult
	if err == nil {
		if v.dialect == DialectSQLite {
			text = numberedParameters(text, scan)
		}
		tree, err = pgast.Parse(text)
	}
	if err != nil {
		if v.dialect == DialectSQLite {
			// SQLite-only syntax: the SQLite layers are the boundary, and a
			// coarse lexical check still refuses the plain attacks.
			if len(v.maskedColumns) > 0 {
				return checked{}, refuse("masked_column", 0, "this SQLite-only syntax cannot be checked for the masked columns it would show",
					"Write the query in SQL that PostgreSQL's parser reads too.")
			}
			return checked{}, v.lexicalCheck(sql)
		}
		if _, ok := AsError(err); ok {
			return checked{}, err
		}
		if v.dialect == DialectDuckDB {
			// DuckDB-only syntax (FROM first, * EXCLUDE, COLUMNS, QUALIFY,
			// list and struct literals, PIVOT, SUMMARIZE) cannot be
			// resolved against the catalog: it is refused, not guessed.
			return checked{}, duckdbParseError(err)
		}
		return checked{}, parseError(err)
	}
	if v.dialect == DialectSQLite {
		if err := sameReading(sql, text, scan); err != nil {
			return checked{}, err
		}
	}
	if len(tree.Stmts) == 0 {
		return checked{}, refuse("empty", 0, "the SQL holds only comments", "Send one SELECT statement.")
	}
	if len(tree.Stmts) > 1 {
		var kinds []string
		for _, st := range tree.Stmts {
			kinds = append(kinds, nodeName(st.Stmt))
		}
		return checked{}, refuse("one_statement", charPos(sql, skipBlank(sql, int(tree.Stmts[1].StmtLocation))),
			fmt.Sprintf("found %d statements (%s); send exactly one", len(tree.Stmts), strings.Join(kinds, ", ")),
			"Remove the semicolon and everything after it, or run the statements one at a time.")
	}
	raw := tree.Stmts[0]
	if raw.Stmt.GetSelectStmt() == nil {
		return checked{}, refuse("statement_kind", charPos(sql, skipBlank(sql, int(raw.StmtLocation))),
			fmt.Sprintf("%s is not allowed; only SELECT, VALUES and WITH queries may run", nodeName(raw.Stmt)),
			"The database is read-only for you: write a SELECT.")
	}
	w := &walker{v: v, sql: sql}
	cols, _ := w.query(raw.Stmt.GetSelectStmt(), nil)
	if w.err != nil {
		return checked{}, w.err
	}
	return checked{cols: cols, edits: w.edits, readsMasked: w.readsMasked}, nil
}

func refuse(code string, pos int, msg, hint string) *Error {
	return &Error{Layer: LayerValidator, Refused: true, Code: code, Message: msg, Hint: hint, Position: pos}
}

func parseError(err error) error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &Error{Layer: LayerValidator, Code: "syntax_error", Message: pe.Message, Position: pe.Cursorpos}
	}
	return &Error{Layer: LayerValidator, Code: "syntax_error", Message: err.Error()}
}

// statementNames spells the parse tree's statements as SQL where the
// node name does not.
var statementNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"VariableSetStmt": "SET/RESET", "VariableShowStmt": "SHOW", "TransactionStmt": "a transaction command",
		"CreateStmt": "CREATE TABLE", "IndexStmt": "CREATE INDEX", "ViewStmt": "CREATE VIEW", "DoStmt": "DO",
		"CreateFunctionStmt": "CREATE FUNCTION", "CreateTrigStmt": "CREATE TRIGGER", "RuleStmt": "CREATE RULE",
		"CreateTableAsStmt": "CREATE TABLE AS", "CreatedbStmt": "CREATE DATABASE", "DropdbStmt": "DROP DATABASE",
		"ExecuteStmt": "EXECUTE", "PrepareStmt": "PREPARE", "DeallocateStmt": "DEALLOCATE", "LockStmt": "LOCK",
	}
}}

// statementName turns a statement node's name such as InsertStmt into
// "INSERT".
func statementName(name string) string {
	if n, ok := statementNames.Get()[name]; ok {
		return n
	}
	var b strings.Builder
	for i, r := range strings.TrimSuffix(name, "Stmt") {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// nodeName names the statement inside a Node.
func nodeName(n *pgast.Node) string {
	return statementName(protoMessage(n).PgName())
}

// skipBlank moves offset past white space and comments, to where a
// statement's first word is.
func skipBlank(sql string, offset int) int {
	for offset < len(sql) {
		rest := sql[offset:]
		switch {
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n':
			offset++
		case strings.HasPrefix(rest, "--"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				return len(sql)
			}
			offset += end + 1
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest, "*/")
			if end < 0 {
				return len(sql)
			}
			offset += end + 2
		default:
			return offset
		}
	}
	return offset
}

// charPos converts a byte offset in sql into a 1-based character position.
func charPos(sql string, offset int) int {
	if offset < 0 || offset > len(sql) {
		return 0
	}
	return utf8.RuneCountInString(sql[:offset]) + 1
}

func firstInvalidUTF8(s string) int {
	pos := 1
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return pos
			}
		}
		pos++
	}
	return 0
}

// lockingClause finds FOR UPDATE and its kin, since the tree gives them no
// position.
var lockingClause = lazy.Regexp{Expr: `(?i)\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b`}

func (v *Validator) allowedList() string {
	names := make([]string, 0, len(v.tables))
	for t := range v.tables {
		names = append(names, t)
	}
	slices.Sort(names)
	if len(names) > 30 {
		names = append(names[:30], "…")
	}
	return strings.Join(names, ", ")
}

// masks reports whether the options mask column col of table.
func (v *Validator) masks(table, col string) bool {
	tables, ok := v.maskedColumns[strings.ToLower(col)]
	return ok && (slices.Contains(tables, "") || slices.Contains(tables, strings.ToLower(table)))
}

// hidden reports whether the options hide column col of table.
func (v *Validator) hidden(table, col string) bool {
	tables, ok := v.deniedColumns[strings.ToLower(col)]
	return ok && (slices.Contains(tables, "") || slices.Contains(tables, strings.ToLower(table)))
}

// numberedParameters reads SQLite's ? parameters as the number 0, one
// byte for one, so that PostgreSQL's parser reads the query and every
// offset in its tree is the offset in the SQL: a parameter is a value
// wherever it stands.
func numberedParameters(text string, scan *pgast.ScanResult) string {
	var b []byte
	for _, tok := range scan.Tokens {
		if start := int(tok.Start); int(tok.End) == start+1 && start < len(text) && text[start] == '?' {
			if b == nil {
				b = []byte(text)
			}
			b[start] = '0'
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}
