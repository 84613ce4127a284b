package load_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // load.DuckDB opens the file through it
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/compile/load"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestEveryBaseLiteSchemaLoadsIntoPostgres(t *testing.T) {
	cluster := pgtest.Shared(t)
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			db, err := livesqlbench.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []load.Options{{}, {EnumsFromMeanings: true, AddMissingKeys: true}} {
				dsn := cluster.NewDatabase(t)
				p, err := load.Postgres(context.Background(), dsn, db, opt)
				if err != nil {
					t.Fatalf("%+v: %v", opt, err)
				}
				for _, n := range p.Notes {
					t.Logf("%+v: %s", opt, n)
				}
			}
		})
	}
}

type question struct {
	ID         string   `json:"instance_id"`
	Database   string   `json:"selected_database"`
	Preprocess []string `json:"preprocess_sql"`
	Solution   []string `json:"sol_sql"`
}

func questions(t *testing.T) []question {
	path := filepath.Join(shareddata.Dir(t, "livesqlbench", "questions"), "lite_7db_train.jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var qs []question
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var q question
		if err := json.Unmarshal(line, &q); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		qs = append(qs, q)
	}
	return qs
}

// The gold SQL of the train questions runs against the reconstructed
// schemas once the missing surrogate keys are added back. The databases
// are empty, so a statement may only fail for want of rows: an insert
// whose foreign key finds no referenced row (museum_M_5).
func TestGoldSQLRunsAgainstLoadedSchema(t *testing.T) {
	cluster := pgtest.Shared(t)
	root := shareddata.Dir(t, "livesqlbench", "base-lite")
	ctx := context.Background()
	for _, opt := range []load.Options{{AddMissingKeys: true}, {EnumsFromMeanings: true, AddMissingKeys: true}} {
		dsns := map[string]string{}
		ran := 0
		for _, q := range questions(t) {
			dsn, ok := dsns[q.Database]
			if !ok {
				db, err := livesqlbench.Read(filepath.Join(root, q.Database))
				if err != nil {
					t.Fatal(err)
				}
				dsn = cluster.NewDatabase(t)
				if _, err := load.Postgres(ctx, dsn, db, opt); err != nil {
					t.Fatal(err)
				}
				dsns[q.Database] = dsn
			}
			if err := runInRollback(ctx, dsn, append(append([]string(nil), q.Preprocess...), q.Solution...)); err != nil {
				var pgErr *pgconn.PgError
				if !errors.As(err, &pgErr) || pgErr.Code != "23503" {
					t.Errorf("%+v: %s: %v", opt, q.ID, err)
				}
				continue
			}
			ran++
		}
		if want := len(questions(t)) - 1; ran != want {
			t.Errorf("%+v: %d of %d questions ran, want %d", opt, ran, len(questions(t)), want)
		}
	}
}

// Without the repair, exactly the four museum questions that use the
// surrogate keys the reconstructed schema lost fail, each naming the column.
func TestGoldSQLWithoutRepairNamesTheLostKeys(t *testing.T) {
	cluster := pgtest.Shared(t)
	root := shareddata.Dir(t, "livesqlbench", "base-lite")
	ctx := context.Background()
	db, err := livesqlbench.Read(filepath.Join(root, "museum"))
	if err != nil {
		t.Fatal(err)
	}
	dsn := cluster.NewDatabase(t)
	if _, err := load.Postgres(ctx, dsn, db, load.Options{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"museum_5": "sensitivityregistry", "museum_8": "envreadregistry", "museum_9": "lightradregistry", "museum_10": "envreadregistry"}
	for _, q := range questions(t) {
		if q.Database != "museum" {
			continue
		}
		err := runInRollback(ctx, dsn, append(append([]string(nil), q.Preprocess...), q.Solution...))
		var pgErr *pgconn.PgError
		switch col, lost := want[q.ID]; {
		case lost && (err == nil || !strings.Contains(err.Error(), col)):
			t.Errorf("%s: got %v, want an error naming %s", q.ID, err, col)
		case !lost && err != nil && (!errors.As(err, &pgErr) || pgErr.Code != "23503"):
			t.Errorf("%s: %v", q.ID, err)
		}
	}
}

// runInRollback runs statements in a transaction it then rolls back.
func runInRollback(ctx context.Context, dsn string, stmts []string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
	}
	return nil
}

func TestLoadIntoSQLite(t *testing.T) {
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		db, err := livesqlbench.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), db.Name+".db")
		if _, err := load.SQLite(context.Background(), path, db, load.Options{EnumsFromMeanings: true, AddMissingKeys: true}); err != nil {
			t.Fatalf("%s: %v", db.Name, err)
		}
		if _, err := load.SQLite(context.Background(), path, db, load.Options{}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("loading %s twice: got %v, want an already-exists error", path, err)
		}
	}
}

// The plan says which executable type each column got.
func TestPlanTypes(t *testing.T) {
	db, err := livesqlbench.Read(filepath.Join("..", "livesqlbench", "testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt    load.Options
		column string
		want   string
	}{
		{load.Options{}, "customers.tier", "tier_enum"},
		{load.Options{EnumsFromMeanings: true}, "customers.tier", "tier_enum"},
		{load.Options{}, "orders.shipinfo", "jsonb"},
		{load.Options{}, "orderlines.lineno", "smallint"},
	} {
		p, err := load.PostgresDDL(db, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Types[c.column]; got != c.want {
			t.Errorf("%+v: %s is %q, want %q", c.opt, c.column, got, c.want)
		}
	}
	p, _ := load.PostgresDDL(db, load.Options{})
	if !slices.Contains(p.Statements, "CREATE DOMAIN tier_enum AS text") {
		t.Errorf("without labels tier_enum should be a domain: %q", p.Statements)
	}
	p, _ = load.PostgresDDL(db, load.Options{EnumsFromMeanings: true})
	if !slices.Contains(p.Statements, "CREATE TYPE tier_enum AS ENUM ('Bronze', 'Silver', 'Gold')") {
		t.Errorf("with labels tier_enum should be an enum: %q", p.Statements)
	}
}

func TestLabelsFromMeaning(t *testing.T) {
	for _, c := range []struct {
		meaning string
		want    []string
	}{
		{"An enum (WarehouseState_enum) describing the warehouse's condition; values: 'Fair', 'Excellent', 'Good', 'Poor'.", []string{"Fair", "Excellent", "Good", "Poor"}},
		{"An enum (HazType_enum) describing the primary hazard type; possible values include 'Wildfire', 'Earthquake'.", []string{"Wildfire", "Earthquake"}},
		{"An enum (Gender_enum) for gender (M, F).", []string{"M", "F"}},
		{"An enum (PaymentHistory_enum) storing loan payment history. Possible values: Poor, Fair, Good.", []string{"Poor", "Fair", "Good"}},
		{"auditstatus_enum enumerating the audit trail status. Currently possible values: (Complete, Missing, Partial).", []string{"Complete", "Missing", "Partial"}},
		{"An enum (DevScope_enum) indicating the tested device category (e.g., Keyboard, Mouse).", []string{"Keyboard", "Mouse"}},
		{"A VARCHAR(20) primary key (e.g., 'HUB0001').", nil},
		{"An enum (Risk_enum) for risk.", nil},
	} {
		if got := load.LabelsFromMeaning(c.meaning); !slices.Equal(got, c.want) {
			t.Errorf("LabelsFromMeaning(%q) = %q, want %q", c.meaning, got, c.want)
		}
	}
}

func TestLoadIntoDuckDB(t *testing.T) {
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		db, err := livesqlbench.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, opt := range []load.Options{{}, {EnumsFromMeanings: true, AddMissingKeys: true}} {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d.duckdb", db.Name, i))
			p, err := load.DuckDB(context.Background(), path, db, opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", db.Name, opt, err)
			}
			conn, err := sql.Open("duckdb", path+"?access_mode=read_only")
			if err != nil {
				t.Fatal(err)
			}
			var tables int
			if err := conn.QueryRow("SELECT count(*) FROM duckdb_tables()").Scan(&tables); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			if tables != len(db.Tables) {
				t.Errorf("%s %+v: %d tables in the file, want %d (%d notes)", db.Name, opt, tables, len(db.Tables), len(p.Notes))
			}
			if _, err := load.DuckDB(context.Background(), path, db, opt); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Fatalf("loading %s twice: got %v, want an already-exists error", path, err)
			}
		}
	}
}

// DuckDB declares foreign keys inside CREATE TABLE only, so a referenced
// table is created first, whatever the documented order.
func TestDuckDBReferencedTablesFirst(t *testing.T) {
	db, err := livesqlbench.Read(filepath.Join("..", "livesqlbench", "testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(db.Tables)
	p, err := load.DuckDBDDL(db, load.Options{EnumsFromMeanings: true})
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]bool{}
	for _, s := range p.Statements {
		name, ok := strings.CutPrefix(s, "CREATE TABLE ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		for _, line := range strings.Split(s, "\n") {
			if _, ref, ok := strings.Cut(line, " REFERENCES "); ok {
				if ref, _, _ = strings.Cut(ref, " "); !created[ref] {
					t.Errorf("%s references %s before it is created", name, ref)
				}
			}
		}
		created[name] = true
	}
	if len(created) != len(db.Tables) {
		t.Errorf("%d tables created, want %d", len(created), len(db.Tables))
	}
	pg, err := load.PostgresDDL(db, load.Options{EnumsFromMeanings: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(strings.Join(p.Statements, "\n"), "FOREIGN KEY"), strings.Count(strings.Join(pg.Statements, "\n"), "FOREIGN KEY"); got != want || want == 0 {
		t.Errorf("%d foreign keys created, want PostgreSQL's %d", got, want)
	}
	if !slices.Contains(p.Statements, "CREATE TYPE tier_enum AS ENUM ('Bronze', 'Silver', 'Gold')") {
		t.Errorf("tier_enum should be an enum: %q", p.Statements)
	}
	if got := p.Types["orders.shipinfo"]; got != "JSON" {
		t.Errorf("orders.shipinfo is %q, want JSON", got)
	}
}
