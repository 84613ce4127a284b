package sqlguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/pgast"
)

// Masked columns (Options.MaskedColumns) may be read where their values
// stay in the database, in filters, joins, groupings, orderings and
// counts, but never shown: the resolver marks each output column whose
// values derive from one, in whatever form (a reference, a star, a whole
// row, a function or cast of it, an aggregate but count, a subquery, a
// CTE, either side of a set operation, a window function), and the
// result shows Mask in every cell of those columns. A form whose output
// columns okf cannot tell is refused.

// Mask is what a result shows in place of a masked value.
const Mask = "****"

// output resolves an output column's expression and reports whether its
// values derive from a masked column.
func (w *walker) output(sc *scope, n *pgast.Node) bool {
	var tainted bool
	prev := w.taint
	w.taint = &tainted
	w.expr(sc, n)
	w.taint = prev
	return tainted
}

// taintIf marks the output column being resolved when cond holds, a
// read of a masked value, and records that the query reads one.
func (w *walker) taintIf(cond bool) {
	if !cond {
		return
	}
	w.readsMasked = true
	if w.taint != nil {
		*w.taint = true
	}
}

// taintRows marks the output column being resolved when it reads the
// whole row of a relation with masked columns.
func (w *walker) taintRows(rels []*relation) {
	for _, r := range rels {
		w.taintIf(len(r.masked) > 0)
	}
}

// untainted resolves what f resolves without marking the output column.
func (w *walker) untainted(f func()) {
	prev := w.taint
	w.taint = nil
	f()
	w.taint = prev
}

// isCount reports whether a call is count(…), which shows how many values
// there are and none of them.
func isCount(f *pgast.FuncCall) bool {
	names := stringsOf(f.Funcname)
	return len(names) > 0 && strings.EqualFold(names[len(names)-1], "count") &&
		(len(names) == 1 || len(names) == 2 && strings.EqualFold(names[0], "pg_catalog"))
}

func anyMasked(cols []column) bool {
	return slices.ContainsFunc(cols, func(c column) bool { return c.masked })
}

// mask replaces the values of a result's masked columns with Mask. The
// validator's columns and the database's must agree in number: if they
// do not, okf cannot tell which cells to mask and returns no rows.
// withheld is a database's error for a query that reads a masked column,
// its message withheld: a failed cast or a constraint names the value it
// failed on ("invalid input syntax for type integer: \"ana@…\"").
func withheld(err error) error {
	ge, ok := AsError(err)
	if !ok || ge.Refused || ge.Layer != LayerDatabase {
		return err
	}
	out := *ge
	out.Message = "the query failed; the database's message is withheld because the query reads a masked column"
	out.Hint = "Check the query's casts and functions on the masked columns; their values cannot be shown."
	return &out
}

func mask(res *Result, cols []column) error {
	if res == nil || !anyMasked(cols) {
		return nil
	}
	if len(cols) != len(res.Columns) {
		return &Error{Layer: LayerValidator, Refused: true, Code: "masked_column",
			Message: fmt.Sprintf("the query returned %d columns where okf read %d, so it cannot tell which ones show masked values", len(res.Columns), len(cols)),
			Hint:    "Name the columns you need."}
	}
	for i, c := range cols {
		if !c.masked {
			continue
		}
		res.MaskedColumns = append(res.MaskedColumns, res.Columns[i].Name)
		for _, row := range res.Rows {
			if row[i] != nil {
				row[i] = Mask
				res.MaskedCells++
			}
		}
	}
	return nil
}
