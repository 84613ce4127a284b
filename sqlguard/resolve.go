package sqlguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/pgast"

	"github.com/okf-tools/okf/internal/lazy"
)

// The resolver reads a query the way the database will: every FROM item
// becomes a relation with its columns, every column reference, star,
// whole-row reference, attribute-notation call, NATURAL JOIN and USING is
// resolved against the relations in scope. A query is refused when any way
// the database could read it touches a hidden column, so it mirrors the
// column privileges PostgreSQL checks (which count implicit reads) and
// errs towards refusing where a form is uncertain.

// column is one column of a relation.
type column struct {
	name   string
	hidden bool // denied by the options
	// masked is set when the column's values derive from a masked
	// column: a result shows Mask in its place.
	masked bool
	// certain is false for a name guessed from an expression; a NATURAL
	// JOIN next to a hidden column needs every name certain.
	certain bool
	// implicit marks a name a query may use that * does not show:
	// SQLite's rowid and its aliases.
	implicit bool
}

// relation is what a FROM item makes readable: a table, a view, a CTE, a
// subquery, a function's result or a join.
type relation struct {
	name     string // how the query refers to it; "" when it cannot be named
	table    string // the base table it reads; "" for derived relations
	loc      int    // byte offset in the SQL, -1 when unknown
	cols     []column
	complete bool        // cols lists every column
	members  []*relation // the two sides of a join
	using    []string    // a join's merged columns
	// lazy marks a join whose cols are not yet listed: long chains of
	// joins would otherwise copy their columns at every level.
	lazy bool
	// hidden lists the hidden columns reading the whole relation would
	// carry out, including those of a base table whose columns are unknown.
	hidden []string
	// masked lists its masked columns likewise.
	masked []string
}

// maxColumns bounds the columns kept for one relation: PostgreSQL allows
// 1,664 in a result, and a longer list only costs memory.
const maxColumns = 1664

func (r *relation) label() string {
	switch {
	case r.table != "":
		return r.table
	case r.name != "":
		return r.name
	}
	return "a join"
}

// finish computes r.hidden once its columns and members are set.
func (r *relation) finish() *relation {
	for _, c := range r.cols {
		if c.hidden && !slices.Contains(r.hidden, c.name) {
			r.hidden = append(r.hidden, c.name)
		}
		if c.masked && !slices.Contains(r.masked, c.name) {
			r.masked = append(r.masked, c.name)
		}
	}
	for _, m := range r.members {
		for _, h := range m.hidden {
			if !slices.Contains(r.hidden, h) {
				r.hidden = append(r.hidden, h)
			}
		}
		for _, h := range m.masked {
			if !slices.Contains(r.masked, h) {
				r.masked = append(r.masked, h)
			}
		}
	}
	if len(r.cols) > maxColumns {
		r.cols, r.complete = r.cols[:maxColumns], false
	}
	return r
}

// columns lists r's columns, computing a join's on first use: its merged
// columns, then the others of each side.
func (r *relation) columns() []column {
	if !r.lazy {
		return r.cols
	}
	r.lazy = false
	for _, name := range r.using {
		// A merged column is either side's value.
		masked := slices.ContainsFunc(r.members, func(m *relation) bool { return m.masks(name) })
		r.cols = append(r.cols, column{name: name, certain: true, masked: masked})
	}
	for _, side := range r.members {
		for _, c := range side.columns() {
			if len(r.cols) == maxColumns {
				r.complete = false
				return r.cols
			}
			if !slices.Contains(r.using, c.name) {
				r.cols = append(r.cols, c)
			}
		}
	}
	return r.cols
}

// hasColumn reports whether r has a column spelt name.
func (r *relation) hasColumn(name string) bool {
	for _, c := range r.columns() {
		if c.name == name {
			return true
		}
	}
	return false
}

// hides reports whether a reference to name in r may read a hidden
// column. Case is ignored: a near miss is refused rather than guessed.
func (r *relation) hides(name string) bool {
	for _, m := range r.members {
		if m.hides(name) {
			return true
		}
	}
	if !r.lazy {
		for _, c := range r.cols {
			if c.hidden && strings.EqualFold(c.name, name) {
				return true
			}
		}
	}
	if r.complete || r.members != nil {
		return false
	}
	for _, h := range r.hidden {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// mergesColumns reports whether r is, or joins, a join that merges
// columns.
func mergesColumns(r *relation) bool {
	return len(r.using) > 0 || slices.ContainsFunc(r.members, mergesColumns)
}

// masks reports whether a reference to name in r may read a masked
// column, as hides does for hidden ones.
func (r *relation) masks(name string) bool {
	for _, m := range r.members {
		if m.masks(name) {
			return true
		}
	}
	if !r.lazy {
		for _, c := range r.cols {
			if c.masked && strings.EqualFold(c.name, name) {
				return true
			}
		}
	}
	if r.complete || r.members != nil {
		return false
	}
	for _, h := range r.masked {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// rename applies an alias's column list, which renames columns in order.
func (r *relation) rename(names []string) {
	r.columns()
	for i, n := range names {
		if i < len(r.cols) {
			r.cols[i].name, r.cols[i].certain = n, true
		} else if !r.complete {
			r.cols = append(r.cols, column{name: n, certain: true})
		}
	}
}

// scope is one level of a query: the relations its FROM clause makes
// readable, and the enclosing level for correlated references.
type scope struct {
	parent *scope
	items  []*relation            // the FROM items, whose columns * expands to
	byName map[string][]*relation // relations by the name the query uses
	byCol  map[string][]*relation // relations by column name, lower case
	open   []*relation            // relations whose columns are not all known
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, byName: map[string][]*relation{}, byCol: map[string][]*relation{}}
}

func (s *scope) add(r *relation) {
	if r.name != "" {
		s.byName[r.name] = append(s.byName[r.name], r)
	}
	if r.members != nil {
		return // its members are in scope with their own columns
	}
	for _, c := range r.cols {
		k := strings.ToLower(c.name)
		if l := s.byCol[k]; len(l) == 0 || l[len(l)-1] != r {
			s.byCol[k] = append(l, r)
		}
	}
	if !r.complete {
		s.open = append(s.open, r)
	}
}

// cte is a WITH query in scope.
type cte struct {
	cols     []column
	complete bool
}

// walker resolves one statement and keeps the first refusal.
type walker struct {
	v    *Validator
	sql  string
	err  *Error
	ctes []map[string]*cte // WITH names in scope, innermost last
	// reads collects "table.column" for each base-table column a
	// reference resolves to; nil when nobody asks (ColumnsRead does).
	reads map[string]bool
	// edits are the references to filtered tables to rewrite
	// (rowfilter.go).
	edits []edit
	// readsMasked is set when the query reads a masked column anywhere,
	// shown or not (masking.go).
	readsMasked bool
	// taint, while an output column's expression is resolved, is set
	// when the expression reads a masked value (masking.go); nil
	// elsewhere, where a masked column may be read: filters, joins,
	// groupings, orderings, counts.
	taint *bool
}

// read records that the query reads column c of relation r, when r is a
// base table and the walker collects.
func (w *walker) read(r *relation, c string) {
	if w.reads != nil && r.table != "" && (!r.complete || r.hasColumn(c)) {
		w.reads[r.table+"."+c] = true
	}
}

func (w *walker) fail(code string, offset int, msg, hint string) {
	if w.err == nil {
		w.err = refuse(code, charPos(w.sql, offset), msg, hint)
	}
}

// fold is a name as the database compares it: SQLite and DuckDB ignore
// case, quoted or not.
func (w *walker) fold(name string) string {
	if w.v.dialect == DialectSQLite || w.v.dialect == DialectDuckDB {
		return strings.ToLower(name)
	}
	return name
}

// query resolves one SELECT, VALUES or set operation with outer as its
// enclosing scope, and returns its output columns.
func (w *walker) query(s *pgast.SelectStmt, outer *scope) ([]column, bool) {
	if w.err != nil || s == nil {
		return nil, false
	}
	// A query's own clauses taint nothing of an enclosing expression:
	// only its output columns do, where the enclosing query reads them.
	defer func(outerTaint *bool) { w.taint = outerTaint }(w.taint)
	w.taint = nil
	if s.IntoClause != nil {
		w.fail("select_into", int(s.IntoClause.GetRel().GetLocation()), "SELECT INTO creates a table and is not allowed",
			"Drop the INTO clause; the result comes back to you anyway.")
		return nil, false
	}
	if len(s.LockingClause) > 0 {
		w.fail("locking", w.lockingOffset(), "locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed",
			"Drop the FOR UPDATE/FOR SHARE clause.")
		return nil, false
	}
	defer w.popWith(w.with(s.WithClause, outer))
	var (
		cols     []column
		complete = true
		sc       = newScope(outer)
	)
	switch {
	case s.Op != pgast.SetOperation_SETOP_NONE:
		cols, complete = w.query(s.Larg, outer)
		right, _ := w.query(s.Rarg, outer)
		// A row of the result may come from either side.
		for i := range cols {
			cols[i].masked = cols[i].masked || i < len(right) && right[i].masked || i >= len(right) && len(right) > 0 && anyMasked(right)
		}
		// ORDER BY and LIMIT of a set operation name its output columns.
		sc.add((&relation{loc: -1, cols: cols, complete: complete}).finish())
	case len(s.ValuesLists) > 0:
		for i, l := range s.ValuesLists {
			items := l.GetList().GetItems()
			for j, item := range items {
				masked := w.output(sc, item)
				switch {
				case i == 0:
					cols = append(cols, column{name: fmt.Sprintf("column%d", j+1), certain: true, masked: masked})
				case j < len(cols):
					cols[j].masked = cols[j].masked || masked
				}
			}
		}
	default:
		for _, item := range s.FromClause {
			if r := w.fromItem(item, sc); r != nil {
				sc.items = append(sc.items, r)
			}
		}
		cols, complete = w.targets(sc, s.TargetList)
		w.expr(sc, s.WhereClause)
		w.exprs(sc, s.GroupClause)
		w.expr(sc, s.HavingClause)
		w.exprs(sc, s.WindowClause)
		w.exprs(sc, s.DistinctClause)
	}
	w.exprs(sc, s.SortClause)
	w.expr(sc, s.LimitOffset)
	w.expr(sc, s.LimitCount)
	return cols, complete
}

// lockingOffset finds FOR UPDATE and its kin, since the tree gives them no
// position.
func (w *walker) lockingOffset() int {
	if loc := lockingClause.Get().FindAllStringIndex(w.sql, -1); len(loc) > 0 {
		return loc[len(loc)-1][0]
	}
	return -1
}

// with puts a WITH clause's queries in scope and returns how many scope
// entries it pushed. In a plain WITH each query sees only the ones before
// it, so a CTE named like a table cannot hide a read of that table; in
// WITH RECURSIVE every name is visible to every query.
func (w *walker) with(wc *pgast.WithClause, outer *scope) int {
	if wc == nil {
		return 0
	}
	defs := map[string]*cte{}
	if wc.Recursive {
		for _, c := range wc.Ctes {
			if ce := c.GetCommonTableExpr(); ce != nil {
				defs[w.fold(ce.Ctename)] = &cte{cols: namedColumns(ce.Aliascolnames), complete: len(ce.Aliascolnames) > 0}
			}
		}
		w.ctes = append(w.ctes, defs)
	}
	for _, c := range wc.Ctes {
		ce := c.GetCommonTableExpr()
		if ce == nil || w.err != nil {
			continue
		}
		sel := ce.Ctequery.GetSelectStmt()
		if sel == nil {
			w.fail("statement_kind", int(ce.Location), fmt.Sprintf("a nested %s is not allowed; only SELECT may run, also inside WITH",
				nodeName(ce.Ctequery)), "Remove the data-changing part of the query.")
			return boolInt(wc.Recursive)
		}
		name := w.fold(ce.Ctename)
		var cols []column
		var complete bool
		if wc.Recursive {
			def := defs[name]
			if sel.Op != pgast.SetOperation_SETOP_NONE && sel.WithClause == nil && sel.IntoClause == nil && len(sel.LockingClause) == 0 {
				// The non-recursive term fixes the columns the recursive
				// term reads.
				cols, complete = w.query(sel.Larg, outer)
				if len(ce.Aliascolnames) == 0 {
					def.cols, def.complete = cols, complete
				}
				w.query(sel.Rarg, outer)
				sc := newScope(outer)
				w.exprs(sc, sel.SortClause)
				w.expr(sc, sel.LimitOffset)
				w.expr(sc, sel.LimitCount)
			} else {
				cols, complete = w.query(sel, outer)
			}
		} else {
			w.ctes = append(w.ctes, cloneDefs(defs))
			cols, complete = w.query(sel, outer)
			w.ctes = w.ctes[:len(w.ctes)-1]
		}
		r := &relation{cols: slices.Clone(cols), complete: complete}
		r.rename(stringsOf(ce.Aliascolnames))
		defs[name] = &cte{cols: r.cols, complete: r.complete}
	}
	if !wc.Recursive {
		w.ctes = append(w.ctes, defs)
	}
	return 1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cloneDefs(m map[string]*cte) map[string]*cte {
	out := make(map[string]*cte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func namedColumns(names []*pgast.Node) []column {
	var cols []column
	for _, n := range names {
		cols = append(cols, column{name: n.GetString_().GetSval(), certain: true})
	}
	return cols
}

func stringsOf(nodes []*pgast.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.GetString_().GetSval())
	}
	return out
}

func (w *walker) lookupCTE(name string) *cte {
	for i := len(w.ctes) - 1; i >= 0; i-- {
		if c, ok := w.ctes[i][name]; ok {
			return c
		}
	}
	return nil
}

// targets resolves a SELECT list and returns the output columns.
func (w *walker) targets(sc *scope, list []*pgast.Node) ([]column, bool) {
	var cols []column
	complete := true
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || w.err != nil {
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			for _, r := range w.star(sc, cr) {
				if !r.complete && len(r.masked) > 0 {
					w.fail("masked_column", int(cr.Location), fmt.Sprintf("the columns of %s are not known, so okf cannot tell which ones * would show of its masked columns", r.label()),
						"List the columns you need instead of *.")
					return nil, false
				}
				if w.v.dialect != DialectPostgres && len(r.masked) > 0 && mergesColumns(r) {
					// Engines order * over USING and NATURAL joins their
					// own way; okf knows PostgreSQL's.
					w.fail("masked_column", int(cr.Location), fmt.Sprintf("* over a join that merges columns (USING, NATURAL) is shown in %s's own order, so okf cannot tell where the masked columns are", w.v.dialect),
						"List the columns you need instead of *.")
					return nil, false
				}
				for _, c := range r.columns() {
					if !c.implicit {
						cols = append(cols, c)
					}
				}
				complete = complete && r.complete
			}
			continue
		}
		masked := w.output(sc, rt.Val)
		name, certain := rt.Name, true
		if name == "" {
			name, certain = outputName(rt.Val)
		}
		cols = append(cols, column{name: name, certain: certain, masked: masked})
	}
	if len(cols) > maxColumns {
		cols, complete = cols[:maxColumns], false
	}
	return cols, complete
}

// outputName is the column name PostgreSQL gives an unnamed select-list
// expression, and whether it is surely that name.
func outputName(n *pgast.Node) (string, bool) {
	switch x := n.GetNode().(type) {
	case *pgast.Node_ColumnRef:
		if f := x.ColumnRef.Fields; len(f) > 0 && f[len(f)-1].GetString_() != nil {
			return f[len(f)-1].GetString_().GetSval(), true
		}
	case *pgast.Node_AIndirection:
		ind := x.AIndirection.Indirection
		for i := len(ind) - 1; i >= 0; i-- {
			if s := ind[i].GetString_(); s != nil {
				return s.GetSval(), true
			}
		}
		return outputName(x.AIndirection.Arg)
	case *pgast.Node_FuncCall:
		if f := x.FuncCall.Funcname; len(f) > 0 {
			return f[len(f)-1].GetString_().GetSval(), false
		}
	case *pgast.Node_TypeCast:
		if name, _ := outputName(x.TypeCast.Arg); name != "?column?" {
			return name, false
		}
		if names := x.TypeCast.GetTypeName().GetNames(); len(names) > 0 {
			return names[len(names)-1].GetString_().GetSval(), false
		}
	case *pgast.Node_CaseExpr:
		return "case", false
	case *pgast.Node_AArrayExpr:
		return "array", false
	case *pgast.Node_RowExpr:
		return "row", false
	case *pgast.Node_CoalesceExpr:
		return "coalesce", false
	}
	return "?column?", false
}

// star resolves * and q.* and returns the relations it expands to,
// refusing when one of them has hidden columns.
func (w *walker) star(sc *scope, cr *pgast.ColumnRef) []*relation {
	loc := int(cr.Location)
	if len(cr.Fields) == 1 {
		for _, r := range sc.items {
			if len(r.hidden) > 0 {
				w.fail("denied_column", loc, fmt.Sprintf("* would include hidden columns of %s", r.label()),
					"List the columns you need instead of *.")
				return nil
			}
		}
		w.readAll(sc.items)
		w.taintRows(sc.items)
		return sc.items
	}
	names := stringsOf(cr.Fields[:len(cr.Fields)-1])
	if len(names) > 2 {
		w.fail("schema", loc, strings.Join(names, ".")+" names another database", "Name tables as table or schema.table.")
		return nil
	}
	rels := w.named(sc, names)
	for _, r := range rels {
		if len(r.hidden) > 0 {
			w.fail("denied_column", loc, fmt.Sprintf("%s.* would include hidden columns of %s", strings.Join(names, "."), r.label()),
				"List the columns you need instead of *.")
			return nil
		}
	}
	if len(rels) == 0 {
		// (composite column).* reads that column.
		w.unqualified(sc, names[len(names)-1], loc)
	}
	w.readAll(rels)
	w.taintRows(rels)
	return rels
}

// readAll records every column of the base tables of rels, joins'
// members included, as a * reads them.
func (w *walker) readAll(rels []*relation) {
	if w.reads == nil {
		return
	}
	for _, r := range rels {
		w.readAll(r.members)
		for _, c := range r.cols {
			w.read(r, c.name)
		}
	}
}

// named returns the relations in scope that the query could mean by
// names ("q" or "schema.table"), at every level.
func (w *walker) named(sc *scope, names []string) []*relation {
	name := w.fold(names[len(names)-1])
	var out []*relation
	for l := sc; l != nil; l = l.parent {
		for _, r := range l.byName[name] {
			if len(names) == 1 || r.table != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// expr resolves an expression.
func (w *walker) expr(sc *scope, n *pgast.Node) {
	if n != nil && w.err == nil {
		w.message(sc, n)
	}
}

func (w *walker) exprs(sc *scope, list []*pgast.Node) {
	for _, n := range list {
		w.expr(sc, n)
	}
}

func (w *walker) message(sc *scope, m pgast.Message) {
	if w.err != nil {
		return
	}
	switch x := m.(type) {
	case *pgast.SelectStmt:
		cols, _ := w.query(x, sc)
		w.taintIf(anyMasked(cols))
		return
	case *pgast.ColumnRef:
		w.columnRef(sc, x)
		return
	case *pgast.A_Indirection:
		w.indirection(sc, x)
		return
	case *pgast.FuncCall:
		w.funcCall(x)
		if w.v.dialect == DialectDuckDB {
			w.duckdbFuncCall(x)
		}
		if w.taint != nil && isCount(x) {
			// A count of masked values shows none of them.
			w.untainted(func() {
				x.PgChildren(func(c pgast.Message) bool {
					w.message(sc, c)
					return w.err == nil
				})
			})
			return
		}
	case *pgast.A_Expr:
		w.operator(x.Name, int(x.Location))
		if w.v.dialect == DialectDuckDB {
			w.duckdbOperator(x)
		}
	case *pgast.SortBy:
		w.operator(x.UseOp, int(x.Location))
	case *pgast.TypeName:
		w.typeName(x)
	case *pgast.XmlExpr, *pgast.XmlSerialize:
		w.fail("function", m.PgLocation(), "XML functions are not allowed", "Work with the values as text or JSON.")
	case *pgast.RangeVar:
		w.fail("table", int(x.Location), "a table may be named only in FROM", "")
	}
	if w.err != nil {
		return
	}
	if strings.HasSuffix(m.PgName(), "Stmt") {
		w.fail("statement_kind", m.PgLocation(), fmt.Sprintf("a nested %s is not allowed; only SELECT may run, also inside WITH",
			statementName(m.PgName())), "Remove the data-changing part of the query.")
		return
	}
	m.PgChildren(func(c pgast.Message) bool {
		w.message(sc, c)
		return w.err == nil
	})
}

func (w *walker) columnRef(sc *scope, c *pgast.ColumnRef) {
	if len(c.Fields) == 0 {
		return
	}
	if c.Fields[len(c.Fields)-1].GetAStar() != nil {
		w.star(sc, c)
		return
	}
	loc := int(c.Location)
	names := stringsOf(c.Fields)
	switch len(names) {
	case 1:
		w.unqualified(sc, names[0], loc)
	case 2:
		w.qualified(sc, names[:1], names[1], loc)
	case 3:
		// schema.table.column, or table.column.field
		if len(w.named(sc, names[:2])) > 0 {
			w.qualified(sc, names[:2], names[2], loc)
		}
		if len(w.named(sc, names[:1])) > 0 {
			w.qualified(sc, names[:1], names[1], loc)
			w.fieldName(names[2], loc)
		}
	default:
		w.fail("schema", loc, strings.Join(names, ".")+" names another database", "Name columns as table.column.")
	}
}

// unqualified resolves a bare name: a column of some relation in scope,
// else the whole row of a relation of that name. Every candidate counts,
// at every level.
func (w *walker) unqualified(sc *scope, name string, loc int) {
	name = w.fold(name)
	lower := strings.ToLower(name)
	if w.reads != nil {
		// The database takes the innermost level that has the name.
		for l := sc; l != nil; l = l.parent {
			if rels := l.byCol[lower]; len(rels) > 0 {
				for _, r := range rels {
					w.read(r, name)
				}
				break
			}
		}
	}
	for l := sc; l != nil; l = l.parent {
		for _, r := range l.byCol[lower] {
			if r.hides(name) {
				w.fail("denied_column", loc, fmt.Sprintf("column %s is hidden (in %s)", name, r.label()),
					"Leave the column out; it is not available to you.")
				return
			}
		}
		for _, r := range l.open {
			if r.hides(name) {
				w.fail("denied_column", loc, fmt.Sprintf("column %s is hidden (in %s)", name, r.label()),
					"Leave the column out; it is not available to you.")
				return
			}
		}
		for _, r := range l.byName[name] {
			if len(r.hidden) > 0 {
				w.fail("denied_column", loc, fmt.Sprintf("the whole row of %s would include its hidden columns", r.label()),
					"Name the columns you need.")
				return
			}
		}
		for _, r := range l.byCol[lower] {
			w.taintIf(r.masks(name))
		}
		for _, r := range l.open {
			w.taintIf(r.masks(name))
		}
		w.taintRows(l.byName[name])
	}
}

// qualified resolves q.c (q being "table" or "schema.table"): a column of
// relation q, else function c called on q's whole row (attribute
// notation), else, when no relation is q, field c of a composite column q.
func (w *walker) qualified(sc *scope, q []string, c string, loc int) {
	if w.err != nil {
		return
	}
	c = w.fold(c)
	rels := w.named(sc, q)
	if len(rels) == 0 {
		if len(q) == 1 {
			w.unqualified(sc, q[0], loc)
			w.fieldName(c, loc)
		}
		return
	}
	for _, r := range rels {
		w.read(r, c)
		// c, or a function called on the whole row of r.
		w.taintIf(r.masks(c) || len(r.masked) > 0 && !(r.complete && r.hasColumn(c)))
		switch {
		case r.hides(c):
			w.fail("denied_column", loc, fmt.Sprintf("column %s.%s is hidden", r.label(), c),
				"Leave the column out; it is not available to you.")
		case r.complete && !r.hasColumn(c):
			if !w.v.allow.allows([]string{c}) {
				w.fail("function", loc, fmt.Sprintf("%s.%s calls function %s on the row of %s: %s", strings.Join(q, "."), c, c, r.label(), functionRefusal(c)),
					"Name a column of "+r.label()+".")
			} else if len(r.hidden) > 0 {
				w.fail("denied_column", loc, fmt.Sprintf("%s.%s calls %s on the whole row of %s, which has hidden columns", strings.Join(q, "."), c, c, r.label()),
					"Name the columns you need.")
			}
		case !r.complete && len(r.hidden) > 0 && w.v.allow.allows([]string{c}):
			w.fail("denied_column", loc, fmt.Sprintf("%s.%s may call %s on the whole row of %s, which has hidden columns", strings.Join(q, "."), c, c, r.label()),
				"Name the columns you need.")
		}
		if w.err != nil {
			return
		}
	}
}

// mayBeColumn reports whether name could be a column of a relation in
// scope.
func (w *walker) mayBeColumn(sc *scope, name string) bool {
	lower := strings.ToLower(name)
	for l := sc; l != nil; l = l.parent {
		if len(l.byCol[lower]) > 0 || len(l.open) > 0 {
			return true
		}
	}
	return false
}

// fieldName checks (x).name where x is not a relation: name selects a field
// of a composite value or calls function name on it, and okf cannot tell
// which, so only allowed functions and the fields of allowed functions'
// records pass.
func (w *walker) fieldName(name string, loc int) {
	if w.err != nil || w.v.allow.allows([]string{name}) || recordFields.Has(strings.ToLower(name)) {
		return
	}
	if w.v.dialect == DialectDuckDB {
		// DuckDB calls no function by attribute notation: x.name is the
		// field of a struct, and x.f() a call the allowlist sees.
		return
	}
	w.fail("function", loc, fmt.Sprintf("(…).%s selects a field or calls function %s, and okf cannot tell which: %s", name, name, functionRefusal(name)),
		"Call functions as f(x); read JSON fields with -> and ->>.")
}

func (w *walker) indirection(sc *scope, x *pgast.A_Indirection) {
	if len(x.Indirection) == 0 {
		w.expr(sc, x.Arg)
		return
	}
	rest := x.Indirection
	if cr := x.Arg.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		// (q).c and (q).* read what q.c and q.* read.
		q := cr.Fields[0].GetString_().GetSval()
		loc := int(cr.Location)
		switch first := x.Indirection[0]; {
		case first.GetString_() != nil:
			w.qualified(sc, []string{q}, first.GetString_().GetSval(), loc)
			if len(w.named(sc, []string{q})) > 0 && w.mayBeColumn(sc, q) {
				// q may also be a composite column with field c.
				w.fieldName(first.GetString_().GetSval(), loc)
			}
			rest = rest[1:]
		case first.GetAStar() != nil:
			w.star(sc, &pgast.ColumnRef{Fields: []*pgast.Node{cr.Fields[0], first}, Location: cr.Location})
			rest = rest[1:]
		default:
			w.expr(sc, x.Arg)
		}
	} else {
		w.expr(sc, x.Arg)
	}
	loc := protoMessage(x.Arg).PgLocation()
	for _, ind := range rest {
		if s := ind.GetString_(); s != nil {
			w.fieldName(s.GetSval(), loc)
			continue
		}
		w.expr(sc, ind)
	}
}

// protoMessage returns the message a Node holds, or the Node when it
// holds none.
func protoMessage(n *pgast.Node) pgast.Message {
	if m := n.GetNodeMessage(); m != nil {
		return m
	}
	return n
}

func (w *walker) funcCall(f *pgast.FuncCall) {
	names := stringsOf(f.Funcname)
	if len(names) == 0 || w.v.allow.allows(names) {
		return
	}
	last := strings.ToLower(names[len(names)-1])
	w.fail("function", int(f.Location), fmt.Sprintf("function %s is not allowed: %s", strings.Join(names, "."), functionRefusal(last)),
		"Use the functions listed in docs/security.md; an operator can allow another one with allow_functions in okf.yaml.")
}

func (w *walker) operator(names []*pgast.Node, loc int) {
	ops := stringsOf(names)
	if len(ops) == 0 {
		return
	}
	op := ops[len(ops)-1]
	if allowedOperators.Has(op) && (len(ops) == 1 || len(ops) == 2 && strings.EqualFold(ops[0], "pg_catalog")) {
		return
	}
	w.fail("operator", loc, fmt.Sprintf("operator %s is not allowed", strings.Join(ops, ".")),
		"Use the built-in operators on the built-in types.")
}

func (w *walker) typeName(t *pgast.TypeName) {
	names := stringsOf(t.Names)
	if len(names) == 0 {
		return
	}
	last := strings.ToLower(names[len(names)-1])
	why := ""
	switch {
	case last == "xml":
		why = "XML values are not on the allowlist"
	case deniedTypes.Has(last) || strings.HasPrefix(last, "pg_"):
		why = "its input function reads the catalog"
	}
	if why != "" {
		w.fail("type", int(t.Location), fmt.Sprintf("type %s is not allowed: %s", last, why), "Cast to text, numeric, date or timestamp types.")
	}
}

// fromItem resolves one FROM item, puts what it names in sc and returns it.
func (w *walker) fromItem(n *pgast.Node, sc *scope) *relation {
	if w.err != nil {
		return nil
	}
	var r *relation
	switch x := n.GetNode().(type) {
	case *pgast.Node_RangeVar:
		r = w.rangeVar(x.RangeVar)
	case *pgast.Node_RangeSubselect:
		sel := x.RangeSubselect.Subquery.GetSelectStmt()
		if sel == nil {
			w.fail("statement_kind", -1, "a FROM subquery must be a SELECT", "")
			return nil
		}
		// The subquery sees the items before it (more than PostgreSQL
		// allows without LATERAL, which only makes the check stricter).
		cols, complete := w.query(sel, sc)
		r = &relation{loc: -1, cols: slices.Clone(cols), complete: complete}
		w.alias(r, x.RangeSubselect.Alias)
	case *pgast.Node_RangeFunction:
		r = w.rangeFunction(sc, x.RangeFunction)
	case *pgast.Node_JoinExpr:
		return w.join(sc, x.JoinExpr)
	case *pgast.Node_RangeTableSample:
		ts := x.RangeTableSample
		if m := stringsOf(ts.Method); len(m) != 1 || !slices.Contains([]string{"bernoulli", "system"}, strings.ToLower(m[0])) {
			w.fail("function", int(ts.Location), fmt.Sprintf("TABLESAMPLE method %s is not allowed", strings.Join(m, ".")), "Use BERNOULLI or SYSTEM.")
			return nil
		}
		r = w.fromItem(ts.Relation, sc)
		w.exprs(sc, ts.Args)
		w.expr(sc, ts.Repeatable)
		return r
	case *pgast.Node_RangeTableFunc:
		w.fail("function", int(x.RangeTableFunc.Location), "XMLTABLE is not allowed", "Work with the values as text or JSON.")
		return nil
	case *pgast.Node_JsonTable:
		w.expr(sc, x.JsonTable.GetContextItem().GetRawExpr())
		r = &relation{loc: int(x.JsonTable.Location)}
		w.alias(r, x.JsonTable.Alias)
	default:
		w.fail("statement_kind", protoMessage(n).PgLocation(), "this kind of FROM item is not allowed", "")
		return nil
	}
	if r == nil || w.err != nil {
		return nil
	}
	r.finish()
	sc.add(r)
	return r
}

// alias names r after an alias and renames its columns.
func (w *walker) alias(r *relation, a *pgast.Alias) {
	if a == nil {
		return
	}
	r.name = w.fold(a.Aliasname)
	r.rename(stringsOf(a.Colnames))
}

func (w *walker) rangeVar(r *pgast.RangeVar) *relation {
	loc := int(r.Location)
	if r.Catalogname != "" {
		w.fail("schema", loc, fmt.Sprintf("%s.%s.%s names another database", r.Catalogname, r.Schemaname, r.Relname),
			"Name tables as table or schema.table.")
		return nil
	}
	name := w.fold(r.Relname)
	if r.Schemaname == "" {
		if c := w.lookupCTE(name); c != nil {
			rel := &relation{name: name, loc: loc, cols: slices.Clone(c.cols), complete: c.complete}
			w.alias(rel, r.Alias)
			return rel
		}
	}
	schema, rel := strings.ToLower(r.Schemaname), strings.ToLower(r.Relname)
	if schema != "" && !slices.Contains(w.v.schemas, schema) {
		w.fail("schema", loc, fmt.Sprintf("schema %s is not readable; allowed: %s", r.Schemaname, strings.Join(w.v.schemas, ", ")),
			"System catalogs are hidden; the tables you may read are in the documentation.")
		return nil
	}
	qualified := rel
	if schema != "" {
		qualified = schema + "." + rel
	}
	if len(w.v.tables) > 0 {
		// An unqualified name resolves to the first schema.
		if !w.v.tables[rel] && !w.v.tables[qualified] && !(schema == "" && w.v.tables[w.v.schemas[0]+"."+rel]) {
			w.fail("table", loc, fmt.Sprintf("table %s is not one you may read", r.Relname), "Allowed tables: "+w.v.allowedList()+".")
			return nil
		}
	} else if strings.HasPrefix(rel, "pg_") || strings.HasPrefix(rel, "sqlite_") {
		w.fail("catalog", loc, fmt.Sprintf("system catalog %s is not readable", r.Relname),
			"The tables you may read are in the documentation.")
		return nil
	}
	base := w.v.baseRelation(w.fold(r.Schemaname), name)
	if base == nil {
		w.fail("unknown_table", loc, fmt.Sprintf("table %s does not exist", r.Relname), "The tables you may read are in the documentation.")
		w.err.Refused = false
		return nil
	}
	base.loc = loc
	w.filterTable(loc, strings.ToLower(r.Relname), r.Alias != nil)
	if r.Alias != nil && len(r.Alias.Colnames) > 0 && !base.complete && len(base.hidden) > 0 {
		w.fail("denied_column", loc, fmt.Sprintf("column aliases on %s, which has hidden columns, cannot be checked", r.Relname),
			"Drop the column list of the alias and name the columns you need.")
		return nil
	}
	w.alias(base, r.Alias)
	return base
}

// baseRelation is table name of schema ("" for the first schema that has
// it) with its columns, hidden ones marked; nil when a catalog is known
// and lacks the table. Without a catalog the columns are unknown but the
// hidden ones are still listed.
func (v *Validator) baseRelation(schema, name string) *relation {
	r := &relation{name: name, table: name}
	schemas := v.schemas
	if schema != "" {
		schemas = []string{schema}
	}
	for _, s := range schemas {
		cols, ok := v.catalog.table(strings.ToLower(s), name)
		if !ok {
			continue
		}
		for _, c := range cols {
			r.cols = append(r.cols, column{name: c, hidden: v.hidden(name, c), masked: v.masks(name, c), certain: true})
		}
		if ipk, ok := v.catalog.rowid(s, name); ok {
			for _, alias := range sqliteRowidNames {
				if !r.hasColumn(alias) {
					r.cols = append(r.cols, column{name: alias, hidden: ipk != "" && v.hidden(name, ipk), masked: ipk != "" && v.masks(name, ipk), certain: true, implicit: true})
				}
			}
		}
		r.complete = true
		return r.finish()
	}
	if v.catalog != nil {
		return nil
	}
	r.hidden = columnsIn(v.deniedColumns, name)
	r.masked = columnsIn(v.maskedColumns, name)
	return r
}

// columnsIn lists the columns of table that one of the options' column
// lists (denied, masked) names.
func columnsIn(list map[string][]string, table string) []string {
	var out []string
	for col, tables := range list {
		if slices.Contains(tables, "") || slices.Contains(tables, strings.ToLower(table)) {
			out = append(out, col)
		}
	}
	slices.Sort(out)
	return out
}

// srfColumns are the output columns of allowed functions that return rows
// of several columns.
var srfColumns = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"json_each": {"key", "value"}, "jsonb_each": {"key", "value"}, "json_each_text": {"key", "value"},
		"jsonb_each_text": {"key", "value"},
	}
}}

// scalarSRFs return one column, named after the alias or the function.
var scalarSRFs = lazy.Set{Names: []string{"generate_series", "generate_subscripts", "unnest", "json_array_elements", "jsonb_array_elements",
	"json_array_elements_text", "jsonb_array_elements_text", "json_object_keys", "jsonb_object_keys", "regexp_matches",
	"regexp_split_to_table", "string_to_table", "jsonb_path_query", "jsonb_path_query_tz"}}

// sqliteJSONColumns are the columns of SQLite's json_each and json_tree.
var sqliteJSONColumns = []string{"key", "value", "type", "atom", "id", "parent", "fullkey", "path", "json", "root"}

func (w *walker) rangeFunction(sc *scope, rf *pgast.RangeFunction) *relation {
	r := &relation{loc: -1}
	var fnames []string
	var coldefs []*pgast.Node
	for _, item := range rf.Functions {
		parts := item.GetList().GetItems()
		if len(parts) == 0 {
			continue
		}
		w.expr(sc, parts[0])
		if fc := parts[0].GetFuncCall(); fc != nil {
			names := stringsOf(fc.Funcname)
			fnames = append(fnames, strings.ToLower(names[len(names)-1]))
			r.loc = int(fc.Location)
		} else {
			fnames = append(fnames, "")
		}
		if len(parts) > 1 {
			coldefs = append(coldefs, parts[1].GetList().GetItems()...)
		}
	}
	if w.v.dialect == DialectDuckDB {
		w.duckdbTableFunctions(fnames, r.loc)
	}
	w.exprs(sc, rf.Coldeflist)
	w.exprs(sc, coldefs)
	coldefs = append(coldefs, rf.Coldeflist...)
	switch {
	case len(coldefs) > 0:
		for _, d := range coldefs {
			r.cols = append(r.cols, column{name: d.GetColumnDef().GetColname(), certain: true})
		}
		r.complete = true
	case len(fnames) == 1 && w.v.dialect == DialectSQLite && sqliteTableFunctions.Has(fnames[0]):
		for _, c := range sqliteJSONColumns {
			r.cols = append(r.cols, column{name: c, certain: true})
		}
		r.complete = true
	case len(fnames) == 1 && srfColumns.Get()[fnames[0]] != nil:
		for _, c := range srfColumns.Get()[fnames[0]] {
			r.cols = append(r.cols, column{name: c, certain: true})
		}
		r.complete = true
	case len(fnames) == 1 && (scalarSRFs.Has(fnames[0]) || w.v.allow.builtin[fnames[0]]):
		name := fnames[0]
		if rf.Alias != nil {
			name = rf.Alias.Aliasname
		}
		r.cols, r.complete = []column{{name: name, certain: true}}, true
	}
	if rf.Ordinality && r.complete {
		r.cols = append(r.cols, column{name: "ordinality", certain: true})
	}
	if len(fnames) == 1 {
		r.name = fnames[0]
	}
	w.alias(r, rf.Alias)
	return r
}

// join resolves a join and the columns its USING list or NATURAL reads.
func (w *walker) join(sc *scope, j *pgast.JoinExpr) *relation {
	l := w.fromItem(j.Larg, sc)
	r := w.fromItem(j.Rarg, sc)
	if l == nil || r == nil || w.err != nil {
		return nil
	}
	var using []string
	switch {
	case j.IsNatural:
		if len(l.hidden)+len(r.hidden) > 0 && !(certainColumns(l) && certainColumns(r)) {
			w.fail("denied_column", max(l.loc, r.loc), fmt.Sprintf("NATURAL JOIN next to %s, which has hidden columns, cannot be checked", hiddenLabel(l, r)),
				"Join with ON and name the join columns.")
			return nil
		}
		for _, c := range l.columns() {
			if r.hasColumn(c.name) && !slices.Contains(using, c.name) {
				using = append(using, c.name)
			}
		}
	default:
		using = stringsOf(j.UsingClause)
	}
	for _, name := range using {
		name = w.fold(name)
		for _, side := range []*relation{l, r} {
			w.read(side, name)
			if side.hides(name) {
				w.fail("denied_column", side.loc, fmt.Sprintf("the join reads hidden column %s of %s", name, side.label()),
					"Join with ON on columns you may read.")
				return nil
			}
		}
	}
	w.expr(sc, j.Quals)
	joined := &relation{loc: l.loc, members: []*relation{l, r}, complete: l.complete && r.complete, lazy: true}
	for _, name := range using {
		joined.using = append(joined.using, w.fold(name))
	}
	w.alias(joined, j.Alias)
	joined.finish()
	sc.add(joined)
	if a := j.JoinUsingAlias; a != nil {
		u := &relation{name: w.fold(a.Aliasname), loc: l.loc, cols: namedColumns(j.UsingClause), complete: true}
		sc.add(u.finish())
	}
	return joined
}

func certainColumns(r *relation) bool {
	cols := r.columns()
	if !r.complete {
		return false
	}
	for _, c := range cols {
		if !c.certain {
			return false
		}
	}
	return true
}

func hiddenLabel(l, r *relation) string {
	if len(l.hidden) > 0 {
		return l.label()
	}
	return r.label()
}
