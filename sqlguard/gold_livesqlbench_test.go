package sqlguard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/compile/load"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/sqlguard"
)

// goldRoleSeq names each database's agent role apart.
var goldRoleSeq atomic.Int64

// lsbQuestions reads both train files, each question once, sorted by id.
func lsbQuestions(t *testing.T) []eval.Question {
	dir := shareddata.Dir(t, "livesqlbench", "questions")
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no question files in %s: %v", dir, err)
	}
	qs, err := eval.LoadQuestions(files...)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(qs, func(a, b eval.Question) int { return strings.Compare(a.ID, b.ID) })
	return qs
}

// TestGoldLiveSQLBench loads each reconstructed schema into a throwaway
// PostgreSQL database, prepares the agent's role on it and runs every
// question's gold SQL through the whole guard as that role. Query
// questions must pass the validator and run (the tables are empty, so zero
// rows is fine); Management questions change the database and must be
// refused. Every refusal is logged with its reason.
func TestGoldLiveSQLBench(t *testing.T) {
	t.Parallel()
	root := shareddata.Dir(t, "livesqlbench", "base-lite")
	qs := lsbQuestions(t)
	cluster := pgtest.Shared(t)
	ctx := context.Background()
	dbs := map[string]*sqlguard.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	var ran, refused, statements int
	var refusals []string
	for _, q := range qs {
		db, ok := dbs[q.Database]
		if !ok {
			model, err := livesqlbench.Read(filepath.Join(root, q.Database))
			if err != nil {
				t.Fatal(err)
			}
			admin := cluster.NewDatabase(t)
			if _, err := load.Postgres(ctx, admin, model, load.Options{AddMissingKeys: true}); err != nil {
				t.Fatalf("loading %s: %v", q.Database, err)
			}
			role := fmt.Sprintf("okf_gold_agent_%d_%d", os.Getpid(), goldRoleSeq.Add(1))
			agent := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
			if _, err := sqlguard.PreparePostgres(ctx, admin, agent, sqlguard.Options{}); err != nil {
				t.Fatalf("preparing %s: %v", q.Database, err)
			}
			if db, err = sqlguard.Open(ctx, q.Database, agent, sqlguard.Options{}, nil); err != nil {
				t.Fatal(err)
			}
			dbs[q.Database] = db
		}
		for i, sql := range q.SQL {
			statements++
			_, err := db.Query(ctx, "gold", sql)
			switch {
			case q.Category == "Query" && err != nil:
				t.Errorf("%s (statement %d): %v\n%s", q.ID, i+1, err, sql)
			case q.Category == "Query":
				ran++
			case err == nil:
				t.Errorf("%s (%s, statement %d) was not refused:\n%s", q.ID, q.Category, i+1, sql)
			default:
				ge, _ := sqlguard.AsError(err)
				if ge == nil || !ge.Refused && ge.Layer != sqlguard.LayerValidator {
					t.Errorf("%s: failed instead of being refused: %v", q.ID, err)
				}
				refused++
				refusals = append(refusals, fmt.Sprintf("%s: %s", q.ID, err))
			}
		}
	}
	t.Logf("livesqlbench: %d questions (%d gold statements) over %d databases: %d Query statements passed the validator and ran, %d Management statements refused",
		len(qs), statements, len(dbs), ran, refused)
	for _, r := range refusals {
		t.Log("refused: " + r)
	}
}
