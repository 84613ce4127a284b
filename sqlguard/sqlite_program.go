package sqlguard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/lazy"
)

// The program check is SQLite's second layer for hidden columns and
// unreadable tables, after the authorizer: SQLite compiles the query, and
// the guard reads the compiled program (EXPLAIN) before running it. Every
// value a query can take from a table passes through an instruction that
// opens the table or one of its indexes by root page and reads or compares
// a column of it, so the check sees what the authorizer does not: the
// columns a NATURAL JOIN or USING compares, index seeks, rowids.

// sqliteTree is one b-tree of the file: a table's rows or an index.
type sqliteTree struct {
	table string // lower case
	// cols maps a record position to the table's column number: -1 is
	// the rowid, -2 an expression.
	cols []int
	// keys is how many leading positions an index compares on; 0 for a
	// table keyed by rowid.
	keys int
	// exprSQL is the lower-case text of an index on expressions.
	exprSQL string
}

// sqliteSchema is what the guard reads of the file when it opens it.
type sqliteSchema struct {
	catalog *Catalog
	trees   map[int64]*sqliteTree // by root page
	columns map[string][]string   // table → column names by number, lower case
	ipk     map[string]int        // table → column number of its INTEGER PRIMARY KEY
}

// loadSQLiteSchema reads the tables, views and indexes of the open file c.
func loadSQLiteSchema(c *sqlite3.Conn) (*sqliteSchema, error) {
	r := &schemaReader{c: c, stmts: map[string]*sqlite3.Stmt{}}
	defer r.close()
	s := &sqliteSchema{
		catalog: &Catalog{Tables: map[string][]string{}, Rowid: map[string]string{}},
		trees:   map[int64]*sqliteTree{},
		columns: map[string][]string{},
		ipk:     map[string]int{},
	}
	type entry struct {
		kind, name, table string
		root              int64
		sql               string
	}
	var entries []entry
	err := r.each(`SELECT type, name, tbl_name, rootpage, coalesce(sql, '') FROM sqlite_schema
		WHERE type IN ('table', 'view', 'index') ORDER BY type DESC, name`, nil, func(st *sqlite3.Stmt) {
		entries = append(entries, entry{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), st.ColumnInt64(3), st.ColumnText(4)})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	withoutRowid := map[string]bool{}
	if err := r.each(`SELECT name, wr FROM pragma_table_list WHERE schema = 'main'`, nil, func(st *sqlite3.Stmt) {
		withoutRowid[strings.ToLower(st.ColumnText(0))] = st.ColumnInt(1) == 1
	}); err != nil {
		return nil, fmt.Errorf("reading the table list: %w", err)
	}
	for _, e := range entries {
		name := strings.ToLower(e.name)
		if e.kind == "index" || strings.HasPrefix(name, "sqlite_") && e.kind != "table" {
			continue
		}
		var cols []string
		var types []string
		var pks []int
		virtual := map[int]bool{}
		err := r.each(`SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid`, []any{e.name}, func(st *sqlite3.Stmt) {
			i := len(cols)
			cols = append(cols, strings.ToLower(st.ColumnText(0)))
			types = append(types, strings.ToUpper(st.ColumnText(1)))
			if st.ColumnInt(2) > 0 {
				pks = append(pks, i)
			}
			if st.ColumnInt(3) == 2 {
				virtual[i] = true
			}
		})
		if err != nil {
			return nil, fmt.Errorf("reading the columns of %s: %w", e.name, err)
		}
		s.columns[name] = cols
		if !strings.HasPrefix(name, "sqlite_") {
			s.catalog.Tables["main."+name] = cols
		}
		if e.kind != "table" {
			continue
		}
		tree := &sqliteTree{table: name}
		switch {
		case withoutRowid[name]:
			if err := s.indexLayout(r, tree, pkIndexName(r, e.name)); err != nil {
				return nil, err
			}
		default:
			ipk := -1
			if len(pks) == 1 && types[pks[0]] == "INTEGER" {
				ipk = pks[0]
			}
			s.ipk[name] = ipk
			if !strings.HasPrefix(name, "sqlite_") {
				s.catalog.Rowid["main."+name] = ""
				if ipk >= 0 {
					s.catalog.Rowid["main."+name] = cols[ipk]
				}
			}
			for i := range cols {
				if !virtual[i] {
					tree.cols = append(tree.cols, i)
				}
			}
		}
		s.trees[e.root] = tree
	}
	for _, e := range entries {
		if e.kind != "index" || e.root == 0 {
			continue
		}
		tree := &sqliteTree{table: strings.ToLower(e.table)}
		if err := s.indexLayout(r, tree, e.name); err != nil {
			return nil, err
		}
		if tree.hasExpression() {
			tree.exprSQL = strings.ToLower(e.sql)
		}
		s.trees[e.root] = tree
	}
	return s, nil
}

func (t *sqliteTree) hasExpression() bool {
	for _, c := range t.cols {
		if c == -2 {
			return true
		}
	}
	return false
}

// indexLayout reads the record layout of index name into t.
func (s *sqliteSchema) indexLayout(r *schemaReader, t *sqliteTree, name string) error {
	err := r.each(`SELECT cid, key FROM pragma_index_xinfo(?) ORDER BY seqno`, []any{name}, func(st *sqlite3.Stmt) {
		t.cols = append(t.cols, st.ColumnInt(0))
		if st.ColumnInt(1) == 1 {
			t.keys++
		}
	})
	if err != nil {
		return fmt.Errorf("reading index %s: %w", name, err)
	}
	return nil
}

// pkIndexName names the index that holds a WITHOUT ROWID table's rows.
func pkIndexName(r *schemaReader, table string) string {
	name := ""
	r.each(`SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'`, []any{table}, func(st *sqlite3.Stmt) {
		name = st.ColumnText(0)
	})
	return name
}

// each runs query with args and calls row for every row.
// schemaReader runs the schema's queries, each prepared once: a pragma
// per table and per index, prepared anew each time, was most of opening
// a database.
type schemaReader struct {
	c     *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
}

func (r *schemaReader) each(query string, args []any, row func(*sqlite3.Stmt)) error {
	st := r.stmts[query]
	if st == nil {
		var err error
		if st, _, err = r.c.Prepare(query); err != nil {
			return err
		}
		r.stmts[query] = st
	} else if err := errors.Join(st.Reset(), st.ClearBindings()); err != nil {
		return err
	}
	for i, a := range args {
		if err := st.BindText(i+1, fmt.Sprint(a)); err != nil {
			return err
		}
	}
	for st.Step() {
		row(st)
	}
	return st.Err()
}

func (r *schemaReader) close() {
	for _, st := range r.stmts {
		st.Close()
	}
}

// Opcodes that compare the leading key columns of an index with values
// (their P4 is how many).
var keyCompares = lazy.Set{Names: []string{"SeekGE", "SeekGT", "SeekLE", "SeekLT", "IdxGE", "IdxGT", "IdxLE", "IdxLT",
	"Found", "NotFound", "NoConflict", "IfNoHope"}}

// Opcodes that change the file or its schema.
var writeOps = lazy.Set{Names: []string{"OpenWrite", "Clear", "Destroy", "CreateBtree", "SetCookie", "ParseSchema", "Vacuum", "VUpdate",
	"DropTable", "DropIndex", "DropTrigger", "IntegrityCk"}}

// Opcodes that read a rowid from a cursor or look one up.
var rowidReads = lazy.Set{Names: []string{"Rowid", "IdxRowid", "SeekRowid", "NotExists", "DeferredSeek"}}

// checkProgram compiles sql (one statement, already prepared once) with
// EXPLAIN and refuses it if its program opens a b-tree of a table the query
// may not read, or reads or compares a hidden column.
func (s *SQLite) checkProgram(c *sqlite3.Conn, sql string) error {
	st, _, err := c.Prepare("EXPLAIN " + sql)
	if err != nil {
		return err
	}
	defer st.Close()
	cursors := map[int64]*sqliteTree{}
	for st.Step() {
		op, p1, p2, p3 := st.ColumnText(1), st.ColumnInt64(2), st.ColumnInt64(3), st.ColumnInt64(4)
		switch {
		case op == "OpenRead" || op == "ReopenIdx":
			t := s.schema.trees[p2]
			switch {
			case p3 != 0:
				return programRefusal("the query opens a table of another database")
			case t == nil:
				return programRefusal(fmt.Sprintf("the query reads b-tree %d, which is no table okf may read", p2))
			case !s.tables[t.table]:
				return programRefusal(fmt.Sprintf("the query reads table %s, which is not readable", t.table))
			}
			cursors[p1] = t
		case writeOps.Has(op) || op == "Transaction" && p2 != 0:
			return programRefusal("the query would write to the database")
		case op == "Column":
			if t := cursors[p1]; t != nil {
				why := s.hiddenAt(t, int(p2))
				if why == "" {
					why = s.hiddenOrder(t)
				}
				if why != "" {
					return programRefusal(why)
				}
			}
		case rowidReads.Has(op):
			if t := cursors[p1]; t != nil {
				why := s.hiddenColumn(t.table, -1)
				if why == "" {
					why = s.hiddenOrder(t)
				}
				if why != "" {
					return programRefusal(why)
				}
			}
		case keyCompares.Has(op):
			t := cursors[p1]
			if t == nil {
				continue
			}
			if t.keys == 0 {
				// A table keyed by rowid compares rowids.
				if why := s.hiddenColumn(t.table, -1); why != "" {
					return programRefusal(why)
				}
				continue
			}
			n, _ := strconv.Atoi(st.ColumnText(5))
			if n <= 0 || n > t.keys {
				n = max(t.keys, 1)
			}
			for i := 0; i < n && i < len(t.cols); i++ {
				if why := s.hiddenAt(t, i); why != "" {
					return programRefusal(why)
				}
			}
		}
	}
	return st.Err()
}

// hiddenOrder says why reading anything through tree t leaks a hidden
// column, or "": an index whose first key is hidden hands out its rows in
// the order of that column.
func (s *SQLite) hiddenOrder(t *sqliteTree) string {
	if t.keys == 0 || len(t.cols) == 0 {
		return ""
	}
	if why := s.hiddenAt(t, 0); why != "" {
		return why + " (through the order of an index on it)"
	}
	return ""
}

// hiddenAt says why reading record position pos of tree t reads a hidden
// column, or "".
func (s *SQLite) hiddenAt(t *sqliteTree, pos int) string {
	if pos < 0 || pos >= len(t.cols) {
		return ""
	}
	cid := t.cols[pos]
	if cid == -2 {
		for _, col := range s.schema.columns[t.table] {
			if s.hidden(t.table, col) && strings.Contains(t.exprSQL, col) {
				return fmt.Sprintf("the query reads an index on an expression of hidden column %s.%s", t.table, col)
			}
		}
		return ""
	}
	return s.hiddenColumn(t.table, cid)
}

// hiddenColumn says why column cid (-1: the rowid) of table is hidden, or "".
func (s *SQLite) hiddenColumn(table string, cid int) string {
	if cid == -1 {
		cid = s.schema.ipk[table]
		if cid < 0 {
			return ""
		}
	}
	cols := s.schema.columns[table]
	if cid < 0 || cid >= len(cols) {
		return ""
	}
	if s.hidden(table, cols[cid]) {
		return fmt.Sprintf("the query reads hidden column %s.%s", table, cols[cid])
	}
	return ""
}

func programRefusal(msg string) *Error {
	return &Error{Layer: LayerProgram, Refused: true, Code: "program", Message: msg,
		Hint: "Leave hidden columns out, also from NATURAL JOIN and USING; name the columns you join on."}
}
