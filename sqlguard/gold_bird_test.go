package sqlguard

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/okf-tools/okf/internal/pgast"

	"github.com/okf-tools/okf/internal/shareddata"
)

// TestGoldBird runs the gold SQL of every BIRD superhero question through
// the whole guard: each must pass the validator and return real rows.
func TestGoldBird(t *testing.T) {
	dir := shareddata.Dir(t, "bird")
	db, err := Open(context.Background(), "superhero", "sqlite:"+filepath.Join(dir, "superhero", "superhero.sqlite"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := os.Open(filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var questions, ran, withRows, lexical int
	for line := 1; sc.Scan(); line++ {
		var q struct {
			ID  int    `json:"question_id"`
			SQL string `json:"SQL"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("questions.jsonl:%d: %v", line, err)
		}
		questions++
		if _, err := pgast.Parse(backticksToQuotes(q.SQL)); err != nil {
			lexical++ // SQLite-only syntax: the lexical check and the SQLite layers
		}
		if err := db.validator.Validate(q.SQL); err != nil {
			t.Errorf("question %d: validator refused: %v\n%s", q.ID, err, q.SQL)
			continue
		}
		res, err := db.Query(context.Background(), "gold", q.SQL)
		if err != nil {
			t.Errorf("question %d: %v\n%s", q.ID, err, q.SQL)
			continue
		}
		ran++
		if res.Total > 0 {
			withRows++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("bird superhero: %d questions, %d passed the validator (%d read by the parse tree, %d by the lexical check) and ran; %d returned rows",
		questions, ran, questions-lexical, lexical, withRows)
	if questions != 65 || withRows != ran {
		t.Errorf("got %d questions, %d with rows of %d run", questions, withRows, ran)
	}
}
