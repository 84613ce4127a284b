package dbt

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/lazy"
)

// yfile is one YAML file of the project, kept as nodes so that every
// finding can name its line.
type yfile struct {
	// path is the file as opened (the project folder joined with rel),
	// which is how errors name it.
	path string
	// rel is the slash path inside the project.
	rel  string
	root *yaml.Node // the top-level mapping; nil for an empty file
}

// yamlLineRe reads the line yaml.v3 puts in its syntax errors.
var yamlLineRe = lazy.Regexp{Expr: `^yaml: line (\d+): (.*)$`}

// readYAML parses a YAML file whose top level must be a mapping.
func readYAML(path, rel string) (*yfile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := yamlLineRe.Get().FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("%s:%s: not valid YAML: %s", path, m[1], m[2])
		}
		return nil, fmt.Errorf("%s: not valid YAML: %s", path, strings.TrimPrefix(msg, "yaml: "))
	}
	f := &yfile{path: path, rel: rel}
	if len(doc.Content) == 0 {
		return f, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return f, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, f.errorf(root, "want a mapping of keys at the top, found %s", kindName(root))
	}
	f.root = root
	return f, nil
}

// errorf is an error at the line of n.
func (f *yfile) errorf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return fmt.Errorf("%s:%d: %s", f.path, line, fmt.Sprintf(format, args...))
}

// deref follows YAML aliases (*anchor) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// lookup returns the value of key in the mapping m, looking through YAML
// merge keys (<<: *defaults); nil when m is no mapping or lacks the key.
func lookup(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case key:
			return deref(m.Content[i+1])
		case "<<":
			merged = append(merged, deref(m.Content[i+1]))
		}
	}
	for _, v := range merged {
		if v.Kind == yaml.SequenceNode {
			for _, item := range v.Content {
				if found := lookup(item, key); found != nil {
					return found
				}
			}
		} else if found := lookup(v, key); found != nil {
			return found
		}
	}
	return nil
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// text returns the scalar at key of m, "" when absent or null; anything
// but a scalar is an error.
func (f *yfile) text(m *yaml.Node, key string) (string, error) {
	v := lookup(m, key)
	if isNull(v) {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", f.errorf(v, "%s: want a text, found %s", key, kindName(v))
	}
	return v.Value, nil
}

// list returns the items of the sequence at key of m; absent or null is
// none, anything but a sequence is an error.
func (f *yfile) list(m *yaml.Node, key string) ([]*yaml.Node, error) {
	v := lookup(m, key)
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, f.errorf(v, "%s: want a list, found %s", key, kindName(v))
	}
	items := make([]*yaml.Node, len(v.Content))
	for i, it := range v.Content {
		items[i] = deref(it)
	}
	return items, nil
}

// texts returns a list of scalars at key of m; a single scalar counts as a
// list of one, as dbt reads paths and filters.
func (f *yfile) texts(m *yaml.Node, key string) ([]string, error) {
	v := lookup(m, key)
	if isNull(v) {
		return nil, nil
	}
	if v.Kind == yaml.ScalarNode {
		return []string{v.Value}, nil
	}
	items, err := f.list(m, key)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return nil, f.errorf(it, "%s: want a list of texts, found %s in it", key, kindName(it))
		}
		out = append(out, it.Value)
	}
	return out, nil
}

// synonyms reads the other names a project gives a model, column or
// metric: meta's synonyms or aliases, at its top or under config, as
// semantic layers spell them; each once, trimmed.
func (f *yfile) synonyms(it *yaml.Node) ([]string, error) {
	var out []string
	for _, meta := range []*yaml.Node{lookup(it, "meta"), lookup(lookup(it, "config"), "meta")} {
		for _, key := range []string{"synonyms", "aliases"} {
			names, err := f.texts(meta, key)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out, nil
}

// personalData reports whether a column's properties mark it as personal
// data, as projects commonly do: a meta flag (pii, contains_pii, sensitive
// or personal_data) set to true, or a tag of those names, at its top or
// under config. meta is free-form in dbt, so a flag of another value
// ("sensitive: low") marks nothing and is no error.
func (f *yfile) personalData(col *yaml.Node) (bool, error) {
	for _, at := range []*yaml.Node{col, lookup(col, "config")} {
		meta := lookup(at, "meta")
		for _, key := range []string{"pii", "contains_pii", "sensitive", "personal_data"} {
			if v := lookup(meta, key); v != nil && v.Kind == yaml.ScalarNode && slices.Contains([]string{"true", "yes", "on"}, strings.ToLower(v.Value)) {
				return true, nil
			}
		}
		tags, err := f.texts(at, "tags")
		if err != nil {
			return false, err
		}
		for _, tag := range tags {
			if slices.Contains([]string{"pii", "sensitive", "personal_data"}, strings.ToLower(strings.TrimSpace(tag))) {
				return true, nil
			}
		}
	}
	return false, nil
}

// entries returns the mappings listed at key of the top level (models:,
// sources:, metrics:, ...), each of which must have a name.
func (f *yfile) entries(key string) ([]*yaml.Node, error) {
	items, err := f.list(f.root, key)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.Kind != yaml.MappingNode {
			return nil, f.errorf(it, "%s: want a mapping for each entry, found %s", key, kindName(it))
		}
		name, err := f.text(it, "name")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(name) == "" {
			return nil, f.errorf(it, "%s: an entry has no name", key)
		}
	}
	return items, nil
}

// name returns the name of an entry that entries checked.
func name(entry *yaml.Node) string { return lookup(entry, "name").Value }

// flag reads a boolean scalar; absent is false. dbt reads YAML 1.1, where
// yes, no, on and off are booleans too.
func (f *yfile) flag(m *yaml.Node, key string) (bool, error) {
	s, err := f.text(m, key)
	if err != nil || s == "" {
		return false, err
	}
	switch strings.ToLower(s) {
	case "yes", "on":
		return true, nil
	case "no", "off":
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, f.errorf(lookup(m, key), "%s: want true or false, found %q", key, s)
	}
	return b, nil
}

func kindName(n *yaml.Node) string {
	switch deref(n).Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}
