package sqlguard

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Dialect is the SQL dialect of the database behind a validator.
type Dialect int

// The dialects.
const (
	DialectPostgres Dialect = iota
	DialectSQLite
)

// MaxSleepSeconds is the longest pg_sleep the validator lets through; longer
// sleeps only hold a connection.
const MaxSleepSeconds = 1.0

// Validator checks SQL text before it reaches a database. It is safe for
// concurrent use.
type Validator struct {
	dialect       Dialect
	maxBytes      int
	schemas       []string            // lower case
	tables        map[string]bool     // allowlist, lower case "table" and "schema.table"
	deniedColumns map[string][]string // column → the tables it is denied in ("" for every table)
}

// NewValidator builds the validator for a database.
func NewValidator(d Dialect, opts Options) (*Validator, error) {
	opts = opts.withDefaults()
	v := &Validator{dialect: d, maxBytes: opts.MaxSQLBytes, tables: map[string]bool{}, deniedColumns: map[string][]string{}}
	for _, s := range opts.Schemas {
		v.schemas = append(v.schemas, strings.ToLower(s))
	}
	if len(v.schemas) == 0 {
		v.schemas = []string{"public"}
		if d == DialectSQLite {
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
	for _, c := range opts.DeniedColumns {
		c = strings.ToLower(strings.TrimSpace(c))
		parts := strings.Split(c, ".")
		if c == "" || len(parts) > 3 || slices.Contains(parts, "") {
			return nil, fmt.Errorf("denied column %q: want \"column\" or \"table.column\"", c)
		}
		col := parts[len(parts)-1]
		table := ""
		if len(parts) > 1 {
			table = parts[len(parts)-2]
		}
		v.deniedColumns[col] = append(v.deniedColumns[col], table)
	}
	return v, nil
}

// Validate returns nil if sql may run, else an *Error saying what was
// refused and where.
func (v *Validator) Validate(sql string) error {
	if len(sql) > v.maxBytes {
		return refuse("too_long", 0, fmt.Sprintf("the SQL is %d bytes long; the limit is %d", len(sql), v.maxBytes),
			"Write a shorter query: select only the columns you need and avoid long literal lists.")
	}
	if !utf8.ValidString(sql) {
		return refuse("invalid_utf8", firstInvalidUTF8(sql), "the SQL is not valid UTF-8", "")
	}
	if i := strings.IndexByte(sql, 0); i >= 0 {
		return refuse("nul_byte", utf8.RuneCountInString(sql[:i])+1, "the SQL contains a NUL character", "")
	}
	if strings.TrimSpace(sql) == "" {
		return refuse("empty", 0, "the SQL is empty", "Send one SELECT statement.")
	}
	text := sql
	if v.dialect == DialectSQLite {
		text = backticksToQuotes(sql)
	}
	tree, err := pg_query.Parse(text)
	if err != nil {
		if v.dialect == DialectSQLite {
			// SQLite-only syntax: the SQLite layers are the boundary, and a
			// coarse lexical check still refuses the plain attacks.
			return v.lexicalCheck(sql)
		}
		return parseError(err)
	}
	if len(tree.Stmts) == 0 {
		return refuse("empty", 0, "the SQL holds only comments", "Send one SELECT statement.")
	}
	if len(tree.Stmts) > 1 {
		var kinds []string
		for _, st := range tree.Stmts {
			kinds = append(kinds, nodeName(st.Stmt))
		}
		return refuse("one_statement", charPos(sql, skipBlank(sql, int(tree.Stmts[1].StmtLocation))),
			fmt.Sprintf("found %d statements (%s); send exactly one", len(tree.Stmts), strings.Join(kinds, ", ")),
			"Remove the semicolon and everything after it, or run the statements one at a time.")
	}
	raw := tree.Stmts[0]
	if raw.Stmt.GetSelectStmt() == nil {
		return refuse("statement_kind", charPos(sql, skipBlank(sql, int(raw.StmtLocation))),
			fmt.Sprintf("%s is not allowed; only SELECT, VALUES and WITH queries may run", nodeName(raw.Stmt)),
			"The database is read-only for you: write a SELECT.")
	}
	w := &walker{v: v, sql: sql}
	w.message(raw.Stmt.ProtoReflect())
	if w.err != nil {
		return w.err
	}
	return w.checkStars()
}

func refuse(code string, pos int, msg, hint string) *Error {
	return &Error{Layer: LayerValidator, Refused: true, Code: code, Message: msg, Hint: hint, Position: pos}
}

func parseError(err error) *Error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &Error{Layer: LayerValidator, Code: "syntax_error", Message: pe.Message, Position: pe.Cursorpos}
	}
	return &Error{Layer: LayerValidator, Code: "syntax_error", Message: err.Error()}
}

// statementNames spells the parse tree's statements as SQL where the
// node name does not.
var statementNames = map[string]string{
	"VariableSetStmt": "SET/RESET", "VariableShowStmt": "SHOW", "TransactionStmt": "a transaction command",
	"CreateStmt": "CREATE TABLE", "IndexStmt": "CREATE INDEX", "ViewStmt": "CREATE VIEW", "DoStmt": "DO",
	"CreateFunctionStmt": "CREATE FUNCTION", "CreateTrigStmt": "CREATE TRIGGER", "RuleStmt": "CREATE RULE",
	"CreateTableAsStmt": "CREATE TABLE AS", "CreatedbStmt": "CREATE DATABASE", "DropdbStmt": "DROP DATABASE",
	"ExecuteStmt": "EXECUTE", "PrepareStmt": "PREPARE", "DeallocateStmt": "DEALLOCATE", "LockStmt": "LOCK",
}

// statementName turns a statement node such as InsertStmt into "INSERT".
func statementName(d protoreflect.MessageDescriptor) string {
	name := string(d.Name())
	if n, ok := statementNames[name]; ok {
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
func nodeName(n *pg_query.Node) string {
	m := n.ProtoReflect()
	return statementName(m.WhichOneof(m.Descriptor().Oneofs().Get(0)).Message())
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

// walker visits every node of a parse tree and keeps the first refusal.
type walker struct {
	v      *Validator
	sql    string
	err    *Error
	ctes   [][]string // CTE names in scope, innermost last
	tables []string   // tables read, lower case
	stars  []int      // byte offsets of * and table.*
	rows   []rowRef   // single-name column references that may be whole rows
	alias  map[string]string
	// cteOffset is where the CTE being walked starts: nested statements
	// carry no position of their own.
	cteOffset int
}

type rowRef struct {
	name   string
	offset int
}

func (w *walker) fail(code string, offset int, msg, hint string) {
	if w.err == nil {
		w.err = refuse(code, charPos(w.sql, offset), msg, hint)
	}
}

func (w *walker) message(m protoreflect.Message) {
	if w.err != nil || !m.IsValid() {
		return
	}
	switch n := m.Interface().(type) {
	case *pg_query.SelectStmt:
		w.selectStmt(n)
		return
	case *pg_query.FuncCall:
		w.funcCall(n)
	case *pg_query.RangeVar:
		w.rangeVar(n)
	case *pg_query.ColumnRef:
		w.columnRef(n)
	}
	if w.err != nil {
		return
	}
	if strings.HasSuffix(string(m.Descriptor().Name()), "Stmt") {
		w.fail("statement_kind", w.cteOffset, fmt.Sprintf("a nested %s is not allowed; only SELECT may run, also inside WITH",
			statementName(m.Descriptor())), "Remove the data-changing part of the query.")
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		w.field(fd, val)
		return w.err == nil
	})
}

func (w *walker) field(fd protoreflect.FieldDescriptor, val protoreflect.Value) {
	if fd.Kind() != protoreflect.MessageKind {
		return
	}
	if fd.IsList() {
		l := val.List()
		for i := 0; i < l.Len() && w.err == nil; i++ {
			w.message(l.Get(i).Message())
		}
		return
	}
	if !fd.IsMap() {
		w.message(val.Message())
	}
}

// selectStmt walks a SELECT with its WITH clause's names in scope. In a
// plain WITH each CTE sees only the ones before it, so a CTE named like a
// table cannot hide a read of that table.
func (w *walker) selectStmt(s *pg_query.SelectStmt) {
	if s.IntoClause != nil {
		loc := int(s.IntoClause.GetRel().GetLocation())
		w.fail("select_into", loc, "SELECT INTO creates a table and is not allowed",
			"Drop the INTO clause; the result comes back to you anyway.")
		return
	}
	if len(s.LockingClause) > 0 {
		w.fail("locking", w.lockingOffset(), "locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed",
			"Drop the FOR UPDATE/FOR SHARE clause.")
		return
	}
	var names []string
	if wc := s.WithClause; wc != nil {
		for _, c := range wc.Ctes {
			cte := c.GetCommonTableExpr()
			if cte == nil {
				continue
			}
			if wc.Recursive {
				names = append(names, strings.ToLower(cte.Ctename))
			}
		}
		for _, c := range wc.Ctes {
			cte := c.GetCommonTableExpr()
			if cte == nil {
				continue
			}
			w.ctes = append(w.ctes, slices.Clone(names))
			w.cteOffset = int(cte.Location)
			w.message(cte.ProtoReflect())
			w.ctes = w.ctes[:len(w.ctes)-1]
			if !wc.Recursive {
				names = append(names, strings.ToLower(cte.Ctename))
			}
		}
	}
	w.ctes = append(w.ctes, names)
	m := s.ProtoReflect()
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		if fd.Name() != "with_clause" {
			w.field(fd, val)
		}
		return w.err == nil
	})
	w.ctes = w.ctes[:len(w.ctes)-1]
}

// lockingClause finds FOR UPDATE and its kin, since the tree gives them no
// position.
var lockingClause = regexp.MustCompile(`(?i)\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b`)

func (w *walker) lockingOffset() int {
	if loc := lockingClause.FindAllStringIndex(w.sql, -1); len(loc) > 0 {
		return loc[len(loc)-1][0]
	}
	return -1
}

func (w *walker) inCTE(name string) bool {
	for _, scope := range w.ctes {
		if slices.Contains(scope, name) {
			return true
		}
	}
	return false
}

func (w *walker) rangeVar(r *pg_query.RangeVar) {
	loc := int(r.Location)
	schema, rel := strings.ToLower(r.Schemaname), strings.ToLower(r.Relname)
	if r.Alias != nil {
		if w.alias == nil {
			w.alias = map[string]string{}
		}
		w.alias[strings.ToLower(r.Alias.Aliasname)] = rel
	}
	if r.Catalogname != "" {
		w.fail("schema", loc, fmt.Sprintf("%s.%s.%s names another database", r.Catalogname, r.Schemaname, r.Relname),
			"Name tables as table or schema.table.")
		return
	}
	if schema == "" && w.inCTE(rel) {
		return
	}
	if schema != "" && !slices.Contains(w.v.schemas, schema) {
		w.fail("schema", loc, fmt.Sprintf("schema %s is not readable; allowed: %s", r.Schemaname, strings.Join(w.v.schemas, ", ")),
			"System catalogs are hidden; the tables you may read are in the documentation.")
		return
	}
	qualified := rel
	if schema != "" {
		qualified = schema + "." + rel
	}
	if len(w.v.tables) > 0 {
		// An unqualified name resolves to the first schema.
		if !w.v.tables[rel] && !w.v.tables[qualified] && !(schema == "" && w.v.tables[w.v.schemas[0]+"."+rel]) {
			w.fail("table", loc, fmt.Sprintf("table %s is not one you may read", r.Relname), "Allowed tables: "+w.v.allowedList()+".")
			return
		}
	} else if strings.HasPrefix(rel, "pg_") || strings.HasPrefix(rel, "sqlite_") {
		w.fail("catalog", loc, fmt.Sprintf("system catalog %s is not readable", r.Relname),
			"The tables you may read are in the documentation.")
		return
	}
	w.tables = append(w.tables, rel)
}

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

func (w *walker) columnRef(c *pg_query.ColumnRef) {
	loc := int(c.Location)
	var names []string
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			w.stars = append(w.stars, loc)
			return
		}
		names = append(names, strings.ToLower(f.GetString_().GetSval()))
	}
	if len(names) == 0 {
		return
	}
	col := names[len(names)-1]
	if tables, ok := w.v.deniedColumns[col]; ok {
		where := "every table"
		if !slices.Contains(tables, "") {
			where = strings.Join(tables, ", ")
		}
		w.fail("denied_column", loc, fmt.Sprintf("column %s is hidden (in %s)", col, where),
			"Leave the column out; it is not available to you.")
		return
	}
	if len(names) == 1 {
		w.rows = append(w.rows, rowRef{name: col, offset: loc})
	}
}

// checkStars refuses * and whole-row references when a table read has
// denied columns, since they would carry those columns out.
func (w *walker) checkStars() error {
	hidden := w.hiddenTables()
	if len(hidden) == 0 {
		return nil
	}
	if len(w.stars) > 0 {
		w.fail("denied_column", w.stars[0], fmt.Sprintf("* would include hidden columns of %s", strings.Join(hidden, ", ")),
			"List the columns you need instead of *.")
		return w.err
	}
	for _, r := range w.rows {
		table := r.name
		if t, ok := w.alias[r.name]; ok {
			table = t
		}
		if slices.Contains(hidden, table) {
			w.fail("denied_column", r.offset, fmt.Sprintf("the whole row of %s would include its hidden columns", table),
				"Name the columns you need.")
			return w.err
		}
	}
	return nil
}

func (w *walker) hiddenTables() []string {
	var out []string
	for _, tables := range w.v.deniedColumns {
		for _, t := range tables {
			if t == "" {
				return w.tables // a column hidden everywhere taints every table read
			}
			if slices.Contains(w.tables, t) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Functions refused by name: server files, large objects, other
// connections, signals, settings, anything that writes or runs SQL text.
var deniedFunctions = map[string]string{
	"set_config": "changes settings", "pg_sleep_for": "sleeps", "pg_sleep_until": "sleeps",
	"pg_stat_file": "reads server files", "pg_current_logfile": "reads server files",
	"pg_terminate_backend": "signals other sessions", "pg_cancel_backend": "signals other sessions",
	"pg_signal_backend": "signals other sessions", "pg_reload_conf": "signals the server",
	"pg_rotate_logfile": "signals the server", "pg_promote": "changes the server",
	"pg_log_backend_memory_contexts": "signals other sessions",
	"nextval":                        "writes sequences", "setval": "writes sequences", "pg_notify": "sends notifications",
	"pg_export_snapshot": "exports snapshots", "pg_import_system_collations": "writes catalogs",
	"query_to_xml": "runs SQL text", "query_to_xmlschema": "runs SQL text", "query_to_xml_and_xmlschema": "runs SQL text",
	"cursor_to_xml": "reads cursors", "cursor_to_xmlschema": "reads cursors",
	"table_to_xml": "reads whole tables", "table_to_xmlschema": "reads whole tables", "table_to_xml_and_xmlschema": "reads whole tables",
	"schema_to_xml": "reads whole schemas", "schema_to_xmlschema": "reads whole schemas", "schema_to_xml_and_xmlschema": "reads whole schemas",
	"database_to_xml": "reads the whole database", "database_to_xmlschema": "reads the whole database",
	"database_to_xml_and_xmlschema": "reads the whole database", "ts_stat": "runs SQL text",
	"txid_current": "writes a transaction id", "pg_current_xact_id": "writes a transaction id",
	"pg_switch_wal": "changes the server", "pg_create_restore_point": "changes the server",
	"pg_backup_start": "changes the server", "pg_backup_stop": "changes the server",
	"loread": "reads large objects", "lowrite": "writes large objects",
	"load_extension": "loads code", "readfile": "reads files", "writefile": "writes files",
	"edit": "runs an editor", "fts3_tokenizer": "loads code",
}

var deniedFunctionPrefixes = []struct{ prefix, why string }{
	{"pg_read_", "reads server files"}, {"pg_ls_", "lists server files"}, {"pg_file_", "writes server files"},
	{"lo_", "touches large objects and server files"}, {"dblink", "connects to other databases"},
	{"pg_advisory", "takes advisory locks"}, {"pg_try_advisory", "takes advisory locks"},
	{"pg_stat_reset", "resets statistics"}, {"pg_create_", "changes the server"}, {"pg_drop_", "changes the server"},
	{"pg_replication_", "changes replication"}, {"pg_logical_", "changes replication"}, {"pg_copy_", "changes replication"},
	{"pg_wal_replay_", "changes the server"}, {"pragma_", "reads SQLite internals"},
}

// deniedFunction says why a function is refused, or "" if it is not.
func deniedFunction(name string) string {
	if why, ok := deniedFunctions[name]; ok {
		return why
	}
	for _, p := range deniedFunctionPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.why
		}
	}
	return ""
}

func (w *walker) funcCall(f *pg_query.FuncCall) {
	if len(f.Funcname) == 0 {
		return
	}
	name := strings.ToLower(f.Funcname[len(f.Funcname)-1].GetString_().GetSval())
	loc := int(f.Location)
	if why := deniedFunction(name); why != "" {
		w.fail("function", loc, fmt.Sprintf("function %s is not allowed: it %s", name, why),
			"Use ordinary SQL functions and operators only.")
		return
	}
	if name == "pg_sleep" {
		secs, ok := constantNumber(f.Args)
		if !ok || secs > MaxSleepSeconds {
			w.fail("function", loc, fmt.Sprintf("pg_sleep is allowed only with a constant of at most %g seconds", MaxSleepSeconds),
				"Queries need no sleeping; remove pg_sleep.")
		}
	}
}

func constantNumber(args []*pg_query.Node) (float64, bool) {
	if len(args) != 1 {
		return 0, false
	}
	c := args[0].GetAConst()
	if c == nil {
		return 0, false
	}
	switch {
	case c.GetIval() != nil:
		return float64(c.GetIval().Ival), true
	case c.GetFval() != nil:
		f, err := strconv.ParseFloat(c.GetFval().Fval, 64)
		return f, err == nil
	}
	return 0, false
}
