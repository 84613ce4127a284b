package sqlguard

// Catalog is what the database holds that a query may name: the columns of
// every table and view in the readable schemas. The validator resolves
// each column reference, star and join against it, the way the database
// will, so that a hidden column cannot be read under another spelling.
// The engines read it when they connect.
type Catalog struct {
	// Tables maps "schema.table" to the table's columns in order. Names
	// are as the database spells them (lower case for SQLite).
	Tables map[string][]string
	// Rowid maps each SQLite table that has a rowid to its INTEGER
	// PRIMARY KEY column ("" when it has none): rowid, oid and _rowid_
	// read that column. Tables WITHOUT ROWID are absent.
	Rowid map[string]string
}

// table returns the columns of schema.name and whether the catalog has it.
func (c *Catalog) table(schema, name string) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	cols, ok := c.Tables[schema+"."+name]
	return cols, ok
}

// rowid reports whether schema.name has a rowid and the column it aliases.
func (c *Catalog) rowid(schema, name string) (ipk string, ok bool) {
	if c == nil || c.Rowid == nil {
		return "", false
	}
	ipk, ok = c.Rowid[schema+"."+name]
	return ipk, ok
}

// sqliteRowidNames are the names under which SQLite reads a rowid.
var sqliteRowidNames = []string{"rowid", "oid", "_rowid_"}
