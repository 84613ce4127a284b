package okf

import (
	"bytes"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/okf-tools/okf/internal/lazy"
)

// LinkKind classifies a link target.
type LinkKind int

// The kinds of link target.
const (
	// InternalLink points at a path inside the bundle.
	InternalLink LinkKind = iota
	// ExternalLink has a URL scheme (https:, mailto:, ...); it is not followed.
	ExternalLink
	// FragmentLink points only at an anchor of the same document.
	FragmentLink
	// OutsideLink resolves to a path above the bundle root.
	OutsideLink
)

// Link is a markdown link found in a document body. Images, autolinks and
// links inside code are not links.
type Link struct {
	// Target is the destination as written, e.g. "../tables/orders.md#schema".
	Target string
	// Kind classifies the target.
	Kind LinkKind
	// Path is the bundle path the target resolves to, with any fragment or
	// query removed and "." and ".." applied, e.g. "tables/orders.md". A
	// folder target keeps its trailing slash ("tables/"); the bundle root is
	// "/". Empty unless Kind is InternalLink.
	Path string
	// Fragment is the part after '#', if any.
	Fragment string
	// Line is the 1-based file line of the link.
	Line int
}

// Section is a part of a body that starts at a heading and runs to the next
// heading of the same or a higher level. Text before the first heading forms
// the section "body".
type Section struct {
	// Slug is the heading text lowercased, with every run of characters
	// other than letters and digits turned into "_"; a repeated slug gets
	// "_2", "_3", ... in document order.
	Slug string
	// Title is the heading's plain text.
	Title string
	// Level is the heading level, 1-6, or 0 for the "body" section.
	Level int
	// Start and End delimit the section inside Document.Raw, heading included.
	Start, End int
	// Line is the 1-based file line where the section starts.
	Line int
}

// markdown parses bodies for what the format needs (headings, links, code,
// footnotes) and skips emphasis, which the format never reads and which is
// a large share of inline parsing's work and garbage.
var markdown = lazy.Value[parser.Parser]{New: func() parser.Parser {
	footnotes := parser.NewContextKey()
	return parser.NewParser(
		parser.WithBlockParsers(append(parser.DefaultBlockParsers(), util.Prioritized(footnoteBlocks{footnotes}, 999))...),
		parser.WithInlineParsers(
			util.Prioritized(parser.NewCodeSpanParser(), 100),
			util.Prioritized(footnoteRefs{footnotes}, 101),
			util.Prioritized(parser.NewLinkParser(), 200),
			util.Prioritized(parser.NewAutoLinkParser(), 300),
			util.Prioritized(parser.NewRawHTMLParser(), 400),
		),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithASTTransformers(util.Prioritized(footnoteTree{footnotes}, 999)),
	)
}}

// hasScheme reports whether s starts with a URL scheme and its colon
// ("https:", "mailto:"): a letter, then letters, digits, "+", "-" or ".".
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// footnoteLabels finds every `[^label]` in b, a label being one or more
// bytes other than "]" and ASCII white space, and returns the start and
// end of each and of its label.
func footnoteLabels(b []byte) [][4]int {
	var out [][4]int
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '[' || b[i+1] != '^' {
			continue
		}
		j := i + 2
		for j < len(b) && b[j] != ']' && !isRESpace(b[j]) {
			j++
		}
		if j < len(b) && b[j] == ']' && j > i+2 {
			out = append(out, [4]int{i, j + 1, i + 2, j})
			i = j
		}
	}
	return out
}

// isRESpace reports whether c is white space as regexp's \s means it.
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// parseBody fills the document's links, sections and footnotes.
func parseBody(d *Document) {
	body := d.Raw[d.BodyStart:]
	root := markdown.Get().Parse(text.NewReader(body))
	base := d.BodyStart
	var code [][2]int // byte ranges of code, relative to body
	type heading struct {
		level      int
		title      string
		start, end int
	}
	var headings []heading
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				s := lines.At(i)
				code = append(code, [2]int{s.Start, s.Stop})
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					code = append(code, [2]int{t.Segment.Start, t.Segment.Stop})
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.Heading:
			start := blockStart(n, body)
			headings = append(headings, heading{level: n.Level, title: plainText(n, body), start: start})
		case *ast.Link:
			d.Links = append(d.Links, d.newLink(string(util.UnescapePunctuations(n.Destination)), base+nodeStart(n, body)))
		}
		return ast.WalkContinue, nil
	})

	// Sections.
	seen := map[string]int{}
	addSection := func(s Section) {
		seen[s.Slug]++
		if c := seen[s.Slug]; c > 1 {
			s.Slug += "_" + strconv.Itoa(c)
			seen[s.Slug]++
		}
		s.Line = d.LineAt(s.Start)
		d.Sections = append(d.Sections, s)
	}
	preambleEnd := len(body)
	if len(headings) > 0 {
		preambleEnd = headings[0].start
	}
	if len(bytes.TrimSpace(body[:preambleEnd])) > 0 {
		addSection(Section{Slug: "body", Title: "body", Start: base, End: base + preambleEnd})
	}
	for i, h := range headings {
		end := len(body)
		for _, next := range headings[i+1:] {
			if next.level <= h.level {
				end = next.start
				break
			}
		}
		addSection(Section{Slug: Slug(h.title), Title: h.title, Level: h.level, Start: base + h.start, End: base + end})
	}

	// Footnote labels outside code.
	for _, m := range footnoteLabels(body) {
		if inRanges(code, m[0]) {
			continue
		}
		d.Footnotes = append(d.Footnotes, Footnote{Label: string(body[m[2]:m[3]]), Line: d.LineAt(base + m[0])})
	}
}

func inRanges(ranges [][2]int, off int) bool {
	for _, r := range ranges {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	return false
}

// blockStart returns the offset of the start of the line a block begins on.
func blockStart(n ast.Node, src []byte) int {
	start := -1
	if lines := n.Lines(); lines != nil && lines.Len() > 0 {
		start = lines.At(0).Start
	} else if p := n.Pos(); p >= 0 {
		start = p
	}
	if start < 0 {
		return 0
	}
	if start > len(src) {
		start = len(src)
	}
	return bytes.LastIndexByte(src[:start], '\n') + 1
}

// nodeStart returns the best known source offset of an inline node.
func nodeStart(n ast.Node, src []byte) int {
	if p := n.Pos(); p >= 0 {
		return p
	}
	for c := n.FirstChild(); c != nil; c = c.FirstChild() {
		if t, ok := c.(*ast.Text); ok {
			return t.Segment.Start
		}
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock {
			return blockStart(p, src)
		}
	}
	return 0
}

// plainText returns the text of an inline tree, without markup.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// Slug turns a heading into a section name (see Snake). A heading with no
// letters or digits gets "section".
func Slug(title string) string {
	if s := Snake(title); s != "" {
		return s
	}
	return "section"
}

// Snake lowercases text and joins its runs of letters and digits with "_":
// "Common query patterns" and "BigQuery Table" become
// "common_query_patterns" and "bigquery_table". Combining accents stay with
// their letter. Text with no letters or digits gives "".
func Snake(text string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(text) {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining accent belongs to the letter before it
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
		} else {
			pending = true
		}
	}
	return b.String()
}

func (d *Document) newLink(target string, off int) Link {
	l := Link{Target: target, Line: d.LineAt(off)}
	rest := strings.TrimSpace(target)
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		l.Fragment = rest[i+1:]
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	switch {
	case rest == "":
		l.Kind = FragmentLink
		return l
	case hasScheme(rest):
		l.Kind = ExternalLink
		return l
	}
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	l.Path, l.Kind = ResolvePath(d.Path, rest)
	return l
}

// ResolvePath resolves a link or path-valued field written in the document at
// from: a leading "/" starts at the bundle root, anything else is relative to
// the document's folder. A trailing "/" is kept; the root itself is "/". The
// kind is OutsideLink when the path climbs above the root.
func ResolvePath(from, target string) (string, LinkKind) {
	dir := strings.HasSuffix(target, "/")
	var joined string
	if strings.HasPrefix(target, "/") {
		joined = strings.TrimLeft(target, "/")
	} else {
		joined = path.Join(path.Dir(from), target)
	}
	clean := path.Clean(joined)
	switch {
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "", OutsideLink
	case clean == ".":
		return "/", InternalLink
	case dir:
		return clean + "/", InternalLink
	}
	return clean, InternalLink
}
