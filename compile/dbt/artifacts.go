package dbt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/okf-tools/okf/compile"
)

// The artifacts dbt writes under the project's target path: the manifest
// (any command that parses the project), whose metadata names the adapter
// it parsed with, and the catalog (dbt docs generate), which holds the
// warehouse's columns and their types.
const (
	manifestFile = "manifest.json"
	catalogFile  = "catalog.json"
)

// manifestAdapter returns the adapter_type of the manifest's metadata, ""
// when there is no manifest or it names none.
func (p *project) manifestAdapter() (string, error) {
	if p.targetPath == "" {
		return "", nil
	}
	rel := path.Join(p.targetPath, manifestFile)
	data, err := os.ReadFile(p.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading dbt's manifest: %w", err)
	}
	// A manifest holds the whole project, often megabytes of it: only the
	// metadata is decoded, and dbt writes it first.
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", p.jsonError(rel, data, dec, err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", p.jsonError(rel, data, dec, err)
		}
		if key != "metadata" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", p.jsonError(rel, data, dec, err)
			}
			continue
		}
		var meta struct {
			AdapterType string `json:"adapter_type"`
		}
		if err := dec.Decode(&meta); err != nil {
			return "", p.jsonError(rel, data, dec, err)
		}
		return strings.ToLower(strings.TrimSpace(meta.AdapterType)), nil
	}
	return "", nil
}

// catalogColumn is a column as the catalog lists it.
type catalogColumn struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// readCatalog reads the catalog's columns of every node and source, by
// lower unique_id, each in the warehouse's column order. A project whose
// docs were never generated has no catalog, and none is read.
func (p *project) readCatalog() error {
	if p.targetPath == "" {
		return nil
	}
	rel := path.Join(p.targetPath, catalogFile)
	data, err := os.ReadFile(p.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading dbt's catalog: %w", err)
	}
	type entry struct {
		Columns map[string]catalogColumn `json:"columns"`
	}
	var c struct {
		Nodes   map[string]entry `json:"nodes"`
		Sources map[string]entry `json:"sources"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return p.jsonError(rel, data, dec, err)
	}
	p.catalog = map[string][]catalogColumn{}
	for _, m := range []map[string]entry{c.Nodes, c.Sources} {
		for id, e := range m {
			var cols []catalogColumn
			for key, col := range e.Columns {
				if col.Name == "" {
					col.Name = key
				}
				cols = append(cols, col)
			}
			slices.SortFunc(cols, func(a, b catalogColumn) int {
				return cmp.Or(cmp.Compare(a.Index, b.Index), strings.Compare(a.Name, b.Name))
			})
			p.catalog[strings.ToLower(id)] = cols
		}
	}
	return nil
}

// uniqueID is how dbt keys a resource in its artifacts, lower:
// model.<project>.<name>, seed.<project>.<name>, and
// source.<project>.<source>.<table>.
func (p *project) uniqueID(kind string, names ...string) string {
	return strings.ToLower(strings.Join(append([]string{kind, p.name}, names...), "."))
}

// applyCatalog types a table's columns as the warehouse has them where the
// project declares no data_type, and adds those of a model or source that
// no properties file lists; a seed's columns stay its CSV header's. The
// catalog may be older than the project: a column it lacks is left as the
// project says.
func (p *project) applyCatalog(n *node) {
	cols := p.catalog[n.uid]
	if len(cols) == 0 {
		return
	}
	p.used(p.targetPath)
	for _, cc := range cols {
		c := n.table.Column(cc.Name)
		switch {
		case c == nil && n.kind == seedKind:
			continue
		case c == nil:
			c = &compile.Column{Name: cc.Name}
			n.table.Columns = append(n.table.Columns, c)
		case n.typed[strings.ToLower(c.Name)]:
			continue
		}
		if t := strings.TrimSpace(cc.Type); t != "" {
			c.Type = t
		}
	}
}

// jsonError names the file and line of a JSON artifact's error.
func (p *project) jsonError(rel string, data []byte, dec *json.Decoder, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New("want an object")
	}
	at := dec.InputOffset()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		at = int64(len(data))
	case errors.As(err, &syn):
		at = syn.Offset
	case errors.As(err, &typ):
		at = typ.Offset
	}
	line := 1 + bytes.Count(data[:min(max(at, 0), int64(len(data)))], []byte("\n"))
	return fmt.Errorf("%s:%d: not a dbt artifact okf can read: %v", p.abs(rel), line, err)
}
