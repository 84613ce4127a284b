package dbt

import (
	"path"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

var (
	// jinjaCommentRe is a Jinja comment, which dbt does not render: a
	// ref() inside it is no lineage.
	jinjaCommentRe = lazy.Regexp{Expr: `(?s)\{#.*?#\}`}
	// refCallRe finds the ref() calls of a model's SQL or Python,
	// ref('model') or ref('package', 'model'), with or without a version.
	refCallRe = lazy.Regexp{Expr: `\bref\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?`}
)

// refsOf returns the lower names a model's code ref()s, as dbt's static
// parser reads them.
func refsOf(code []byte) []string {
	var out []string
	for _, m := range refCallRe.Get().FindAllSubmatch(jinjaCommentRe.Get().ReplaceAll(code, nil), -1) {
		name := m[1]
		if len(m[2]) > 0 {
			name = m[2]
		}
		out = append(out, strings.ToLower(string(name)))
	}
	return out
}

// layerFolders are the folders dbt's project layout names after the
// layers of its models.
var layerFolders = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"staging": compile.LayerStaging, "intermediate": compile.LayerStaging,
		"marts": compile.LayerMart, "mart": compile.LayerMart,
	}
}}

// folderLayer returns the layer the folders of a model's file below its
// model path name, the deepest first; "" when none does.
func folderLayer(f projectFile) string {
	dirs := strings.Split(path.Dir(strings.TrimPrefix(f.rel, f.root+"/")), "/")
	for i := len(dirs) - 1; i >= 0; i-- {
		if l, ok := layerFolders.Get()[strings.ToLower(dirs[i])]; ok {
			return l
		}
	}
	return ""
}

// readExposures marks the tables an exposure of f depends on as exposed.
// A dependency on no table of the project (a metric, a missing model) is
// left alone: exposures only rank.
func (p *project) readExposures(f *yfile) error {
	items, err := f.entries("exposures")
	if err != nil {
		return err
	}
	for _, it := range items {
		deps, err := f.texts(it, "depends_on")
		if err != nil {
			return err
		}
		for _, d := range deps {
			if n, err := p.resolve(f, it, "exposure "+name(it), d); err == nil {
				n.exposed = true
			}
		}
	}
	return nil
}

// setLayers sets each table's layer from what dbt says of it. An exposed
// table (by an exposure or a semantic model) is a mart. Seeds and sources
// hold data as loaded. A model in a folder of dbt's layout is of that
// folder's layer. Else a model other models are built from is staging,
// unless it is a product itself: described or built from other models.
// Every other model is a mart.
func (p *project) setLayers() {
	for _, sm := range p.sem.models {
		sm.n.exposed = true
	}
	built := map[*node]bool{} // the models built from a model
	feeds := map[*node]bool{} // the tables a model is built from
	for _, n := range p.nodes {
		for _, r := range n.refs {
			if up := p.refs[r]; up != nil && up != n {
				feeds[up] = true
				if up.kind == modelKind {
					built[n] = true
				}
			}
		}
	}
	for _, n := range p.nodes {
		t := n.table
		switch {
		case n.exposed:
			t.Layer = compile.LayerMart
		case n.kind != modelKind:
			t.Layer = compile.LayerSource
		case n.folderLayer != "":
			t.Layer = n.folderLayer
		case feeds[n] && !built[n] && !(n.documented && strings.TrimSpace(t.Meaning) != ""):
			t.Layer = compile.LayerStaging
		default:
			t.Layer = compile.LayerMart
		}
	}
}
