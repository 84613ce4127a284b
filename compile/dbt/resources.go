package dbt

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

var (
	// configCallRe finds a {{ config(...) }} call in a model's SQL (or
	// dbt.config(...) in a Python model).
	configCallRe   = lazy.Regexp{Expr: `config\s*\(([^)]*)\)`}
	materializedRe = lazy.Regexp{Expr: `materialized\s*=\s*['"]([A-Za-z_]+)['"]`}
	disabledRe     = lazy.Regexp{Expr: `enabled\s*=\s*(?i:false)\b`}
)

// readModels makes a table of every model file under the model paths:
// named after the file, with no columns until a properties file lists
// them. Ephemeral and disabled models make no table in the warehouse and
// are left out.
func (p *project) readModels() error {
	files, err := p.find(p.modelPaths, ".sql", ".py")
	if err != nil {
		return err
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f.rel), path.Ext(f.rel))
		if prev := p.refs[strings.ToLower(name)]; prev != nil {
			return fmt.Errorf("%s: a model named %s is already defined in %s", p.abs(f.rel), name, prev.file)
		}
		sql, err := os.ReadFile(p.abs(f.rel))
		if err != nil {
			return fmt.Errorf("reading a model: %w", err)
		}
		materialized, enabled := p.projectConfig("models", f, name)
		for _, m := range configCallRe.Get().FindAllSubmatch(sql, -1) {
			if mm := materializedRe.Get().FindSubmatch(m[1]); mm != nil {
				materialized = string(mm[1])
			}
			if disabledRe.Get().Match(m[1]) {
				enabled = false
			}
		}
		if why := noTable(materialized, enabled); why != "" {
			p.skipped[strings.ToLower(name)] = why
			continue
		}
		p.used(f.root)
		p.add(&node{kind: modelKind, file: f.rel, refs: refsOf(sql), folderLayer: folderLayer(f), uid: p.uniqueID(modelKind, name), table: &compile.Table{
			Name:    name,
			Meaning: fmt.Sprintf("A dbt model (%s) that no properties file describes: its columns are not documented.", f.rel),
			View:    strings.EqualFold(materialized, "view"),
		}})
	}
	return nil
}

// noTable says why a resource makes no table, or "".
func noTable(materialized string, enabled bool) string {
	switch {
	case !enabled:
		return "disabled"
	case strings.EqualFold(materialized, "ephemeral"):
		return "ephemeral"
	}
	return ""
}

// add adds a table; ref() finds models and seeds by name, and the caller
// keys a source's table by its source.
func (p *project) add(n *node) {
	n.unique, n.typed = map[string]bool{}, map[string]bool{}
	p.nodes = append(p.nodes, n)
	if n.kind != sourceKind {
		p.refs[strings.ToLower(n.table.Name)] = n
	}
}

// projectConfig returns the materialization and whether a resource is
// enabled, as the models: or seeds: tree of dbt_project.yml sets them for
// its folder: the deepest setting wins.
func (p *project) projectConfig(tree string, f projectFile, name string) (materialized string, enabled bool) {
	enabled = true
	for _, level := range p.configLevels(tree, f, name) {
		if v := configValue(level, "materialized"); v != "" {
			materialized = v
		}
		if v := configValue(level, "enabled"); v != "" {
			enabled = !strings.EqualFold(v, "false")
		}
	}
	return materialized, enabled
}

// configLevels returns the levels of the models: or seeds: tree of
// dbt_project.yml that configure a resource, shallowest first: the tree's
// first level names projects; its next ones the folders below the
// resource path, then resources.
func (p *project) configLevels(tree string, f projectFile, name string) []*yaml.Node {
	level := lookup(p.config.root, tree)
	rel := strings.TrimPrefix(strings.TrimPrefix(f.rel, f.root), "/")
	parts := append([]string{p.name}, strings.Split(path.Dir(rel), "/")...)
	parts = append(parts, name)
	var out []*yaml.Node
	for i := 0; level != nil; i++ {
		out = append(out, level)
		if i == len(parts) {
			break
		}
		if parts[i] == "." {
			continue
		}
		level = lookup(level, parts[i])
	}
	return out
}

// configValue reads a scalar config of a dbt_project.yml level, written
// +key or key.
func configValue(level *yaml.Node, key string) string {
	for _, k := range []string{"+" + key, key} {
		if v := lookup(level, k); v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

// readSeeds makes a table of every .csv file under the seed paths: its
// header gives the columns, and their values the types dbt would load
// them as.
func (p *project) readSeeds() error {
	files, err := p.find(p.seedPaths, ".csv")
	if err != nil {
		return err
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f.rel), path.Ext(f.rel))
		if prev := p.refs[strings.ToLower(name)]; prev != nil {
			return fmt.Errorf("%s: seed %s has the name of the %s in %s", p.abs(f.rel), name, prev.kind, prev.file)
		}
		if _, enabled := p.projectConfig("seeds", f, name); !enabled {
			p.skipped[strings.ToLower(name)] = "disabled"
			continue
		}
		cols, err := readCSV(p.abs(f.rel))
		if err != nil {
			return err
		}
		p.used(f.root)
		n := &node{kind: seedKind, file: f.rel, uid: p.uniqueID(seedKind, name), table: &compile.Table{Name: name, Columns: cols}}
		for _, level := range p.configLevels("seeds", f, name) {
			for _, k := range []string{"column_types", "+column_types"} {
				n.columnTypes = append(n.columnTypes, columnTypes(lookup(level, k))...)
			}
		}
		p.add(n)
	}
	return nil
}

// columnTypes reads a column_types mapping, column to type, in its order.
func columnTypes(m *yaml.Node) [][2]string {
	var out [][2]string
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if v := deref(m.Content[i+1]); v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) != "" {
			out = append(out, [2]string{m.Content[i].Value, strings.TrimSpace(v.Value)})
		}
	}
	return out
}

// applyColumnTypes types a seed's columns as its column_types load them,
// over what its values and data_type say; the last entry for a column
// wins, as dbt merges the settings. An entry for no column is unmatched.
func (p *project) applyColumnTypes(n *node) {
	for _, ct := range n.columnTypes {
		if c := n.table.Column(ct[0]); c != nil {
			c.Type = ct[1]
		} else if miss := n.table.Name + "." + ct[0]; !slices.Contains(p.unmatched, miss) {
			p.unmatched = append(p.unmatched, miss)
		}
	}
}

// readCSV reads a seed's columns: the header's names, each typed by its
// values as dbt's loader infers them (integer, numeric, boolean, date,
// timestamp, else text).
func readCSV(file string) ([]*compile.Column, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading a seed: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:1: the seed has no header", file)
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	cols := make([]*compile.Column, len(header))
	kinds := make([]valueKind, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" || seen[strings.ToLower(h)] {
			return nil, fmt.Errorf("%s:1: the header's column %d is empty or repeated (%q)", file, i+1, h)
		}
		seen[strings.ToLower(h)] = true
		cols[i] = &compile.Column{Name: h}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		for i := range min(len(rec), len(cols)) {
			kinds[i] = kinds[i].widen(kindOf(strings.TrimSpace(rec[i])))
		}
	}
	for i, c := range cols {
		c.Type = kinds[i].typeName()
	}
	return cols, nil
}

func csvError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", file, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// valueKind is what a seed column's values all read as, from the
// narrowest kind up; the zero kind means no value seen yet.
type valueKind int

const (
	noValues valueKind = iota
	integerValues
	numberValues
	booleanValues
	dateValues
	timestampValues
	textValues
)

func (k valueKind) typeName() string {
	switch k {
	case integerValues:
		return "integer"
	case numberValues:
		return "numeric"
	case booleanValues:
		return "boolean"
	case dateValues:
		return "date"
	case timestampValues:
		return "timestamp"
	}
	return "text"
}

// widen combines the kind of the values so far with one more value's:
// integers widen to numbers and dates to timestamps; any other mix is
// text.
func (k valueKind) widen(v valueKind) valueKind {
	switch {
	case v == noValues || k == v:
		return k
	case k == noValues:
		return v
	case k == integerValues && v == numberValues, k == numberValues && v == integerValues:
		return numberValues
	case k == dateValues && v == timestampValues, k == timestampValues && v == dateValues:
		return timestampValues
	}
	return textValues
}

var timestampLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999999"}

// kindOf reads one CSV value; an empty value is a null and says nothing.
func kindOf(s string) valueKind {
	if s == "" {
		return noValues
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return integerValues
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpPnNiI") {
		return numberValues
	}
	if strings.EqualFold(s, "true") || strings.EqualFold(s, "false") {
		return booleanValues
	}
	if _, err := time.Parse("2006-01-02", s); err == nil {
		return dateValues
	}
	for _, l := range timestampLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return timestampValues
		}
	}
	return textValues
}
