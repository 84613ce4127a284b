// Package dbt reads a dbt project into the compile model, without running
// dbt or any SQL.
//
// A project is a folder with dbt_project.yml at its root. Its name names
// the database; its model and seed paths hold the tables: a model per .sql
// or .py file, a seed per .csv file (the header gives the columns, the
// values their types), and every table of the sources the properties
// files (.yml, .yaml) declare. The properties give descriptions, column
// types, and tests: unique with not_null makes a primary key,
// relationships a foreign key, accepted_values the enum labels; a seed's
// column_types are the types dbt loads it with. Docs blocks ({% docs %} in
// .md files under the docs paths) are resolved where a description calls
// doc(), and descriptions made one line of compact text. The adapter
// (profiles.yml, else the manifest dbt wrote, else the adapter package
// installed) names the engine; the catalog dbt docs generate writes gives
// the warehouse's types of the columns the project leaves untyped, and the
// columns it leaves unlisted. The lineage (ref()s, exposures, dbt's folder
// layout) puts each table in a layer: source, staging or mart. The
// semantic layer (semantic_models and metrics) becomes one calculation
// rule per metric, whose definition states the calculation in words and
// as SQL over the tables, so that the linker joins each metric to the
// columns it uses.
//
// Read compiles a project on its own; Apply layers one on a database read
// from a live catalog, which then keeps its types and keys. Every error
// names the file and line.
package dbt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/okf-tools/okf/compile"
)

// ProjectFile is the file that makes a folder a dbt project.
const ProjectFile = "dbt_project.yml"

// IsProject reports whether dir is a dbt project: dbt_project.yml at its
// root.
func IsProject(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, ProjectFile))
	return err == nil && info.Mode().IsRegular()
}

// Read reads the dbt project in dir into a database named after the
// project, on the engine of its dbt adapter (unknown when the project
// does not say).
func Read(dir string) (*compile.Database, error) {
	p, err := load(dir)
	if err != nil {
		return nil, err
	}
	db := &compile.Database{Name: p.name, Engine: p.engine, Unmatched: p.unmatched}
	for _, n := range p.nodes {
		db.Tables = append(db.Tables, n.table)
	}
	if err := p.addSemantics(db); err != nil {
		return nil, err
	}
	db.Sources = append(db.Sources, p.sources()...)
	return db, nil
}

// Apply layers the dbt project in dir on a database read from elsewhere,
// such as a live catalog: the catalog keeps its tables, types and keys;
// the project adds descriptions, the keys, joins and enum labels its tests
// prove where the catalog has none, and its metrics as rules. A table or
// column the project documents and the database lacks is recorded in
// Database.Unmatched.
func Apply(db *compile.Database, dir string) error {
	p, err := load(dir)
	if err != nil {
		return err
	}
	db.Unmatched = append(db.Unmatched, p.unmatched...)
	// The project's tables by their catalog names, for its joins too.
	matched := map[*node]*compile.Table{}
	names := map[string]string{}
	for _, n := range p.nodes {
		t := findTable(db, n)
		if t == nil {
			if n.documented {
				db.Unmatched = append(db.Unmatched, n.table.Name)
			}
			continue
		}
		matched[n] = t
		names[strings.ToLower(n.table.Name)] = t.Name
	}
	for _, n := range p.nodes {
		if t := matched[n]; t != nil {
			layer(db, t, n, names)
		}
	}
	if err := p.addSemantics(db); err != nil {
		return err
	}
	db.Sources = append(db.Sources, p.sources()...)
	return nil
}

// findTable finds the catalog table of a project table: by its name, and
// for a source table ("schema.table") also by the table alone, since a
// catalog read one schema at a time names its tables without one.
func findTable(db *compile.Database, n *node) *compile.Table {
	if t := db.Table(n.table.Name); t != nil {
		return t
	}
	if n.kind == sourceKind {
		return db.Table(n.identifier)
	}
	return nil
}

// layer copies what the project knows of a table onto the catalog's;
// names maps the project's table names to the catalog's. A model no
// properties file describes says nothing the catalog does not.
func layer(db *compile.Database, t *compile.Table, n *node, names map[string]string) {
	doc := n.table
	if n.documented && strings.TrimSpace(doc.Meaning) != "" {
		t.Meaning = doc.Meaning
	}
	t.Layer, t.Aliases = doc.Layer, doc.Aliases
	t.View = t.View || doc.View
	for _, dc := range doc.Columns {
		c := t.Column(dc.Name)
		if c == nil {
			db.Unmatched = append(db.Unmatched, t.Name+"."+dc.Name)
			continue
		}
		if strings.TrimSpace(dc.Meaning) != "" {
			c.Meaning = dc.Meaning
		}
		if c.Type == "" {
			c.Type = dc.Type
		}
		c.NotNull = c.NotNull || dc.NotNull
		if len(c.Enum) == 0 {
			c.Enum = dc.Enum
		}
	}
	if len(t.PrimaryKey) == 0 && allColumns(t, doc.PrimaryKey) {
		t.PrimaryKey = spelled(t, doc.PrimaryKey)
	}
	for _, fk := range doc.ForeignKeys {
		ref, ok := names[strings.ToLower(fk.RefTable)]
		if ok && allColumns(t, fk.Columns) {
			addForeignKey(t, compile.ForeignKey{Columns: spelled(t, fk.Columns), RefTable: ref, RefColumns: fk.RefColumns})
		}
	}
}

// allColumns reports whether names is non-empty and every name a column
// of t.
func allColumns(t *compile.Table, names []string) bool {
	for _, n := range names {
		if t.Column(n) == nil {
			return false
		}
	}
	return len(names) > 0
}

// spelled returns names as t spells its columns.
func spelled(t *compile.Table, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = t.Column(n).Name
	}
	return out
}

// addForeignKey adds fk unless t already has a foreign key from the same
// columns.
func addForeignKey(t *compile.Table, fk compile.ForeignKey) {
	for _, have := range t.ForeignKeys {
		if slices.EqualFunc(have.Columns, fk.Columns, strings.EqualFold) {
			return
		}
	}
	t.ForeignKeys = append(t.ForeignKeys, fk)
}

// Resource kinds of a project table.
const (
	modelKind  = "model"
	seedKind   = "seed"
	sourceKind = "source"
)

// node is one table of the project.
type node struct {
	kind  string
	table *compile.Table
	// identifier is a source table's name in its schema.
	identifier string
	// file is where the table is defined: the model's SQL, the seed's CSV,
	// or the properties file declaring a source.
	file string
	// documented is set once a properties entry describes the table.
	documented bool
	// unique holds the columns a unique test or constraint covers, and
	// combos the column sets a unique_combination_of_columns test does.
	unique map[string]bool
	combos [][]string
	// declared is the key a primary_key constraint declares.
	declared []string
	// refs are the lower names a model's code ref()s; exposed is set when
	// an exposure or a semantic model is built on the table.
	refs    []string
	exposed bool
	// folderLayer is the layer a model's folder names (see folderLayer).
	folderLayer string
	// columnTypes are a seed's column_types settings, column and type,
	// the project's shallowest first and its properties' last.
	columnTypes [][2]string
	// uid is the table's unique_id in dbt's artifacts (see uniqueID), and
	// typed the lower names of the columns a data_type types.
	uid   string
	typed map[string]bool
}

// project is what load reads of a dbt project.
type project struct {
	dir, name string
	// engine is the adapter's engine, "" when unknown (see readEngine).
	engine string
	// base prefixes every cited path: the project's folder name, so that
	// citations do not depend on where the project lies on this machine.
	base                             string
	config                           *yfile
	modelPaths, seedPaths, docsPaths []string
	nodes                            []*node
	// refs maps the lower name ref() uses to a model or seed;
	// sourceTables maps "source.table" (lower) to a source's table.
	refs, sourceTables map[string]*node
	// skipped maps the lower name of models and seeds that make no table
	// (ephemeral or disabled) to the reason.
	skipped   map[string]string
	docs      map[string]docBlock
	unmatched []string
	// roots are the project paths files were read from, in the order
	// first read, for the citations.
	roots []string
	sem   semantics
	// targetPath is where dbt writes its artifacts; catalog holds the
	// columns of its catalog.json by unique_id (see readCatalog).
	targetPath string
	catalog    map[string][]catalogColumn
}

func load(dir string) (*project, error) {
	p := &project{
		dir: dir, base: filepath.Base(filepath.Clean(dir)),
		refs: map[string]*node{}, sourceTables: map[string]*node{}, skipped: map[string]string{},
	}
	if err := p.readConfig(); err != nil {
		return nil, err
	}
	if err := p.readEngine(); err != nil {
		return nil, err
	}
	if err := p.readCatalog(); err != nil {
		return nil, err
	}
	if err := p.readDocs(); err != nil {
		return nil, err
	}
	if err := p.readModels(); err != nil {
		return nil, err
	}
	if err := p.readSeeds(); err != nil {
		return nil, err
	}
	if err := p.readProperties(); err != nil {
		return nil, err
	}
	p.setLayers()
	return p, nil
}

// readConfig reads dbt_project.yml: the name and the paths.
func (p *project) readConfig() error {
	f, err := readYAML(filepath.Join(p.dir, ProjectFile), ProjectFile)
	if err != nil {
		return err
	}
	if f.root == nil {
		return fmt.Errorf("%s: empty, want at least a name", f.path)
	}
	p.config = f
	if p.name, err = f.text(f.root, "name"); err != nil {
		return err
	}
	if strings.TrimSpace(p.name) == "" {
		return f.errorf(f.root, "the project has no name")
	}
	paths := func(key string, def ...string) ([]string, error) {
		ps, err := f.texts(f.root, key)
		if err != nil || ps == nil {
			return def, err
		}
		for _, s := range ps {
			if !filepath.IsLocal(filepath.FromSlash(s)) {
				return nil, f.errorf(lookup(f.root, key), "%s: %q is not a folder inside the project", key, s)
			}
		}
		return ps, nil
	}
	if p.modelPaths, err = paths("model-paths", "models"); err != nil {
		return err
	}
	if p.seedPaths, err = paths("seed-paths", "seeds"); err != nil {
		return err
	}
	if p.targetPath, err = f.text(f.root, "target-path"); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(p.targetPath) == "":
		p.targetPath = "target"
	case filepath.IsLocal(filepath.FromSlash(p.targetPath)):
		p.targetPath = path.Clean(p.targetPath)
	default:
		// dbt may write its artifacts anywhere; okf reads only the project.
		p.targetPath = ""
	}
	// dbt looks for docs blocks in every resource path unless told where.
	var def []string
	def = append(def, p.modelPaths...)
	def = append(def, p.seedPaths...)
	for _, k := range []struct{ key, def string }{
		{"test-paths", "tests"}, {"analysis-paths", "analyses"}, {"macro-paths", "macros"}, {"snapshot-paths", "snapshots"},
	} {
		ps, err := paths(k.key, k.def)
		if err != nil {
			return err
		}
		def = append(def, ps...)
	}
	p.docsPaths, err = paths("docs-paths", def...)
	return err
}

// projectFile is a file found under one of the project's paths.
type projectFile struct {
	root, rel string // the project path, and the file's slash path in the project
}

func (p *project) abs(rel string) string { return filepath.Join(p.dir, filepath.FromSlash(rel)) }

// find lists the files under roots whose names end in one of exts, each
// once, skipping hidden files and folders, in path order.
func (p *project) find(roots []string, exts ...string) ([]projectFile, error) {
	var out []projectFile
	seen := map[string]bool{}
	for _, root := range roots {
		top := p.abs(path.Clean(root))
		err := filepath.WalkDir(top, func(full string, d fs.DirEntry, err error) error {
			if err != nil {
				if full == top && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir // dbt takes a missing path as empty
				}
				return err
			}
			if full != top && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() || !slices.Contains(exts, strings.ToLower(filepath.Ext(full))) {
				return nil
			}
			rel, err := filepath.Rel(p.dir, full)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if !seen[rel] {
				seen[rel] = true
				out = append(out, projectFile{root: path.Clean(root), rel: rel})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the dbt project %s: %w", p.dir, err)
		}
	}
	return out, nil
}

// used records that a file under root was read, for the citations.
func (p *project) used(root string) {
	if !slices.Contains(p.roots, root) {
		p.roots = append(p.roots, root)
	}
}

// sources are the citations of the tables (the project file and each path
// read) and of the rules (each file that defines metrics). Tables cite
// folders rather than files: a project may hold a properties file per
// model, and every table concept cites every table source.
func (p *project) sources() []compile.Source {
	out := []compile.Source{{
		ID: "dbt_project", Resource: p.base + "/" + ProjectFile, Title: p.name + " dbt project",
	}}
	for _, root := range p.roots {
		out = append(out, compile.Source{
			ID: "dbt-" + slug(root), Resource: p.base + "/" + root + "/",
			Title: fmt.Sprintf("%s dbt project files under %s/", p.name, root),
		})
	}
	for _, f := range p.sem.metricFiles {
		out = append(out, compile.Source{
			ID: "dbt-metrics-" + slug(f), Resource: p.base + "/" + f,
			Title: fmt.Sprintf("%s dbt metrics (%s)", p.name, f), Rules: true,
		})
	}
	return out
}

// slug makes a path safe as a footnote label.
func slug(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '-'
	}, s), "-")
}
