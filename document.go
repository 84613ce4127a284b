package okf

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/yamlline"
)

// Kind says what role a markdown file plays in a bundle.
type Kind int

// The kinds of document. IndexKind and LogKind are the reserved file names of
// §3.1; every other markdown file is a concept.
const (
	ConceptKind Kind = iota
	IndexKind
	LogKind
)

func (k Kind) String() string {
	switch k {
	case IndexKind:
		return "index"
	case LogKind:
		return "log"
	}
	return "concept"
}

// KindOf returns the kind of the document at a bundle path.
func KindOf(p string) Kind {
	switch path.Base(p) {
	case "index.md":
		return IndexKind
	case "log.md":
		return LogKind
	}
	return ConceptKind
}

// ConceptID returns the concept id of a bundle path: the path without ".md".
func ConceptID(p string) string { return strings.TrimSuffix(p, ".md") }

// Frontmatter is the YAML block at the top of a document.
type Frontmatter struct {
	// Present is true when a block opens on the first line and is closed.
	Present bool
	// Unclosed is true when the first line opens a block that never closes;
	// such a document has no frontmatter.
	Unclosed bool
	// Start and End delimit the YAML text inside Document.Raw.
	Start, End int
	// Line is the file line of the first YAML line (1-based).
	Line int
	// Node is the parsed mapping, or nil when the block is absent, empty,
	// invalid YAML or not a mapping. Scalars keep their authored text.
	Node *yaml.Node
	// Err is set when the block is present but is not a YAML mapping.
	Err error
	// NotMapping is true when the block parsed but holds no mapping.
	NotMapping bool
}

// Document is one markdown file of a bundle, kept byte for byte.
type Document struct {
	// Path is the slash-separated path inside the bundle, e.g. "tables/orders.md".
	Path string
	// Raw holds the file's exact bytes.
	Raw []byte
	// ReadErr is set when the file could not be read; Raw is then empty.
	ReadErr error
	// ValidUTF8 reports whether Raw is valid UTF-8.
	ValidUTF8 bool
	// Frontmatter is the YAML block, if any.
	Frontmatter Frontmatter
	// BodyStart is the offset in Raw where the body begins.
	BodyStart int
	// Links are the markdown links of the body, in document order.
	Links []Link
	// Sections are the body's sections in document order.
	Sections []Section
	// Footnotes are the footnote labels used or defined in the body.
	Footnotes []Footnote

	lines []int // offsets of line starts, for line numbers
}

// Footnote is a footnote label ([^label]) found in a body.
type Footnote struct {
	Label string
	Line  int
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// Parse reads a document from its bundle path and bytes. It never fails:
// what cannot be parsed is recorded on the document for Validate to report.
func Parse(p string, raw []byte) *Document {
	d := &Document{Path: p, Raw: raw, ValidUTF8: utf8.Valid(raw)}
	d.lines = lineStarts(raw)
	start := 0
	if bytes.HasPrefix(raw, bom) {
		start = len(bom)
	}
	d.BodyStart = start
	d.splitFrontmatter(start)
	parseBody(d)
	return d
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// LineAt returns the 1-based line number of a byte offset in Raw.
func (d *Document) LineAt(off int) int {
	lo, hi := 0, len(d.lines)
	for lo < hi {
		mid := (lo + hi) / 2
		if d.lines[mid] <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// nextLine returns the line starting at off without its line ending, and the
// offset of the following line.
func nextLine(b []byte, off int) (line []byte, next int) {
	i := bytes.IndexByte(b[off:], '\n')
	if i < 0 {
		return bytes.TrimSuffix(b[off:], []byte("\r")), len(b)
	}
	return bytes.TrimSuffix(b[off:off+i], []byte("\r")), off + i + 1
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t")) == "---"
}

func (d *Document) splitFrontmatter(start int) {
	first, off := nextLine(d.Raw, start)
	if start >= len(d.Raw) || !isDelimiter(first) {
		return
	}
	fm := &d.Frontmatter
	yamlStart := off
	for off < len(d.Raw) {
		line, next := nextLine(d.Raw, off)
		if isDelimiter(line) {
			fm.Present = true
			fm.Start, fm.End = yamlStart, off
			fm.Line = d.LineAt(yamlStart)
			d.BodyStart = next
			fm.Node, fm.Err, fm.NotMapping = parseYAMLMapping(d.Raw[yamlStart:off], fm.Line-1)
			return
		}
		off = next
	}
	fm.Unclosed = true
}

// parseYAMLMapping parses a frontmatter block. lineOffset is added to the
// parser's line numbers so that errors name file lines.
func parseYAMLMapping(src []byte, lineOffset int) (node *yaml.Node, err error, notMapping bool) {
	defer func() {
		if r := recover(); r != nil {
			node, err, notMapping = nil, fmt.Errorf("yaml: %v", r), false
		}
	}()
	if m, ok := simpleYAML(src); ok {
		shiftLines(m, lineOffset)
		return m, nil, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		line, problem := yamlline.Locate(src, err)
		return nil, fmt.Errorf("yaml: line %d: %s", line+lineOffset, strings.ReplaceAll(problem, "\n", " ")), false
	}
	if doc.Kind == 0 {
		// An empty block: a mapping with no keys.
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil, false
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("frontmatter is a %s, not a mapping", nodeKindName(root)), true
	}
	shiftLines(root, lineOffset)
	return root, nil, false
}

func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// ID returns the document's concept id: its path without ".md".
func (d *Document) ID() string { return ConceptID(d.Path) }

// Kind returns the document's role in its bundle.
func (d *Document) Kind() Kind { return KindOf(d.Path) }

// Body returns the bytes after the frontmatter block.
func (d *Document) Body() []byte { return d.Raw[d.BodyStart:] }

// FrontmatterText returns the YAML text of the frontmatter block, or nil.
func (d *Document) FrontmatterText() []byte {
	if !d.Frontmatter.Present {
		return nil
	}
	return d.Raw[d.Frontmatter.Start:d.Frontmatter.End]
}

// Field returns the frontmatter value node of a key, or nil. When a key is
// repeated the first occurrence wins.
func (d *Document) Field(key string) *yaml.Node { return mapValue(d.Frontmatter.Node, key) }

// Text returns a frontmatter scalar exactly as authored, and whether the key
// holds a non-null scalar.
func (d *Document) Text(key string) (string, bool) { return scalarText(d.Field(key)) }

// TextOrList returns a frontmatter key that may hold a scalar or a list of
// scalars (a composite grain) as text, a list's items joined with ", ".
func (d *Document) TextOrList(key string) string {
	if s, ok := d.Text(key); ok {
		return s
	}
	n := d.Field(key)
	if n == nil {
		return ""
	}
	var parts []string
	for _, item := range n.Content {
		if item.Value != "" {
			parts = append(parts, item.Value)
		}
	}
	return strings.Join(parts, ", ")
}

// Type returns the concept's type, trimmed, or "" when absent.
func (d *Document) Type() string {
	s, _ := d.Text("type")
	return strings.TrimSpace(s)
}

// Title returns the frontmatter title, else the first heading's text, else a
// name derived from the file name.
func (d *Document) Title() string {
	if s, ok := d.Text("title"); ok && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	for _, s := range d.Sections {
		if s.Level > 0 {
			return s.Title
		}
	}
	return strings.TrimSuffix(path.Base(d.Path), ".md")
}

// Description returns the frontmatter description, trimmed.
func (d *Document) Description() string {
	s, _ := d.Text("description")
	return strings.TrimSpace(s)
}

// PersonalData returns the columns a table concept's personal_data marks
// as holding personal data, an extension key of okf's (§4.1 allows them):
// a list or one name, each trimmed, once whatever its case, the empty left
// out.
func (d *Document) PersonalData() []string {
	var names []string
	if s, ok := d.Text("personal_data"); ok {
		names = []string{s}
	} else if n := d.Field("personal_data"); n != nil && n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			if item.Kind == yaml.ScalarNode {
				names = append(names, item.Value)
			}
		}
	}
	var out []string
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name != "" && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, name) }) {
			out = append(out, name)
		}
	}
	return out
}

// Status returns the lifecycle status (§5.4); absent means "stable".
func (d *Document) Status() string {
	if s, ok := d.Text("status"); ok && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	return "stable"
}

// Section returns the section with the given slug.
func (d *Document) Section(slug string) (Section, bool) {
	for _, s := range d.Sections {
		if s.Slug == slug {
			return s, true
		}
	}
	return Section{}, false
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarText(n *yaml.Node) (string, bool) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}
