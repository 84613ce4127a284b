// Package compile turns what a team already knows about a database (its
// catalog, column descriptions and business rules) into an OKF v0.2 bundle
// an agent can navigate.
//
// Every source fills one model, a Database of Tables, Columns, keys and
// Rules; the subpackages are the readers (livesqlbench for LiveSQLBench raw
// docs, catalog for a live PostgreSQL or SQLite database, bird for BIRD
// description CSVs). Build links the rules to the tables and columns they
// use and renders the bundle in memory, with a Gaps report of what the
// sources leave out; Write swaps finished bundles into place so that a
// failed run never leaves half a bundle behind.
//
//	db, err := livesqlbench.Read("base-lite/disaster")
//	b, err := compile.Build(db, compile.Options{Generator: "okf/v1.0.0"})
//	err = compile.Write("bundles", compile.WriteOptions{}, b)
package compile

import (
	"fmt"
	"strings"
)

// Database is everything the sources say about one database.
type Database struct {
	// Name names the bundle folder and tags every concept.
	Name string
	// Engine is the SQL engine the tables live in: "postgres", "sqlite",
	// or another EngineName knows (a dbt adapter's); "" when unknown.
	Engine string
	Tables []*Table
	Rules  []*Rule
	// Sources are the files or catalogs read, cited by every concept they
	// contributed to.
	Sources []Source
	// Unmatched lists descriptions for tables or columns the database
	// lacks, as "table.column" (or "table"), for the gap report.
	Unmatched []string
	// Queries are query concepts (type SQL Query) the sources hold as OKF
	// files, written into the bundle's queries/ as they are.
	Queries []QueryFile
	// Live is the database whose catalog the sources read, where its
	// columns' values can be read (catalog.ReadValues); nil when they read
	// none. Nothing of it is written into the bundle.
	Live *Live
}

// Live locates a database okf can query.
type Live struct {
	// DSN is as package dsn reads it: sqlite:PATH or a PostgreSQL URL.
	DSN string
	// Schema is the PostgreSQL schema the tables are in; "" for SQLite.
	Schema string
	// Resource is how concepts cite the database: the catalog's source.
	Resource string
}

// QueryFile is one query concept of the sources, or of the bundle folder.
type QueryFile struct {
	Name string // the file name, e.g. late-deliveries.md
	Raw  []byte
	// Kept marks a query concept a person (or okf runs promote) wrote in
	// the bundle folder: listed in the index, its file left as it is.
	Kept bool
}

// Source is one input of a database, cited in frontmatter `sources`.
type Source struct {
	// ID is the footnote label of the source, unique in a database.
	ID string
	// Resource locates the source: a file name or a catalog URL.
	Resource string
	Title    string
	// Rules marks the source of the business rules; the other sources
	// are cited by table concepts.
	Rules bool
	// Values marks the source of columns' values, cited only by the table
	// concepts that list some.
	Values bool
}

// Table is one table of a database.
type Table struct {
	Name    string
	Columns []*Column
	// PrimaryKey lists the key's columns in key order; empty when the
	// source gives none.
	PrimaryKey  []string
	ForeignKeys []ForeignKey
	// Meaning is the table's own description (a COMMENT ON TABLE), if any.
	Meaning string
	// View marks a view rather than a stored table.
	View bool
	// Layer is where the table sits in the data's lineage, when the
	// sources say: LayerSource (data as loaded), LayerStaging (cleaned up
	// for other tables to be built from) or LayerMart (what people query).
	Layer string
	// Aliases are other names people call the table by (dbt's
	// meta.synonyms), written to its concept's aliases.
	Aliases []string
}

// The layers of Table.Layer, as a table concept's layer field writes them.
const (
	LayerSource  = "source"
	LayerStaging = "staging"
	LayerMart    = "mart"
)

// Column is one column of a table.
type Column struct {
	Name string
	// Type is the type as the source spells it, e.g. "character varying"
	// or "USER-DEFINED" in a catalog dump.
	Type    string
	NotNull bool
	// Meaning is the column's description, verbatim; "" when there is none.
	Meaning string
	// JSONFields are the documented or observed key paths of a JSON column,
	// relative to the column, in source order.
	JSONFields []JSONField
	// EnumType names the enum type of an enum column, when known.
	EnumType string
	// Enum holds the labels of an enum column, in declaration order, when
	// a catalog lists them.
	Enum []string
	// Values are the values read from the database, when it was read;
	// nil for none.
	Values *ValueList
	// PersonalData marks a column the sources, or a person in the bundle,
	// say holds personal data: its values are never read, and its table
	// concept lists it in personal_data.
	PersonalData bool
}

// ValueList holds values of a column as the database stores them.
type ValueList struct {
	// Values are every value of the column, in byte order, when Count is
	// 0; else the most frequent ones, most frequent first.
	Values []string
	// Count, when not 0, is how many distinct values the column holds (in
	// its first Rows rows, when Rows is not 0), of which Values are the
	// most frequent.
	Count int
	// Rows, when not 0, is how many of the table's rows were read: the
	// table holds more.
	Rows int
}

// JSONField is one key path inside a JSON column.
type JSONField struct {
	// Path is the dotted path below the column, e.g. "population.affected".
	Path    string
	Meaning string
}

// ForeignKey is a reference from columns of one table to another table.
type ForeignKey struct {
	Columns    []string
	RefTable   string
	RefColumns []string
}

// Rule kinds as LiveSQLBench names them; other kinds are kept as given.
const (
	CalculationKind  = "calculation_knowledge"
	DomainKind       = "domain_knowledge"
	IllustrationKind = "value_illustration"
)

// Rule is one business rule: a calculation, a definition or an
// illustration of a column's values.
type Rule struct {
	ID          int
	Name        string
	Description string
	// Definition is kept verbatim, LaTeX included.
	Definition string
	Kind       string
	// DependsOn lists the ids of the rules this one is built from.
	DependsOn []int
	// File, when set, is the bundle path of a concept a person wrote in a
	// bundle okf compiled before (see Kept): it is linked to the tables
	// whose columns it names and listed in the indexes, but its file is
	// theirs and is not rendered.
	File string
	// Aliases are other names people call the rule by (a dbt metric's
	// meta.synonyms), written to its concept's aliases.
	Aliases []string
}

// Table returns the table with the given name, compared without regard to
// case, or nil.
func (db *Database) Table(name string) *Table {
	for _, t := range db.Tables {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// Rule returns the rule with the given id, or nil.
func (db *Database) Rule(id int) *Rule {
	for _, r := range db.Rules {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// PersonalData lists the columns marked as personal data, as
// "table.column", in the order of the tables and their columns.
func (db *Database) PersonalData() []string {
	var out []string
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if c.PersonalData {
				out = append(out, t.Name+"."+c.Name)
			}
		}
	}
	return out
}

// Column returns the column with the given name, compared without regard
// to case, or nil.
func (t *Table) Column(name string) *Column {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// IsKey reports whether a column is part of the primary key.
func (t *Table) IsKey(column string) bool {
	for _, k := range t.PrimaryKey {
		if strings.EqualFold(k, column) {
			return true
		}
	}
	return false
}

// Check reports the first structural problem of a database that no bundle
// could be written from: a name that cannot name a folder, no tables,
// duplicate names, keys over columns that do not exist, duplicate rule
// ids, or rules that depend on missing rules.
// Foreign keys to tables or columns that do not exist are not errors: the
// gap report lists them.
func (db *Database) Check() error {
	if db.Name == "" || db.Name == "." || db.Name == ".." || strings.ContainsAny(db.Name, `/\`) {
		return fmt.Errorf("database name %q cannot name a bundle folder", db.Name)
	}
	if len(db.Tables) == 0 {
		return fmt.Errorf("database %s has no tables", db.Name)
	}
	tables := map[string]bool{}
	for _, t := range db.Tables {
		if tables[strings.ToLower(t.Name)] {
			return fmt.Errorf("table %s is defined twice", t.Name)
		}
		tables[strings.ToLower(t.Name)] = true
		cols := map[string]bool{}
		for _, c := range t.Columns {
			if cols[strings.ToLower(c.Name)] {
				return fmt.Errorf("table %s: column %s is defined twice", t.Name, c.Name)
			}
			cols[strings.ToLower(c.Name)] = true
		}
		for _, k := range t.PrimaryKey {
			if !cols[strings.ToLower(k)] {
				return fmt.Errorf("table %s: primary key column %s is not a column of the table", t.Name, k)
			}
		}
		for _, fk := range t.ForeignKeys {
			if len(fk.Columns) == 0 || len(fk.Columns) != len(fk.RefColumns) {
				return fmt.Errorf("table %s: a foreign key from %d columns references %d", t.Name, len(fk.Columns), len(fk.RefColumns))
			}
			for _, c := range fk.Columns {
				if !cols[strings.ToLower(c)] {
					return fmt.Errorf("table %s: foreign key column %s is not a column of the table", t.Name, c)
				}
			}
		}
	}
	ids := map[int]bool{}
	for _, r := range db.Rules {
		if ids[r.ID] {
			return fmt.Errorf("rule id %d is used twice", r.ID)
		}
		ids[r.ID] = true
	}
	for _, r := range db.Rules {
		for _, d := range r.DependsOn {
			if !ids[d] {
				return fmt.Errorf("rule %d (%s) depends on rule %d, which does not exist", r.ID, r.Name, d)
			}
		}
	}
	return nil
}
