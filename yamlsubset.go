package okf

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/yamlplain"
)

// Most frontmatters are "key: value" lines, block lists and one-line flow
// lists of plain or quoted text. yaml.v3 reads each with a parser of its
// own, which was a fifth of loading a bundle and near half of its garbage
// (issue 17). simpleYAML reads that shape itself into the very nodes
// yaml.v3 builds and declines everything else (comments, anchors, tags,
// escapes, multi-line scalars, numbers, booleans, nulls, tabs), which
// yaml.v3 then reads. yamlsubset_test.go and FuzzSimpleYAML hold the two
// to each other.

// maxSimpleDepth bounds the nesting simpleYAML follows, and maxSimpleKeys
// the keys of one mapping, whose repeats it finds by a scan of those before;
// deeper or wider frontmatter goes to yaml.v3, in time linear in its size.
const (
	maxSimpleDepth = 32
	maxSimpleKeys  = 64
)

type yamlLine struct {
	indent int    // leading spaces
	text   []byte // the rest, without trailing spaces
	num    int    // 1-based line in the block
}

type yamlSubset struct {
	lines []yamlLine
	i     int
	depth int
	slab  []yaml.Node // nodes are cut from here: one allocation for many
}

// node returns a new node holding n.
func (r *yamlSubset) node(n yaml.Node) *yaml.Node {
	if len(r.slab) == 0 {
		// About one node a line (a key and its value, a list, an item);
		// flow lists and nested blocks take a few more.
		r.slab = make([]yaml.Node, max(len(r.lines)+len(r.lines)/4, 8))
	}
	p := &r.slab[0]
	*p = n
	r.slab = r.slab[1:]
	return p
}

// simpleYAML returns the mapping src holds, built as yaml.v3 builds it,
// or false when src is not of the shape it reads.
func simpleYAML(src []byte) (*yaml.Node, bool) {
	if !simpleText(src) {
		return nil, false
	}
	r := yamlSubset{lines: make([]yamlLine, 0, bytes.Count(src, []byte("\n"))+1)}
	for num := 1; len(src) > 0; num++ {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		text := bytes.TrimRight(line, " ")
		if len(text) == 0 {
			continue
		}
		indent := len(text) - len(bytes.TrimLeft(text, " "))
		r.lines = append(r.lines, yamlLine{indent: indent, text: text[indent:], num: num})
	}
	if len(r.lines) == 0 || isSeqEntry(r.lines[0].text) {
		return nil, false
	}
	m, ok := r.mapping(r.lines[0].indent)
	if !ok || r.i != len(r.lines) {
		return nil, false
	}
	return m, true
}

// simpleText reports whether src holds only what simpleYAML reads: line
// feeds, printable ASCII but "#", and printable UTF-8 that YAML does not
// take for a line break or a byte order mark.
func simpleText(src []byte) bool {
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if c == '#' || c == 0x7f || c < 0x20 && c != '\n' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError || r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xfffe && r <= 0xffff {
			return false
		}
		i += size
	}
	return true
}

func isSeqEntry(text []byte) bool {
	return text[0] == '-' && (len(text) == 1 || text[1] == ' ')
}

// mapping reads the block mapping whose keys start at column indent+1.
func (r *yamlSubset) mapping(indent int) (*yaml.Node, bool) {
	if r.depth++; r.depth > maxSimpleDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	first := r.lines[r.i]
	m := r.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: first.num, Column: indent + 1})
	for r.i < len(r.lines) && r.lines[r.i].indent == indent {
		line := r.lines[r.i]
		colon := keyEnd(line.text)
		if colon < 0 {
			return nil, false
		}
		key := string(line.text[:colon])
		if len(m.Content) == 2*maxSimpleKeys || mapValue(m, key) != nil || yamlplain.ReadsAs(key) != yamlplain.String {
			return nil, false
		}
		keyNode := r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line.num, Column: indent + 1})
		rest := bytes.TrimLeft(line.text[colon+1:], " ")
		var value *yaml.Node
		var ok bool
		if len(rest) == 0 {
			r.i++
			value, ok = r.block(indent)
		} else {
			value, ok = r.inlineValue(line, len(line.text)-len(rest))
			r.i++
		}
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, keyNode, value)
	}
	return m, r.i == len(r.lines) || r.lines[r.i].indent < indent
}

// keyEnd returns where the plain key of a "key: value" or "key:" line
// ends, or -1: keys are a letter or "_", then letters, digits, "_" and "-".
func keyEnd(text []byte) int {
	for i, c := range text {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_':
		case i > 0 && ('0' <= c && c <= '9' || c == '-'):
		case i > 0 && c == ':' && (i+1 == len(text) || text[i+1] == ' '):
			return i
		default:
			return -1
		}
	}
	return -1
}

// block reads the value of a key that ends its line: a mapping indented
// further, or a list indented at least as far as the key.
func (r *yamlSubset) block(indent int) (*yaml.Node, bool) {
	if r.i == len(r.lines) {
		return nil, false // a null: left to yaml.v3
	}
	next := r.lines[r.i]
	switch {
	case isSeqEntry(next.text) && next.indent >= indent:
		return r.sequence(next.indent)
	case !isSeqEntry(next.text) && next.indent > indent:
		return r.mapping(next.indent)
	}
	return nil, false
}

// sequence reads the block list whose dashes are at column indent+1.
func (r *yamlSubset) sequence(indent int) (*yaml.Node, bool) {
	if r.depth++; r.depth > maxSimpleDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	s := r.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: r.lines[r.i].num, Column: indent + 1})
	for r.i < len(r.lines) && r.lines[r.i].indent == indent && isSeqEntry(r.lines[r.i].text) {
		line := r.lines[r.i]
		item := bytes.TrimLeft(line.text[1:], " ")
		if len(item) == 0 || isSeqEntry(item) {
			return nil, false
		}
		at := len(line.text) - len(item)
		var value *yaml.Node
		var ok bool
		if keyEnd(item) >= 0 {
			// "- key: value" opens a mapping whose keys line up with this one.
			r.lines[r.i] = yamlLine{indent: indent + at, text: item, num: line.num}
			value, ok = r.mapping(indent + at)
		} else {
			value, ok = r.inlineValue(line, at)
			r.i++
		}
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, value)
	}
	// A list may end at a key of its own indent: the mapping it is the
	// value of goes on there.
	return s, r.i == len(r.lines) || r.lines[r.i].indent <= indent
}

// inlineValue reads the value that starts at byte at of a line and runs to
// its end: a quoted or plain scalar or a flow list.
func (r *yamlSubset) inlineValue(line yamlLine, at int) (*yaml.Node, bool) {
	text := line.text[at:]
	col := line.indent + 1 + utf8.RuneCount(line.text[:at])
	if text[0] != '[' {
		n, end, ok := scalar(text, false)
		if !ok || end != len(text) {
			return nil, false
		}
		n.Line, n.Column = line.num, col
		return r.node(n), true
	}
	s := r.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line.num, Column: col})
	i := 1
	for {
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i == len(text) {
			return nil, false
		}
		if text[i] == ']' && len(s.Content) == 0 {
			i++
			break
		}
		n, end, ok := scalar(text[i:], true)
		if !ok {
			return nil, false
		}
		n.Line, n.Column = line.num, col+utf8.RuneCount(text[:i])
		s.Content = append(s.Content, r.node(n))
		i += end
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i < len(text) && text[i] == ',' {
			i++
			continue
		}
		if i < len(text) && text[i] == ']' {
			i++
			break
		}
		return nil, false
	}
	return s, i == len(text)
}

// scalar reads the quoted or plain scalar at the start of text and returns
// it with the byte where it ends. In a flow list a plain scalar ends at
// "," or "]", and holds no ":" or bracket.
func scalar(text []byte, flow bool) (yaml.Node, int, bool) {
	switch text[0] {
	case '\'':
		var v []byte
		for i := 1; i < len(text); i++ {
			if text[i] != '\'' {
				v = append(v, text[i])
				continue
			}
			if i+1 < len(text) && text[i+1] == '\'' {
				v = append(v, '\'')
				i++
				continue
			}
			return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.SingleQuotedStyle, Value: string(v)}, i + 1, true
		}
		return yaml.Node{}, 0, false
	case '"':
		for i := 1; i < len(text); i++ {
			switch text[i] {
			case '\\':
				return yaml.Node{}, 0, false
			case '"':
				return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: string(text[1:i])}, i + 1, true
			}
		}
		return yaml.Node{}, 0, false
	}
	if bytes.IndexByte([]byte("-?:,[]{}#&*!|>'\"%@` "), text[0]) >= 0 {
		return yaml.Node{}, 0, false
	}
	end := len(text)
	for i, c := range text {
		if flow && (c == ',' || c == ']') {
			end = i
			break
		}
		if c == ':' && (flow || i+1 == len(text) || text[i+1] == ' ') || flow && (c == '[' || c == '{' || c == '}') {
			return yaml.Node{}, 0, false
		}
	}
	v := string(bytes.TrimRight(text[:end], " "))
	if v == "" || yamlplain.ReadsAs(v) != yamlplain.String {
		return yaml.Node{}, 0, false
	}
	return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, end, true
}
