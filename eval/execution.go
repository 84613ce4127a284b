package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Task is one question of an execution-accuracy run: what to ask, of
// which database, the gold SQL, and how results are compared.
type Task struct {
	ID       string
	Database string
	Text     string
	Gold     string
	Compare  Comparison
	// Management marks a LiveSQLBench task whose gold SQL changes the
	// database (category other than Query): its result is checked by test
	// cases, not by comparing rows, and a read-only agent cannot do it.
	Management bool
}

// ManagementSkip is why an eval leaves a management task out.
const ManagementSkip = "a management task: LiveSQLBench scores it with its test_cases, Python functions its own harness runs " +
	"over a writable copy of the database; okf runs no Python, so it does not score it (and its agent's guard is read-only)"

// Askable splits tasks into those an eval asks and those it leaves out,
// with why: management tasks, which change the database.
func Askable(tasks []Task) (asked []Task, skipped []Skip) {
	for _, t := range tasks {
		if t.Management {
			skipped = append(skipped, Skip{Question: t.ID, Reason: ManagementSkip})
			continue
		}
		asked = append(asked, t)
	}
	return asked, skipped
}

// Comparison says how a predicted result must match the gold one.
type Comparison struct {
	// BIRD compares rows as sets. Otherwise rows compare as LiveSQLBench's
	// evaluator does: numbers rounded to Decimal places, dates normalised,
	// order kept only when Order is set, duplicates dropped when Distinct.
	BIRD     bool
	Decimal  int
	Order    bool
	Distinct bool
}

// LoadTasks reads a question set of either shape, told apart line by line:
// LiveSQLBench (instance_id, selected_database, query, sol_sql, conditions)
// or BIRD (question_id, db_id, question, SQL). Errors name the file and line.
func LoadTasks(path string) ([]Task, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading questions: %w", err)
	}
	var out []Task
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var q struct {
			InstanceID string          `json:"instance_id"`
			Database   string          `json:"selected_database"`
			Query      string          `json:"query"`
			SolSQL     json.RawMessage `json:"sol_sql"`
			Conditions struct {
				Decimal  json.RawMessage `json:"decimal"`
				Order    bool            `json:"order"`
				Distinct bool            `json:"distinct"`
			} `json:"conditions"`
			Category   string `json:"category"`
			QuestionID *int   `json:"question_id"`
			DBID       string `json:"db_id"`
			Question   string `json:"question"`
			SQL        string `json:"SQL"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		var t Task
		switch {
		case q.InstanceID != "":
			t = Task{ID: q.InstanceID, Database: q.Database, Text: q.Query,
				Compare:    Comparison{Decimal: decimalPlaces(q.Conditions.Decimal), Order: q.Conditions.Order, Distinct: q.Conditions.Distinct},
				Management: q.Category != "" && q.Category != "Query"}
			var list []string
			if json.Unmarshal(q.SolSQL, &list) == nil && len(list) > 0 {
				t.Gold = list[0]
			} else {
				json.Unmarshal(q.SolSQL, &t.Gold)
			}
		case q.QuestionID != nil:
			t = Task{ID: strconv.Itoa(*q.QuestionID), Database: q.DBID, Text: q.Question, Gold: q.SQL, Compare: Comparison{BIRD: true}}
		default:
			return nil, fmt.Errorf("%s:%d: neither a LiveSQLBench task (instance_id) nor a BIRD question (question_id)", path, n)
		}
		switch {
		case t.Text == "":
			return nil, fmt.Errorf("%s:%d: %s has no question text", path, n, t.ID)
		case strings.TrimSpace(t.Gold) == "":
			return nil, fmt.Errorf("%s:%d: %s has no gold SQL", path, n, t.ID)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// decimalPlaces reads conditions.decimal, written as a number or a list of
// one; LiveSQLBench's default is 2.
func decimalPlaces(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var list []int
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return 2
}

// SameResult reports whether predicted rows match the gold rows under c.
func SameResult(gold, pred [][]any, c Comparison) bool {
	g, p := normalise(gold, c), normalise(pred, c)
	if c.BIRD {
		return slices.Equal(set(g), set(p))
	}
	if c.Distinct {
		g, p = set(g), set(p)
	} else if !c.Order {
		slices.Sort(g)
		slices.Sort(p)
	}
	return slices.Equal(g, p)
}

// normalise turns each row into one comparable string.
func normalise(rows [][]any, c Comparison) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = cell(v, c)
		}
		out[i] = strings.Join(cells, "\x1f")
	}
	return out
}

func cell(v any, c Comparison) string {
	switch x := v.(type) {
	case nil:
		return "\x00null"
	case int64:
		return number(float64(x), c)
	case float64:
		return number(x, c)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05")
	case []byte:
		return string(x)
	case string:
		if c.BIRD {
			// BIRD compares typed values: the text '1' is not the number 1.
			return "\x00text:" + x
		}
		// PostgreSQL numerics arrive as text.
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return number(f, c)
		}
		return x
	}
	return fmt.Sprint(v)
}

// number prints a value the same way whatever its type: BIRD compares
// values exactly, LiveSQLBench after rounding.
func number(f float64, c Comparison) string {
	if !c.BIRD {
		p := math.Pow(10, float64(c.Decimal))
		f = math.Round(f*p) / p
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func set(rows []string) []string {
	s := slices.Clone(rows)
	slices.Sort(s)
	return slices.Compact(s)
}

// RemoveRound replaces every ROUND(x, n) and ROUND(x) call with its first
// argument, as LiveSQLBench's evaluator does before running a query, so
// that results are rounded once, by the comparison, to the task's decimal
// places. Quoted strings and identifiers are left alone.
func RemoveRound(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(sql))
			b.WriteString(sql[i:end])
			i = end
		case isRoundCall(sql, i):
			open := strings.IndexByte(sql[i:], '(') + i
			args, end := splitCall(sql, open)
			if end < 0 {
				b.WriteString(sql[i:])
				return b.String()
			}
			b.WriteString("(" + RemoveRound(strings.TrimSpace(args[0])) + ")")
			i = end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// isRoundCall reports whether sql[i:] starts a call of ROUND as a word.
func isRoundCall(sql string, i int) bool {
	if len(sql)-i < 5 || !strings.EqualFold(sql[i:i+5], "round") {
		return false
	}
	if i > 0 && isWordByte(sql[i-1]) {
		return false
	}
	rest := strings.TrimLeft(sql[i+5:], " \t\r\n")
	return strings.HasPrefix(rest, "(")
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// splitCall splits the arguments of the call whose parenthesis opens at
// sql[open], returning them and the index of the closing parenthesis (-1
// when it is missing).
func splitCall(sql string, open int) ([]string, int) {
	depth, start := 0, open+1
	var args []string
	for i := open; i < len(sql); i++ {
		switch sql[i] {
		case '\'', '"':
			q := sql[i]
			for i++; i < len(sql) && sql[i] != q; i++ {
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return append(args, sql[start:i]), i
			}
		case ',':
			if depth == 1 {
				args = append(args, sql[start:i])
				start = i + 1
			}
		}
	}
	return nil, -1
}
