package sqlguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/pgast"
)

// ColumnsRead returns the columns of cat's tables that a PostgreSQL script
// reads or writes, as "table.column", sorted: each column reference, star,
// USING and NATURAL join resolved the way the validator resolves them (and
// so the way the database does), aliases, subqueries and WITH queries
// included. Besides SELECT it reads the queries of INSERT, UPDATE, DELETE,
// CREATE VIEW, CREATE TABLE AS and CREATE INDEX; other statements (a
// function body, a DO block, ALTER TABLE) and statements naming a table cat
// lacks come back in unread, a line each. It guards nothing: every function
// is allowed. It is for measuring which columns a query needs (okf eval
// reads gold SQL with it). Only a script that does not parse is an error.
func ColumnsRead(sql string, cat *Catalog) (columns, unread []string, err error) {
	v, err := NewValidator(DialectPostgres, Options{}, cat)
	if err != nil {
		return nil, nil, err
	}
	v.allow.everything = true
	tree, err := pgast.Parse(sql)
	if err != nil {
		return nil, nil, fmt.Errorf("the SQL does not parse: %w", err)
	}
	reads := map[string]bool{}
	for _, raw := range tree.Stmts {
		w := &walker{v: v, sql: sql, reads: reads}
		if !w.statement(raw.Stmt) {
			unread = append(unread, statementName(protoMessage(raw.Stmt).PgName()))
		} else if w.err != nil {
			unread = append(unread, fmt.Sprintf("%s: %s", statementName(protoMessage(raw.Stmt).PgName()), w.err.Message))
		}
	}
	for c := range reads {
		columns = append(columns, c)
	}
	slices.Sort(columns)
	return columns, unread, nil
}

// statement resolves a statement's queries for ColumnsRead; false when it
// has none the walker reads.
func (w *walker) statement(n *pgast.Node) bool {
	switch x := n.GetNode().(type) {
	case *pgast.Node_SelectStmt:
		w.query(x.SelectStmt, nil)
	case *pgast.Node_ViewStmt:
		w.query(x.ViewStmt.Query.GetSelectStmt(), nil)
	case *pgast.Node_CreateTableAsStmt:
		w.query(x.CreateTableAsStmt.Query.GetSelectStmt(), nil)
	case *pgast.Node_InsertStmt:
		s := x.InsertStmt
		defer w.popWith(w.with(s.WithClause, nil))
		if r := w.rangeVar(s.Relation); r != nil {
			for _, t := range s.Cols {
				w.read(r, w.fold(t.GetResTarget().GetName()))
			}
		}
		w.query(s.SelectStmt.GetSelectStmt(), nil)
	case *pgast.Node_UpdateStmt:
		s := x.UpdateStmt
		defer w.popWith(w.with(s.WithClause, nil))
		sc, target := w.targetScope(s.Relation, s.FromClause)
		for _, t := range s.TargetList {
			if target != nil {
				w.read(target, w.fold(t.GetResTarget().GetName()))
			}
			w.expr(sc, t.GetResTarget().GetVal())
		}
		w.expr(sc, s.WhereClause)
		w.exprs(sc, s.ReturningList)
	case *pgast.Node_DeleteStmt:
		s := x.DeleteStmt
		defer w.popWith(w.with(s.WithClause, nil))
		sc, _ := w.targetScope(s.Relation, s.UsingClause)
		w.expr(sc, s.WhereClause)
		w.exprs(sc, s.ReturningList)
	case *pgast.Node_IndexStmt:
		s := x.IndexStmt
		sc, target := w.targetScope(s.Relation, nil)
		for _, p := range s.IndexParams {
			e := p.GetIndexElem()
			if e.GetName() != "" && target != nil {
				w.read(target, w.fold(e.GetName()))
			}
			w.expr(sc, e.GetExpr())
		}
		w.expr(sc, s.WhereClause)
	default:
		return false
	}
	return true
}

// targetScope is the scope of a data-changing statement: its target table
// and the tables of its FROM or USING list.
func (w *walker) targetScope(target *pgast.RangeVar, from []*pgast.Node) (*scope, *relation) {
	sc := newScope(nil)
	r := w.rangeVar(target)
	if r != nil {
		sc.add(r.finish())
		sc.items = append(sc.items, r)
	}
	for _, item := range from {
		if f := w.fromItem(item, sc); f != nil {
			sc.items = append(sc.items, f)
		}
	}
	return sc, r
}

func (w *walker) popWith(pushed int) { w.ctes = w.ctes[:len(w.ctes)-pushed] }

// TablesNamed returns the tables a PostgreSQL statement names, lower case
// and without their schema, leaving out its common table expressions:
// each maps to whether the statement names it outside DDL (false for a
// table it only creates, alters or indexes).
func TablesNamed(sql string) (map[string]bool, error) {
	sum, err := pgast.Summary(sql, -1)
	if err != nil {
		return nil, err
	}
	ctes := map[string]bool{}
	for _, c := range sum.CteNames {
		ctes[strings.ToLower(c)] = true
	}
	out := map[string]bool{}
	for _, t := range sum.Tables {
		name := strings.ToLower(t.Name)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if !ctes[name] {
			out[name] = out[name] || t.Context != pgast.SummaryResult_DDL
		}
	}
	return out, nil
}
