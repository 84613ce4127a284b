// Package yamlline finds the line a YAML syntax error is on. Where
// yaml.v3 knows the mapping or list around a problem, its error names the
// line that starts it (a bad indent on line 7 of okf.yaml read "line 1"),
// never a later one; the problem is on the first line, from that one on,
// after which the text cut short already fails in the same words.
package yamlline

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds of the search, each step a parse of the text so far: the lines
// tried past yaml's, and the text searched at all.
const (
	maxLines = 500
	maxBytes = 256 << 10
)

// Locate returns the 1-based line of data that err, yaml.v3's syntax error
// of data, is on, and the problem in yaml's words without its prefix and
// line. Past the search's bounds the line is yaml's own.
func Locate(data []byte, err error) (int, string) {
	problem := strings.TrimPrefix(err.Error(), "yaml: ")
	from := 1
	if rest, ok := strings.CutPrefix(problem, "line "); ok {
		if n, p, ok := strings.Cut(rest, ": "); ok {
			if v, err := strconv.Atoi(n); err == nil {
				problem, from = p, max(v, 1)
			}
		}
	}
	if len(data) > maxBytes {
		return from, problem
	}
	for line, end := 1, 0; ; line++ {
		if i := bytes.IndexByte(data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(data)
		}
		if end == len(data) {
			return max(line, from), problem
		}
		if line < from {
			continue
		}
		if line > from+maxLines {
			return from, problem
		}
		var n yaml.Node
		if e := yaml.Unmarshal(data[:end], &n); e != nil && strings.HasSuffix(e.Error(), ": "+problem) {
			return line, problem
		}
	}
}
