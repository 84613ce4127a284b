package readmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
)

// roundTripDB is a compile model with what the facts must carry: single and
// composite primary keys (one in an order that is not the schema's), single
// and composite foreign keys, a key to a table the database lacks, types
// with and without "not null", a not-null column of no known type, a key
// column the model does not call not null, meanings with a pipe and
// without any, a column name with a backtick, a JSON column, a view and
// layers, columns marked as personal data (in a table that lists no values
// or JSON fields), and rules that name columns directly, through a JSON path and
// through another rule.
func roundTripDB() *compile.Database {
	return &compile.Database{
		Name: "depot", Engine: "postgres",
		Tables: []*compile.Table{
			{
				Name: "orders", PrimaryKey: []string{"ordid"}, Layer: compile.LayerMart,
				Columns: []*compile.Column{
					{Name: "ordid", Type: "integer", NotNull: true, Meaning: "Order number."},
					{Name: "placed", Type: "timestamp without time zone", NotNull: true, Meaning: "When the order was placed."},
					{Name: "channel", Type: "character varying", Meaning: "web | phone | store"},
					{Name: "discount", NotNull: true, Meaning: "Discount given; its type is not known."},
					{Name: "attrs", Type: "jsonb", Meaning: "Order attributes.", JSONFields: []compile.JSONField{{Path: "gift.wrapped", Meaning: "Gift wrapping asked for."}}},
				},
			},
			{
				Name: "order_lines", PrimaryKey: []string{"ordid", "lineno"},
				Columns: []*compile.Column{
					{Name: "lineno", Type: "smallint", Meaning: "Line within the order."},
					{Name: "ordid", Type: "integer", NotNull: true, Meaning: "The order."},
					{Name: "qty", Type: "integer", NotNull: true, Meaning: "Units ordered."},
					{Name: "unitprice", Type: "numeric(10, 2)", Meaning: "Price of one unit."},
					{Name: "odd`name", Type: "text"},
				},
				ForeignKeys: []compile.ForeignKey{{Columns: []string{"ordid"}, RefTable: "orders", RefColumns: []string{"ordid"}}},
			},
			{
				Name: "shipments", PrimaryKey: []string{"shipid"}, View: true, Layer: compile.LayerStaging,
				Columns: []*compile.Column{
					{Name: "shipid", Type: "integer", NotNull: true, Meaning: "Shipment number."},
					{Name: "shipord", Type: "integer", NotNull: true, Meaning: "The order of the line shipped."},
					{Name: "shipline", Type: "smallint", NotNull: true, Meaning: "The line shipped."},
					{Name: "carrier", Type: "text", Meaning: "Carrier code."},
					{Name: "shippeddt", Type: "date", Meaning: "Day the parcel left."},
					{Name: "promisedt", Type: "date", Meaning: "Day promised to the customer."},
					{Name: "recipient", Type: "text", Meaning: "Who the parcel is for.", PersonalData: true},
					{Name: "phone", Type: "text", Meaning: "Where the carrier calls.", PersonalData: true},
				},
				ForeignKeys: []compile.ForeignKey{
					{Columns: []string{"shipord", "shipline"}, RefTable: "order_lines", RefColumns: []string{"ordid", "lineno"}},
					{Columns: []string{"carrier"}, RefTable: "carriers", RefColumns: []string{"code"}},
				},
			},
		},
		Rules: []*compile.Rule{
			{ID: 1, Name: "Line Revenue", Kind: compile.CalculationKind, Definition: "qty * unitprice"},
			{ID: 2, Name: "Big Order", Kind: compile.DomainKind, Definition: "An order whose Line Revenue adds up to more than 1000.", DependsOn: []int{1}},
			{ID: 3, Name: "Late Shipment", Kind: compile.DomainKind, Definition: "A shipment with shippeddt > promisedt."},
			{ID: 4, Name: "Gift Order", Kind: compile.DomainKind, Definition: "An order whose attrs.gift.wrapped is true."},
		},
	}
}

// tableView is a table's facts with their spans read, to compare with what
// a model says.
type tableView struct {
	Columns      []columnView
	PrimaryKey   []string
	ForeignKeys  []okf.ForeignKey
	PersonalData []string
}

type columnView struct {
	Name, Type string
	NotNull    bool
	Meaning    string
}

func view(s *Snapshot, c *Concept) *tableView {
	facts := c.Table()
	if facts == nil {
		return nil
	}
	v := &tableView{PrimaryKey: facts.PrimaryKey, ForeignKeys: facts.ForeignKeys, PersonalData: facts.PersonalData}
	for _, col := range facts.Columns {
		v.Columns = append(v.Columns, columnView{col.Name, s.Text(c, col.Type), col.NotNull, s.Text(c, col.Meaning)})
	}
	return v
}

// modelFacts are the table facts the model states, as a snapshot must
// carry them: a key column is never null.
func modelFacts(db *compile.Database) map[string]*tableView {
	out := map[string]*tableView{}
	for _, t := range db.Tables {
		f := &tableView{PrimaryKey: t.PrimaryKey}
		for _, c := range t.Columns {
			f.Columns = append(f.Columns, columnView{c.Name, c.Type, c.NotNull || t.IsKey(c.Name), c.Meaning})
			if c.PersonalData {
				f.PersonalData = append(f.PersonalData, c.Name)
			}
		}
		for _, fk := range t.ForeignKeys {
			concept := ""
			if ref := db.Table(fk.RefTable); ref != nil {
				concept = "tables/" + ref.Name
			}
			f.ForeignKeys = append(f.ForeignKeys, okf.ForeignKey{Columns: fk.Columns, Table: fk.RefTable, Concept: concept, RefColumns: fk.RefColumns})
		}
		out["tables/"+t.Name] = f
	}
	return out
}

// The columns each rule names, as compile's linker finds them.
var modelRuleFacts = map[string]*okf.RuleFacts{
	"knowledge/line-revenue": {Uses: []okf.ColumnUse{{Concept: "tables/order_lines", Columns: []string{"qty", "unitprice"}}}},
	"knowledge/big-order": {
		Uses:      []okf.ColumnUse{{Concept: "tables/order_lines", Columns: []string{"qty", "unitprice"}, Through: []string{"knowledge/line-revenue"}}},
		DependsOn: []string{"knowledge/line-revenue"},
	},
	"knowledge/late-shipment": {Uses: []okf.ColumnUse{{Concept: "tables/shipments", Columns: []string{"shippeddt", "promisedt"}}}},
	"knowledge/gift-order":    {Uses: []okf.ColumnUse{{Concept: "tables/orders", Columns: []string{"attrs"}, Paths: []string{"attrs.gift.wrapped"}}}},
}

// compiled renders a model with compile's renderer and reads its documents
// into a snapshot.
func compiled(t *testing.T, db *compile.Database) *Snapshot {
	t.Helper()
	b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, p := range b.Paths() {
		docs = append(docs, Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
	}
	s, st := Build("t", docs)
	if len(st.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", st.Diagnostics)
	}
	return s
}

func TestFactsRoundTripThroughCompile(t *testing.T) {
	db := roundTripDB()
	s := compiled(t, db)
	tables := modelFacts(db)
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if want, ok := tables[c.ID]; ok {
			if got := view(s, c); !reflect.DeepEqual(got, want) || c.Rule() != nil {
				t.Errorf("%s: facts\n%s\nwant\n%s", c.ID, asJSON(got), asJSON(want))
			}
			if tb := db.Table(strings.TrimPrefix(c.ID, "tables/")); c.Layer != tb.Layer {
				t.Errorf("%s: layer %q, want %q", c.ID, c.Layer, tb.Layer)
			}
			delete(tables, c.ID)
			continue
		}
		if c.Table() != nil || c.IsTable() {
			t.Errorf("%s is not a table but has table facts %s", c.ID, asJSON(c.Table()))
		}
		if want := modelRuleFacts[c.ID]; !reflect.DeepEqual(c.Rule(), want) {
			t.Errorf("%s: rule facts\n%s\nwant\n%s", c.ID, asJSON(c.Rule()), asJSON(want))
		}
	}
	if len(tables) > 0 {
		t.Errorf("no concept for tables %v", tables)
	}
}

func TestFactsSurviveEncodeDecode(t *testing.T) {
	s := compiled(t, roundTripDB())
	again := compiled(t, roundTripDB())
	if !bytes.Equal(s.Encode(), again.Encode()) || s.Digest != again.Digest {
		t.Fatal("the same documents gave two encodings")
	}
	back, err := Decode(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Concepts, s.Concepts) || back.Digest != s.Digest {
		t.Error("decoding changed the concepts or their facts")
	}
	ship, _ := back.Concept("tables/shipments")
	facts := ship.Table()
	if facts == nil || len(facts.ForeignKeys) == 0 || len(facts.ForeignKeys[0].Columns) != 2 {
		t.Fatalf("the composite key did not survive: %s", asJSON(facts))
	}
	// A span past its body must not decode into a snapshot that panics
	// when read.
	facts.Columns[0].Meaning = okf.Span{0, uint32(len(back.Body(ship)) + 1)}
	ship.facts = string(appendFacts(nil, facts, nil))
	if _, err := Decode(back.Encode()); err == nil {
		t.Error("decoded a column meaning outside its body")
	}
}

func TestFactsOfOtherShapes(t *testing.T) {
	// A schema that keeps the key in the type cell, names in bold, a
	// grain that orders a composite key, and prose around the table.
	table := "---\ntype: Table\ngrain: [b, a]\n---\n# Schema\n\nThe rows:\n\n" +
		"| Name | Type | Description |\n| :--- | :--- | :--- |\n" +
		"| **a** | text, primary key | First. |\n| **b** | int, NOT NULL, primary key | Second. |\n| c | int | Third \\| fourth. |\n\nAfter the table.\n"
	s, _ := Build("t", []Doc{
		{Bundle: "x", Path: "tables/t.md", Content: []byte(table)},
		{Bundle: "x", Path: "tables/plain.md", Content: []byte("---\ntype: BigQuery Table\n---\nNo schema at all.\n")},
		{Bundle: "x", Path: "notes/n.md", Content: []byte("---\ntype: Note\n---\n# Depends on\n\n* [missing](nope.md)\n* [t](../tables/t.md) and [plain](/tables/plain.md)\n")},
	})
	want := &tableView{
		Columns: []columnView{
			{"a", "text", true, "First."},
			{"b", "int", true, "Second."},
			{"c", "int", false, "Third | fourth."},
		},
		PrimaryKey: []string{"b", "a"},
	}
	if c, _ := s.Concept("tables/t"); !reflect.DeepEqual(view(s, c), want) {
		t.Errorf("facts\n%s\nwant\n%s", asJSON(view(s, c)), asJSON(want))
	}
	if c, _ := s.Concept("tables/plain"); c.Table() == nil || len(c.Table().Columns) != 0 {
		t.Errorf("a table without a schema: %s", asJSON(c.Table()))
	}
	if c, _ := s.Concept("notes/n"); c.Rule() == nil || strings.Join(c.Rule().DependsOn, " ") != "tables/t" {
		t.Errorf("depends on: %s", asJSON(c.Rule()))
	}
}

func asJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestValuesFacts: the Values and Enum values sections of a table concept
// are its columns' stored values: each value where it is written, read
// back with its doubled quotes single, the most frequent ones marked, an
// enum's type a note; lines of another shape are no values.
func TestValuesFacts(t *testing.T) {
	doc := "---\ntype: SQLite Table\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `gender` | TEXT |  | gender |\n| `city` | TEXT |  | city |\n\n" +
		"# Enum values\n\n* `status` (`status_enum`): 'open', 'closed'\n\n" +
		"# Values\n\n* `gender`: 'Female', 'Male', 'N/A'\n* `city` (1,203 values, the most frequent): 'O''Hare', 'Paris'\n* not a value line\n* `broken`: 'unclosed\n"
	s, _ := Build("t", []Doc{{Bundle: "b", Path: "tables/people.md", Content: []byte(doc)}})
	c := &s.Concepts[0]
	facts := c.Table()
	var got []string
	for _, v := range facts.Values {
		var vals []string
		for _, sp := range v.Values {
			vals = append(vals, s.Value(c, sp))
		}
		got = append(got, fmt.Sprintf("%s %v %q", v.Column, v.Some, vals))
	}
	want := []string{`status false ["open" "closed"]`, `gender false ["Female" "Male" "N/A"]`, `city true ["O'Hare" "Paris"]`}
	if !slices.Equal(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	// The facts decode to what was read.
	if again := s.Concepts[0].Table(); !reflect.DeepEqual(again.Values, facts.Values) {
		t.Errorf("decoded %+v", again.Values)
	}
}

// TestJSONFieldsFacts: the JSON fields section of a table concept lists the
// documented paths inside its JSON columns with their meanings, with or
// without stored values beside them; a rule's Columns used names the paths
// it reads in brackets after their column.
func TestJSONFieldsFacts(t *testing.T) {
	schema := "---\ntype: PostgreSQL Table\n---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `id` | int | primary key | id |\n| `prop` | jsonb |  | housing facts |\n\n"
	fields := "# JSON fields\n\n* `prop.own`: ownership (Rent, Own).\n* `prop.mortgage.balance`: balance owed\n* `noPath`: not a field\n* `prop.bare`\n"
	rule := "---\ntype: Calculation\ntitle: Housing\n---\n\n# Definition\n\nx\n\n# Columns used\n\n* [homes](/tables/homes.md): `prop` (`prop.own`, `prop.mortgage.balance`), `id`\n"
	for name, table := range map[string]string{
		"fields":            schema + fields,
		"values and fields": schema + "# Values\n\n* `id`: '1'\n\n" + fields,
	} {
		s, _ := Build("t", []Doc{{Bundle: "b", Path: "tables/homes.md", Content: []byte(table)}, {Bundle: "b", Path: "knowledge/housing.md", Content: []byte(rule)}})
		var home, housing *Concept
		for i := range s.Concepts {
			switch s.Concepts[i].ID {
			case "tables/homes":
				home = &s.Concepts[i]
			case "knowledge/housing":
				housing = &s.Concepts[i]
			}
		}
		var got []string
		for _, f := range home.Table().Fields {
			got = append(got, f.Column()+" "+f.Path+": "+s.Text(home, f.Meaning))
		}
		want := []string{"prop prop.own: ownership (Rent, Own).", "prop prop.mortgage.balance: balance owed", "prop prop.bare: "}
		if !slices.Equal(got, want) {
			t.Errorf("%s: fields %q, want %q", name, got, want)
		}
		if u := housing.Rule().Uses; len(u) != 1 || !slices.Equal(u[0].Columns, []string{"prop", "id"}) || !slices.Equal(u[0].Paths, []string{"prop.own", "prop.mortgage.balance"}) {
			t.Errorf("%s: uses %+v", name, u)
		}
	}
}

// A person marks columns as personal data by hand: a list or one name,
// each trimmed, once whatever its case, the empty left out.
func TestPersonalDataFacts(t *testing.T) {
	schema := "# Schema\n\n| Column | Type |\n|---|---|\n| `email` | text |\n| `custname` | text |\n"
	s, _ := Build("t", []Doc{
		{Bundle: "x", Path: "tables/customers.md", Content: []byte("---\ntype: Table\npersonal_data: [email, ' custname ', Email, '']\n---\n" + schema)},
		{Bundle: "x", Path: "tables/one.md", Content: []byte("---\ntype: Table\npersonal_data: email\n---\n" + schema)},
		{Bundle: "x", Path: "tables/none.md", Content: []byte("---\ntype: Table\n---\n" + schema)},
	})
	for id, want := range map[string][]string{"tables/customers": {"email", "custname"}, "tables/one": {"email"}, "tables/none": nil} {
		c, err := s.Concept(id)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Table().PersonalData; !slices.Equal(got, want) {
			t.Errorf("%s: personal data %q, want %q", id, got, want)
		}
	}
	back, err := Decode(s.Encode())
	if err != nil || !reflect.DeepEqual(back.Concepts, s.Concepts) {
		t.Errorf("decoding changed the marks: %v", err)
	}
}
