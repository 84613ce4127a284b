// Package eval measures how well okf serves knowledge: retrieval quality
// and the tokens an agent would read, with no model involved, and (with a
// model) execution accuracy. Question sets are JSON lines in the
// LiveSQLBench shape: a question, its database, gold SQL and the ids of the
// business rules it needs.
package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
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
			var q Question
			if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %v", p, line, err)
			}
			if q.ID == "" || q.Database == "" || q.Text == "" {
				f.Close()
				return nil, fmt.Errorf("%s:%d: a question needs instance_id, selected_database and query", p, line)
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

// Tables returns the tables the gold SQL reads, lowercased and sorted,
// without the names of its common table expressions.
func (q Question) Tables() ([]string, error) {
	set := map[string]bool{}
	for _, sql := range q.SQL {
		sum, err := pg_query.Summary(sql, -1)
		if err != nil {
			return nil, fmt.Errorf("question %s: gold SQL does not parse: %v", q.ID, err)
		}
		ctes := map[string]bool{}
		for _, c := range sum.CteNames {
			ctes[strings.ToLower(c)] = true
		}
		for _, t := range sum.Tables {
			name := strings.ToLower(t.Name)
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			if !ctes[name] {
				set[name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}
