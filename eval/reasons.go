package eval

import (
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// Reasons say why a run scored as it did: one per outcome, decided from
// the gold and the submitted result sets, so that a miss tells what the
// knowledge lacked rather than only that it was wrong.
const (
	Correct = "correct"
	// WrongValues: as many columns, but rows of both sides differ (or the
	// same rows come in another order where the question asks for one).
	WrongValues = "wrong_values"
	// MissingRows: every submitted row is a gold row, some gold rows are
	// not there.
	MissingRows = "missing_rows"
	// ExtraRows: every gold row is there, with rows the gold lacks.
	ExtraRows = "extra_rows"
	// MissingColumns and ExtraColumns: fewer or more columns than the gold.
	MissingColumns = "missing_columns"
	ExtraColumns   = "extra_columns"
	// EmptyResult: no rows where the gold has some.
	EmptyResult = "empty_result"
	// SQLError: the answer's SQL could not be run: the run ended on a
	// query the guard refused or the database failed, or the submitted SQL
	// fails when scored (LiveSQLBench's, without its ROUND calls).
	SQLError = "sql_error"
	// NoAnswer: no SQL submitted: declined, step limit, truncated.
	NoAnswer = "no_answer"
	// ModelError: the model endpoint failed. Not an answer, never counted
	// as a wrong one: the next eval asks the run again.
	ModelError = "model_error"
	// GoldError: the gold SQL failed or returned more than RowCap rows, so
	// the run could not be compared: a fault of the question, not of the
	// answer, counted as a miss as before.
	GoldError = "gold_error"
)

// MissReasons lists the reasons of runs not scored correct, in report order:
// what the result got wrong, then why there was none.
var MissReasons = []string{WrongValues, MissingRows, ExtraRows, MissingColumns, ExtraColumns, EmptyResult, SQLError, NoAnswer, GoldError, ModelError}

// Classify says how a submitted result compares with the gold one under c:
// Correct when they match, else the first of EmptyResult, MissingColumns
// or ExtraColumns, MissingRows or ExtraRows, WrongValues that holds.
func Classify(gold, pred *sqlguard.Result, c Comparison) string {
	if SameResult(gold.Rows, pred.Rows, c) {
		return Correct
	}
	if len(pred.Rows) == 0 {
		return EmptyResult
	}
	if gw, pw := width(gold), width(pred); gw > 0 && pw != gw {
		if pw < gw {
			return MissingColumns
		}
		return ExtraColumns
	}
	g, p := normalise(gold.Rows, c), normalise(pred.Rows, c)
	if c.BIRD || c.Distinct {
		g, p = set(g), set(p)
	}
	missing, extra := difference(g, p), difference(p, g)
	switch {
	case missing > 0 && extra == 0:
		return MissingRows
	case extra > 0 && missing == 0:
		return ExtraRows
	}
	return WrongValues
}

// width is a result's number of columns: its columns' names, else its
// first row's cells; 0 when neither says.
func width(r *sqlguard.Result) int {
	if len(r.Columns) > 0 {
		return len(r.Columns)
	}
	if len(r.Rows) > 0 {
		return len(r.Rows[0])
	}
	return 0
}

// difference counts the rows of a that b lacks, as multisets.
func difference(a, b []string) int {
	have := map[string]int{}
	for _, r := range b {
		have[r]++
	}
	n := 0
	for _, r := range a {
		if have[r] > 0 {
			have[r]--
		} else {
			n++
		}
	}
	return n
}

// endedOnFailingSQL reports whether the last query a run ran (run_sql or
// a submitted answer) failed or was refused: a run that gave up, or ran
// out of steps, on SQL it could not repair.
func endedOnFailingSQL(r *trace.Record) bool {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		calls := r.Steps[i].Calls
		for j := len(calls) - 1; j >= 0; j-- {
			if calls[j].Tool == engine.ToolRunSQL || calls[j].Tool == "submit_answer" {
				return calls[j].Error
			}
		}
	}
	return false
}
