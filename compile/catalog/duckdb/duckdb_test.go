package duckdb

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/sqlguard"
	// The guard's DuckDB engine, which ReadValues reads through.
	_ "github.com/okf-tools/okf/sqlguard/duckdb"
)

const hubsDDL = `CREATE TYPE mood AS ENUM ('sad', 'it''s fine', 'happy');
CREATE TABLE region (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE);
CREATE TABLE hub (id INTEGER, code VARCHAR, region_id INTEGER REFERENCES region (id), mood mood, doc JSON, capacity DECIMAL(10,2), secret VARCHAR, PRIMARY KEY (id, code));
COMMENT ON TABLE hub IS 'A place parcels change vans';
COMMENT ON COLUMN hub.capacity IS 'Parcels a day';
CREATE VIEW big_hub AS SELECT id, capacity FROM hub WHERE capacity > 100;
COMMENT ON VIEW big_hub IS 'Hubs with room';
INSERT INTO region VALUES (1, 'North'), (2, 'South');
INSERT INTO hub VALUES (1, 'LDS', 1, 'happy', '{"dock": {"doors": 4}, "open": true}', 1200.50, 'x'),
	(2, 'BRS', 2, 'sad', '{"dock": {"bays": 2}}', 80, 'y');
`

func writeHubs(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hubs.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(hubsDDL, ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRead(t *testing.T) {
	path := writeHubs(t)
	before, _ := os.ReadFile(path)
	// Through compile/source, as okf compile --from duckdb:PATH reads it.
	db, err := source.ReadCatalog(context.Background(), "duckdb:"+path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if db.Name != "hubs" || db.Engine != "duckdb" || db.Live.DSN != "duckdb:"+path || db.Live.Schema != "main" {
		t.Errorf("database %s (%s), live %+v", db.Name, db.Engine, db.Live)
	}
	var names []string
	for _, tb := range db.Tables {
		names = append(names, tb.Name)
	}
	if strings.Join(names, ",") != "hub,region,big_hub" {
		t.Errorf("tables %v", names)
	}
	hub, region, view := db.Table("hub"), db.Table("region"), db.Table("big_hub")
	if hub.Meaning != "A place parcels change vans" || view.Meaning != "Hubs with room" || !view.View || hub.View {
		t.Errorf("meanings %q, %q; view %v", hub.Meaning, view.Meaning, view.View)
	}
	if !reflect.DeepEqual(hub.PrimaryKey, []string{"id", "code"}) || !reflect.DeepEqual(region.PrimaryKey, []string{"id"}) {
		t.Errorf("primary keys %v, %v", hub.PrimaryKey, region.PrimaryKey)
	}
	want := []compile.ForeignKey{{Columns: []string{"region_id"}, RefTable: "region", RefColumns: []string{"id"}}}
	if !reflect.DeepEqual(hub.ForeignKeys, want) {
		t.Errorf("foreign keys %+v", hub.ForeignKeys)
	}
	cols := map[string]*compile.Column{}
	for _, c := range hub.Columns {
		cols[c.Name] = c
	}
	if c := cols["capacity"]; c.Type != "DECIMAL(10,2)" || c.Meaning != "Parcels a day" || c.NotNull {
		t.Errorf("capacity: %+v", c)
	}
	if c := cols["code"]; c.Type != "VARCHAR" || !c.NotNull {
		t.Errorf("code: %+v", c)
	}
	if c := cols["mood"]; c.Type != "mood" || c.EnumType != "mood" || !reflect.DeepEqual(c.Enum, []string{"sad", "it's fine", "happy"}) {
		t.Errorf("mood: %+v", c)
	}
	var paths []string
	for _, f := range cols["doc"].JSONFields {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "dock.bays,dock.doors,open" {
		t.Errorf("JSON fields %v", paths)
	}
	if len(view.Columns) != 2 || view.Columns[1].Type != "DECIMAL(10,2)" {
		t.Errorf("the view's columns: %+v", view.Columns)
	}

	// The values are read through the guard, which hides what it hides.
	st, err := catalog.ReadValues(context.Background(), db, catalog.ValueOptions{Guard: sqlguard.Options{DeniedColumns: []string{"hub.secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := cols["code"].Values; v == nil || strings.Join(v.Values, ",") != "BRS,LDS" {
		t.Errorf("hub.code's values: %+v (%+v)", v, st)
	}
	if v := region.Columns[1].Values; v == nil || strings.Join(v.Values, ",") != "North,South" {
		t.Errorf("region.name's values: %+v (%+v)", v, st)
	}
	if cols["secret"].Values != nil {
		t.Errorf("a hidden column's values were read: %+v", cols["secret"].Values)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("reading the catalog changed the file")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("reading the catalog left %d files", len(entries))
	}
}

func TestReadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.duckdb")
	if _, err := Read(context.Background(), path, ""); err == nil || !strings.Contains(err.Error(), "no such DuckDB file") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("reading a missing file created it")
	}
}

func TestEnumLabels(t *testing.T) {
	for typ, want := range map[string][]string{
		"ENUM('a', 'b')":          {"a", "b"},
		"ENUM('it''s', 'x, y')":   {"it's", "x, y"},
		"VARCHAR":                 nil,
		"ENUM('unterminated)":     nil,
		"ENUM('a') trailing text": nil,
	} {
		got, ok := enumLabels(typ)
		if ok != (want != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("enumLabels(%q) = %q, %v; want %q", typ, got, ok, want)
		}
	}
}
