// Package eval measures how well okf serves knowledge: retrieval quality
// and the tokens an agent would read, with no model involved, and (with a
// model) execution accuracy: each question asked repeatedly with each
// strategy and model, every outcome scored with the reason it missed,
// accuracy with its interval, and two strategies or models compared
// paired, with McNemar's test. Question sets are JSON lines in the
// LiveSQLBench shape (a question, its database, gold SQL and the ids of the
// business rules it needs) or the BIRD shape (a question, its database,
// evidence and gold SQL).
package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/okf-tools/okf/sqlguard"
	"maps"
	"os"
	"slices"
	"strings"
)

// Question is one task of a question set.
type Question struct {
	ID       string   `json:"instance_id"`
	Database string   `json:"selected_database"`
	Text     string   `json:"query"`
	SQL      []string `json:"sol_sql"`
	// Rules are the ids of the business rules the question needs
	// (LiveSQLBench's external_knowledge).
	Rules []int `json:"external_knowledge"`
	// Category is "Query" for a question answered by reading, or
	// "Management" for one whose gold SQL changes the database.
	Category string `json:"category"`
	// Evidence is BIRD's hint of what the question's words mean in the
	// database ("" in LiveSQLBench sets).
	Evidence string `json:"evidence,omitempty"`
}

// birdQuestion is a line of a BIRD question set.
type birdQuestion struct {
	ID       *int   `json:"question_id"`
	Database string `json:"db_id"`
	Text     string `json:"question"`
	Evidence string `json:"evidence"`
	SQL      string `json:"SQL"`
}

// parseQuestion reads one line of a question set, in either shape.
func parseQuestion(line []byte) (Question, error) {
	var b birdQuestion
	if err := json.Unmarshal(line, &b); err != nil {
		return Question{}, err
	}
	if b.ID != nil {
		q := Question{ID: fmt.Sprintf("%s_%d", b.Database, *b.ID), Database: b.Database, Text: b.Text, Evidence: b.Evidence, Category: "Query"}
		if b.SQL != "" {
			q.SQL = []string{b.SQL}
		}
		if q.Database == "" || q.Text == "" {
			return q, errors.New("a BIRD question needs question_id, db_id and question")
		}
		return q, nil
	}
	var q Question
	if err := json.Unmarshal(line, &q); err != nil {
		return q, err
	}
	if q.ID == "" || q.Database == "" || q.Text == "" {
		return q, errors.New("a question needs instance_id, selected_database and query (LiveSQLBench) or question_id, db_id and question (BIRD)")
	}
	return q, nil
}

// LoadQuestions reads question sets (JSON lines). A question whose id was
// already read is skipped, so overlapping sets can be combined. Errors name
// the file and line.
func LoadQuestions(paths ...string) ([]Question, error) {
	var out []Question
	seen := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			q, err := parseQuestion(sc.Bytes())
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %v", p, line, err)
			}
			if !seen[q.ID] {
				seen[q.ID] = true
				out = append(out, q)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
	}
	return out, nil
}

// Tables returns the tables the gold SQL reads or changes, lowercased and
// sorted, without the names of its common table expressions; ddl are those
// it names only in DDL (CREATE, ALTER, an index): tables it may create.
func (q Question) Tables() (tables, ddl []string, err error) {
	uses := map[string]bool{} // name → named outside DDL
	for _, sql := range q.SQL {
		named, err := sqlguard.TablesNamed(sql)
		if err != nil {
			return nil, nil, fmt.Errorf("question %s: gold SQL does not parse: %v", q.ID, err)
		}
		for name, outsideDDL := range named {
			uses[name] = uses[name] || outsideDDL
		}
	}
	for _, t := range slices.Sorted(maps.Keys(uses)) {
		if uses[t] {
			tables = append(tables, t)
		} else {
			ddl = append(ddl, t)
		}
	}
	return tables, ddl, nil
}
