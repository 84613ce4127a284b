package yamlline

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestLocate: the line a problem is on, past a list written over two
// lines (where yaml.v3 names the line of the mapping around it); yaml's
// own line past the search's bounds; the line of the text's end for a
// problem at its end.
func TestLocate(t *testing.T) {
	nested := "a:\n  - name: x\n    guard:\n      tables: [a,\n        b]\n      max_rows: 5\n     timeout: 5s\n"
	long := nested + strings.Repeat("# padding\n", maxBytes/10)
	for _, tc := range []struct {
		name, text string
		line       int
		problem    string
	}{
		{"a bad indent", nested, 7, "did not find expected key"},
		{"past the bounds", long, 1, "did not find expected key"},
		{"an unclosed list", "k: v\nl: [a\n", 2, "did not find expected ',' or ']'"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.text), &n)
		if err == nil {
			t.Fatalf("%s: parsed", tc.name)
		}
		if line, problem := Locate([]byte(tc.text), err); line != tc.line || problem != tc.problem {
			t.Errorf("%s: line %d %q, want %d %q (yaml: %v)", tc.name, line, problem, tc.line, tc.problem, err)
		}
	}
}
