package livesqlbench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile/livesqlbench"
)

// writeDB writes a database folder named db with the given files, each
// keyed by its suffix; the suffix mapped to "" is left out.
func writeDB(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for suffix, content := range files {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "db"+suffix), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	goodSchema = "CREATE TABLE \"t\" (\nid integer NOT NULL,\nv text NULL,\n    PRIMARY KEY (id)\n);\n"
	goodRules  = `{"id": 0, "knowledge": "A", "description": "a", "definition": "v > 1", "type": "domain_knowledge", "children_knowledge": -1}
{"id": 1, "knowledge": "B", "description": "b", "definition": "A and v < 9", "type": "domain_knowledge", "children_knowledge": [0]}
`
	goodMeanings = `{"db|t|id": "the key", "db|t|v": "a value"}`
)

func files(schema, meanings, rules string) map[string]string {
	return map[string]string{
		livesqlbench.SchemaSuffix:   schema,
		livesqlbench.MeaningsSuffix: meanings,
		livesqlbench.RulesSuffix:    rules,
	}
}

func TestBadInputNamesFileAndLine(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string // every one must be in the error
	}{
		{"malformed JSON line", files(goodSchema, goodMeanings, goodRules+`{"id": 2, "knowledge": "C", "definition": "x"`+"\n"),
			[]string{"db_kb.jsonl:3:", "not a JSON object"}},
		{"duplicate rule id", files(goodSchema, goodMeanings, goodRules+`{"id": 1, "knowledge": "C", "definition": "x", "children_knowledge": -1}`+"\n"),
			[]string{"db_kb.jsonl:3:", "rule id 1 is already used on line 2"}},
		{"unknown children id", files(goodSchema, goodMeanings, goodRules+`{"id": 2, "knowledge": "C", "definition": "x", "children_knowledge": [0, 7]}`+"\n"),
			[]string{"db_kb.jsonl:3:", "children_knowledge 7", "no rule has that id"}},
		{"children not a list", files(goodSchema, goodMeanings, `{"id": 0, "knowledge": "C", "definition": "x", "children_knowledge": "none"}`+"\n"),
			[]string{"db_kb.jsonl:1:", "children_knowledge"}},
		{"rule without id", files(goodSchema, goodMeanings, `{"knowledge": "C", "definition": "x"}`+"\n"),
			[]string{"db_kb.jsonl:1:", `no "id"`}},
		{"schema with no tables", files("-- nothing here\nFirst 3 rows:\n", goodMeanings, goodRules),
			[]string{"db_schema.txt", "no CREATE TABLE"}},
		{"table never closed", files("CREATE TABLE \"t\" (\nid integer NOT NULL,\n", goodMeanings, goodRules),
			[]string{"db_schema.txt:1:", "never closed"}},
		{"unreadable schema line", files("CREATE TABLE \"t\" (\nid integer NOT NULL,\n!!!\n);\n", goodMeanings, goodRules),
			[]string{"db_schema.txt:3:", "cannot read"}},
		{"primary key on a missing column", files("CREATE TABLE \"t\" (\nid integer NOT NULL,\n    PRIMARY KEY (nope)\n);\n", goodMeanings, goodRules),
			[]string{"db_schema.txt:3:", `"nope"`}},
		{"meanings not an object", files(goodSchema, "[1, 2]", goodRules),
			[]string{"db_column_meaning_base.json:1:", "JSON object"}},
		{"malformed meanings", files(goodSchema, "{\n\"db|t|id\": \"the key\",\n\"db|t|v\" \"a value\"}", goodRules),
			[]string{"db_column_meaning_base.json:3:"}},
		{"meaning key not three parts", files(goodSchema, "{\n\"t|id\": \"the key\"}", goodRules),
			[]string{"db_column_meaning_base.json:2:", `"t|id"`}},
		{"missing rules file", files(goodSchema, goodMeanings, ""),
			[]string{"db_kb.jsonl", "no such file"}},
		{"missing meanings file", files(goodSchema, "", goodRules),
			[]string{"db_column_meaning_base.json", "no such file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := livesqlbench.Read(writeDB(t, c.files))
			if err == nil {
				t.Fatal("read without an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	dir := writeDB(t, files(goodSchema, goodMeanings, ""))
	// A folder where the file should be cannot be read, even by root.
	if err := os.Mkdir(filepath.Join(dir, "db"+livesqlbench.RulesSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := livesqlbench.Read(dir)
	if err == nil || !strings.Contains(err.Error(), "db_kb.jsonl") {
		t.Fatalf("got %v, want an error naming db_kb.jsonl", err)
	}
}

func TestGoodInputReads(t *testing.T) {
	db, err := livesqlbench.Read(writeDB(t, files(goodSchema, goodMeanings, goodRules)))
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Tables) != 1 || len(db.Rules) != 2 || db.Tables[0].Column("v").Meaning != "a value" {
		t.Fatalf("read %d tables, %d rules", len(db.Tables), len(db.Rules))
	}
}

// Executable DDL reads too: defaults are dropped, inline keys kept, and a
// bare REFERENCES means the referenced table's primary key.
func TestSchemaReadsPlainDDL(t *testing.T) {
	schema := `CREATE TABLE public.customers (
    id bigint PRIMARY KEY,
    name character varying(80) NOT NULL DEFAULT 'x',
    created timestamp with time zone DEFAULT now()
);
CREATE TABLE orders (
    id integer NOT NULL,
    customer bigint REFERENCES customers,
    total numeric(10,2) CHECK (total >= 0),
    PRIMARY KEY (id),
    CONSTRAINT positive CHECK (total > 0),
    UNIQUE (customer, id)
);
`
	path := filepath.Join(t.TempDir(), "db"+livesqlbench.SchemaSuffix)
	if err := os.WriteFile(path, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	tables, err := livesqlbench.ReadSchema(path)
	if err != nil {
		t.Fatal(err)
	}
	c, o := tables[0], tables[1]
	if c.Name != "customers" || len(c.PrimaryKey) != 1 || c.PrimaryKey[0] != "id" || !c.Column("id").NotNull {
		t.Errorf("customers: %+v", c)
	}
	if n := c.Column("name"); n.Type != "character varying(80)" || !n.NotNull {
		t.Errorf("customers.name: %+v", n)
	}
	if cr := c.Column("created"); cr.Type != "timestamp with time zone" || cr.NotNull {
		t.Errorf("customers.created: %+v", cr)
	}
	if len(o.ForeignKeys) != 1 || o.ForeignKeys[0].RefTable != "customers" || o.ForeignKeys[0].RefColumns[0] != "id" {
		t.Errorf("orders foreign keys: %+v", o.ForeignKeys)
	}
	if len(o.Columns) != 3 {
		t.Errorf("orders has %d columns, want 3 (constraints are not columns)", len(o.Columns))
	}
	if typ := o.Column("total").Type; typ != "numeric(10,2)" {
		t.Errorf("orders.total type %q", typ)
	}
}
