package pgast

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/sqlshapes"
)

// statements covers the statement kinds and expression forms the corpora
// lack: every one must decode as pg_query_go decodes it.
var statements = []string{
	"SELECT 1", "SELECT", "", ";", "SELECT 1; SELECT 2",
	"SELECT a, b.c, d.* FROM t AS x(a, b) JOIN u USING (id) LEFT JOIN LATERAL f(x.a) ON true WHERE a IN (1, 2.5, 'x', NULL, true) ORDER BY 1 DESC NULLS LAST LIMIT 3 OFFSET 1",
	"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
	"SELECT CASE WHEN a > 1 THEN 'x' ELSE B'101' END, x'1F', $1::int[], ARRAY[1,2][1], (t.a).b, row(1, 2), a IS DISTINCT FROM b, a BETWEEN 1 AND 2, a LIKE 'x%' ESCAPE '!'",
	"SELECT count(*) FILTER (WHERE a > 0) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t GROUP BY ROLLUP (a, b), CUBE (c) HAVING sum(a) > 1 WINDOW w AS (PARTITION BY a)",
	"SELECT * FROM t TABLESAMPLE SYSTEM (10) REPEATABLE (1), XMLTABLE('/a' PASSING x COLUMNS a int PATH 'a'), JSON_TABLE(j, '$' COLUMNS (a int PATH '$.a')) jt",
	"SELECT xmlelement(name a, 'b'), xmlserialize(content x AS text), json_object('a': 1), j -> 'a' ->> 'b', j @> '{}', 1e400, -0.0, 9223372036854775808, 1.5e-7",
	"SELECT a FROM t FOR UPDATE SKIP LOCKED", "SELECT DISTINCT ON (a) a FROM t", "VALUES (1, 'a'), (2, 'b')", "TABLE t",
	"INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *",
	"UPDATE t SET a = a + 1 FROM u WHERE t.id = u.id RETURNING a", "DELETE FROM t USING u WHERE t.id = u.id",
	"MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN UPDATE SET a = u.a WHEN NOT MATCHED THEN INSERT VALUES (u.id)",
	"CREATE TABLE t (id serial PRIMARY KEY, a text NOT NULL DEFAULT 'x' CHECK (a <> ''), b numeric(10,2) REFERENCES u(id) ON DELETE CASCADE) PARTITION BY RANGE (id)",
	"CREATE INDEX CONCURRENTLY i ON t USING gin (a jsonb_path_ops) WHERE b", "CREATE VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW m AS SELECT 1 WITH NO DATA",
	"CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $$ SELECT a $$", "DO $$ BEGIN PERFORM 1; END $$",
	"ALTER TABLE t ADD COLUMN c int, DROP CONSTRAINT k, ALTER COLUMN a TYPE bigint USING a::bigint",
	"DROP TABLE IF EXISTS t, u CASCADE", "TRUNCATE t RESTART IDENTITY", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO r",
	"COPY t (a) FROM STDIN WITH (FORMAT csv)", "COPY (SELECT 1) TO PROGRAM 'x'", "SET search_path = a, b", "RESET ALL", "SHOW ALL",
	"BEGIN ISOLATION LEVEL SERIALIZABLE", "COMMIT", "SAVEPOINT s", "PREPARE p AS SELECT $1", "EXECUTE p(1)", "EXPLAIN ANALYZE SELECT 1",
	"LISTEN c", "NOTIFY c, 'x'", "LOCK t IN ACCESS EXCLUSIVE MODE", "VACUUM (ANALYZE) t", "CREATE EXTENSION x", "SELECT pg_sleep(1)",
	"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()", "CREATE RULE r AS ON INSERT TO t DO INSTEAD NOTHING",
	"SELECT 'caf\u00e9', U&'d\\0061t\\+000061', E'\\x41', $tag$ x $tag$, \"Quoted Ident\"", "SELECT a FROM t WHERE a = ANY (ARRAY[1]) AND b = ALL (SELECT 1) AND EXISTS (SELECT 1)",
	"SELECT interval '1 day', timestamp with time zone '2026-01-01', cast(a AS varchar(10)), a COLLATE \"C\", a AT TIME ZONE 'UTC'",
	"SELECT * FROM (SELECT 1) s, generate_series(1, 3) WITH ORDINALITY g(n, o), ROWS FROM (f(), g())",
	"SELECT grouping(a), coalesce(a, b), nullif(a, b), greatest(a, b), least(a, b), current_date, current_user, session_user, localtime",
	"SELECT 1 FROM t WHERE (a, b) = (1, 2) AND a IS NOT NULL AND b IS TRUE AND c IS UNKNOWN", "SELECT a[1:2], a[:3] FROM t",
	"SELEC 1", "SELECT (", "SELECT 'unterminated", "SELECT 1 +", "SELECT \"\"",
}

func sqlCorpus(t testing.TB) []string {
	out := append([]string{}, statements...)
	for _, s := range sqlshapes.Shapes {
		out = append(out, s.Text(2000))
	}
	data := shareddata.Find()
	if data == "" {
		return out
	}
	files, _ := filepath.Glob(filepath.Join(data, "livesqlbench", "questions", "*.jsonl"))
	for _, f := range files {
		eachLine(t, f, func(line []byte) {
			var q struct {
				Sol     []string `json:"sol_sql"`
				Pre     []string `json:"preprocess_sql"`
				CleanUp []string `json:"clean_up_sqls"`
			}
			if json.Unmarshal(line, &q) == nil {
				out = append(append(append(out, q.Sol...), q.Pre...), q.CleanUp...)
			}
		})
	}
	eachLine(t, filepath.Join(data, "bird", "questions.jsonl"), func(line []byte) {
		var q struct {
			SQL string `json:"SQL"`
		}
		if json.Unmarshal(line, &q) == nil {
			out = append(out, q.SQL, strings.ReplaceAll(q.SQL, "`", `"`))
		}
	})
	return out
}

func eachLine(t testing.TB, path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		fn(sc.Bytes())
	}
}

// same fails t unless pgast and pg_query_go give the same JSON, or both
// an error with the same text.
func same(t *testing.T, what, sql string, a any, aerr error, b any, berr error) {
	t.Helper()
	if (aerr != nil) != (berr != nil) || aerr != nil && aerr.Error() != berr.Error() {
		t.Fatalf("%s %q: pgast error %v, pg_query_go error %v", what, sql, aerr, berr)
	}
	if aerr != nil {
		return
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if string(ja) != string(jb) {
		t.Fatalf("%s %q differs:\npgast:       %.2000s\npg_query_go: %.2000s", what, sql, ja, jb)
	}
}

func checkSQL(t *testing.T, sql string) {
	t.Helper()
	p, perr := Parse(sql)
	q, qerr := pg_query.Parse(sql)
	same(t, "Parse", sql, p, perr, q, qerr)
	if perr == nil {
		sameWalk(t, sql, p, q)
	}
	s, serr := Scan(sql)
	r, rerr := pg_query.Scan(sql)
	same(t, "Scan", sql, s, serr, r, rerr)
	m, merr := Summary(sql, -1)
	n, nerr := pg_query.Summary(sql, -1)
	same(t, "Summary", sql, m, merr, n, nerr)
}

// sameWalk holds PgChildren, PgName and PgLocation to what protobuf's
// reflection gave the walker: the same nodes, each with its name and
// location, in the same order but for the one pair of fields protobuf
// swaps at random in each message type (detrand), so compared as lists
// sorted.
func sameWalk(t *testing.T, sql string, p *ParseResult, q *pg_query.ParseResult) {
	t.Helper()
	var got, want []string
	var walk func(m Message)
	walk = func(m Message) {
		got = append(got, m.PgName()+"@"+itoa(int32(m.PgLocation())))
		m.PgChildren(func(c Message) bool { walk(c); return true })
	}
	var rwalk func(m protoreflect.Message)
	rwalk = func(m protoreflect.Message) {
		loc := -1
		if fd := m.Descriptor().Fields().ByName("location"); fd != nil && fd.Kind() == protoreflect.Int32Kind {
			loc = int(m.Get(fd).Int())
		}
		want = append(want, string(m.Descriptor().Name())+"@"+itoa(int32(loc)))
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
				return true
			}
			if fd.IsList() {
				for i := 0; i < v.List().Len(); i++ {
					rwalk(v.List().Get(i).Message())
				}
				return true
			}
			rwalk(v.Message())
			return true
		})
	}
	walk(p)
	rwalk(q.ProtoReflect())
	sortStrings(got)
	sortStrings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walking %q: pgast visits %d nodes, protobuf's reflection %d:\n%v\n%v", sql, len(got), len(want), got, want)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestSameTreesAsPgQueryGo(t *testing.T) {
	corpus := sqlCorpus(t)
	if os.Getenv(shareddata.EnvRequire) != "" && len(corpus) < 300 {
		t.Fatalf("%d SQL texts: the shared corpora are missing", len(corpus))
	}
	for _, sql := range corpus {
		checkSQL(t, sql)
	}
	t.Logf("%d SQL texts decode and walk as pg_query_go's", len(corpus))
}

func TestEnumNames(t *testing.T) {
	if Token_UNION.String() != pg_query.Token_UNION.String() || SetOperation_SETOP_NONE.String() != "SETOP_NONE" || Token(-7).String() != "-7" {
		t.Errorf("enum names: %s %s %s", Token_UNION, SetOperation_SETOP_NONE, Token(-7))
	}
	if int32(SummaryResult_DDL) != int32(pg_query.SummaryResult_DDL) || int32(Token_ASCII_59) != int32(pg_query.Token_ASCII_59) {
		t.Error("enum values differ from pg_query_go's")
	}
}

// TestMalformedBytes: truncated or corrupted protobuf is an error, never a
// panic or a hang.
func TestMalformedBytes(t *testing.T) {
	for _, b := range [][]byte{{0x0a}, {0x0a, 0xff}, {0x12, 0x05, 0x01}, {0x08}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0x0b}, {0x00}} {
		if err := new(ParseResult).unmarshal(b, 0); err == nil {
			t.Errorf("%x decoded without an error", b)
		}
	}
}

func FuzzSameTrees(f *testing.F) {
	for _, s := range statements {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 4096 {
			return
		}
		checkSQL(t, sql)
	})
}

// TestGeneratedTreeIsCurrent runs the generator and compares its output
// with the committed tree.go, so that an upgrade of pg_query_go without
// go generate fails here rather than decode wrongly.
func TestGeneratedTreeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run ./gen")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(t.TempDir(), "tree.go")
	if b, err := exec.Command(goBin, "run", "./gen", out).CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("tree.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("tree.go differs from what internal/pgast/gen writes: run go generate ./internal/pgast")
	}
}
