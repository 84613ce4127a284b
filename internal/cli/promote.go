package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/okf-tools/okf/queries"
	"github.com/okf-tools/okf/trace"
)

// promoteRun writes a run's answer as a draft query concept into the
// folder of bundles out, and says where.
func promoteRun(e *env, r *trace.Record, out string) error {
	path, d, err := promote(r, out)
	if err != nil {
		return err
	}
	params := "no parameters"
	if len(d.Params) > 0 {
		params = fmt.Sprintf("parameters %v", d.Params)
	}
	fmt.Fprintf(e.stdout, "wrote %s (draft, %s): review it, then set status: stable (and add a verified entry) to serve it as a tool\n", path, params)
	return nil
}

// promote writes one run's draft and returns its path.
func promote(r *trace.Record, out string) (string, queries.Draft, error) {
	run := queries.Run{ID: r.ID, Question: r.Question, Database: r.Database, StopReason: r.StopReason, ConceptsRead: r.ConceptsRead}
	if r.Answer != nil {
		run.SQL = r.Answer.SQL
	}
	p, err := queries.FromRun(run)
	if err != nil {
		return "", queries.Draft{}, err
	}
	p.Generator = "okf/" + version()
	d, err := queries.Promote(p)
	if err != nil {
		return "", d, fmt.Errorf("run %s: %w", r.ID, err)
	}
	path, err := queries.WriteDraft(out, p.Bundle, d)
	return path, d, err
}

// promoteCorrect promotes the runs scored correct, leaving drafts already
// written by an earlier, resumed evaluation as they are.
func promoteCorrect(e *env, out string, ids []string, runs []trace.Record) error {
	byID := map[string]*trace.Record{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	wrote, kept := 0, 0
	for _, id := range ids {
		r := byID[id]
		if r == nil {
			return fmt.Errorf("run %s was scored but is not in the run log", id)
		}
		switch _, _, err := promote(r, out); {
		case errors.Is(err, fs.ErrExist):
			kept++
		case err != nil:
			return err
		default:
			wrote++
		}
	}
	fmt.Fprintf(e.stderr, "eval: promoted %d correct answers to draft query concepts in %s (%d already there)\n", wrote, out, kept)
	return nil
}
