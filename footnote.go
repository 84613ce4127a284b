package okf

import (
	"bytes"
	"slices"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/okf-tools/okf/internal/lazy"
)

// Footnotes (PHP Markdown Extra: a `[^label]: text` definition, a
// `[^label]` reference) are parsed here to the tree goldmark's Footnote
// extension builds, which is what the format's readers see: a definition
// is not a link reference definition, a reference is not a link, an
// unreferenced definition is dropped, and the referenced ones move to the
// end of the document in the order of their first reference. The
// extension itself is not imported because its package compiles its
// linkify expressions at initialisation, a cost every okf command would
// pay.

// maxFootnoteLabel bounds the bytes searched for a label's closing bracket.
const maxFootnoteLabel = 999

var (
	footnoteDefKind  = lazy.Value[ast.NodeKind]{New: func() ast.NodeKind { return ast.NewNodeKind("FootnoteDefinition") }}
	footnoteRefKind  = lazy.Value[ast.NodeKind]{New: func() ast.NodeKind { return ast.NewNodeKind("FootnoteReference") }}
	footnoteListKind = lazy.Value[ast.NodeKind]{New: func() ast.NodeKind { return ast.NewNodeKind("FootnoteDefinitions") }}
)

// footnoteDef is a definition; order is 0 until a reference names it,
// then the rank of its first reference.
type footnoteDef struct {
	ast.BaseBlock
	label []byte
	order int
}

func (n *footnoteDef) Kind() ast.NodeKind { return footnoteDefKind.Get() }

func (n *footnoteDef) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Label": string(n.label)}, nil)
}

// footnoteList holds a document's definitions while it is parsed.
type footnoteList struct {
	ast.BaseBlock
	referenced int
}

func (n *footnoteList) Kind() ast.NodeKind { return footnoteListKind.Get() }

func (n *footnoteList) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// footnoteRef is a reference to a definition: no text of its own.
type footnoteRef struct {
	ast.BaseInline
}

func (n *footnoteRef) Kind() ast.NodeKind { return footnoteRefKind.Get() }

func (n *footnoteRef) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// footnoteLabelEnd returns the index in b of the `]` that closes a label,
// or -1: a `[` first, or no `]`, means there is no label. A backslash
// escapes the punctuation after it.
func footnoteLabelEnd(b []byte) int {
	b = b[:min(len(b), maxFootnoteLabel)]
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && i+1 < len(b) && util.IsPunct(b[i+1]):
			i++
		case b[i] == ']':
			return i
		case b[i] == '[':
			return -1
		}
	}
	return -1
}

// footnoteBlocks parses definitions: `[^label]:` at the start of a block,
// then whatever follows it and the lines indented under it. The three
// footnote parsers keep a document's definitions under key in the parse
// context.
type footnoteBlocks struct{ key parser.ContextKey }

func (footnoteBlocks) Trigger() []byte { return []byte{'['} }

func (footnoteBlocks) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	at := pc.BlockOffset()
	if at < 0 || at+1 >= len(line) || line[at] != '[' || line[at+1] != '^' {
		return nil, parser.NoChildren
	}
	start := at + 2
	end := footnoteLabelEnd(line[start:])
	if end < 0 {
		return nil, parser.NoChildren
	}
	end += start
	if end+1 >= len(line) || line[end+1] != ':' {
		return nil, parser.NoChildren
	}
	label := reader.Value(text.NewSegment(seg.Start+start-seg.Padding, seg.Start+end-seg.Padding))
	if util.IsBlank(label) {
		return nil, parser.NoChildren
	}
	def := &footnoteDef{label: label}
	rest := end + 2 - seg.Padding
	if rest >= len(line) {
		reader.Advance(rest)
		return def, parser.NoChildren
	}
	reader.AdvanceAndSetPadding(rest, seg.Padding)
	return def, parser.HasChildren
}

func (footnoteBlocks) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, _ := reader.PeekLine()
	if util.IsBlank(line) {
		return parser.Continue | parser.HasChildren
	}
	at, padding := util.IndentPosition(line, reader.LineOffset(), 4)
	if at < 0 {
		return parser.Close
	}
	reader.AdvanceAndSetPadding(at, padding)
	return parser.Continue | parser.HasChildren
}

// Close gathers the definition into the document's list, which sits
// where the first definition was until the transformer moves it.
func (p footnoteBlocks) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	parent := node.Parent()
	list, _ := pc.Get(p.key).(*footnoteList)
	if list == nil {
		list = &footnoteList{}
		pc.Set(p.key, list)
		parent.InsertBefore(parent, node, list)
	}
	parent.RemoveChild(parent, node)
	list.AppendChild(list, node)
}

func (footnoteBlocks) CanInterruptParagraph() bool { return true }

func (footnoteBlocks) CanAcceptIndentedLine() bool { return false }

// footnoteRefs parses references, `[^label]` or `![^label]`, to a label
// some definition of the document has.
type footnoteRefs struct{ key parser.ContextKey }

func (footnoteRefs) Trigger() []byte { return []byte{'!', '['} }

func (p footnoteRefs) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	caret := 1
	if len(line) > 0 && line[0] == '!' {
		caret = 2 // the bracket is not checked: goldmark's extension does not either
	}
	if caret+1 >= len(line) || line[caret] != '^' {
		return nil
	}
	start := caret + 1
	end := footnoteLabelEnd(line[start:])
	if end < 0 {
		return nil
	}
	end += start
	label := block.Value(text.NewSegment(seg.Start+start, seg.Start+end))
	block.Advance(end + 1)
	list, _ := pc.Get(p.key).(*footnoteList)
	if list == nil {
		return nil
	}
	for n := list.FirstChild(); n != nil; n = n.NextSibling() {
		def := n.(*footnoteDef)
		if !bytes.Equal(def.label, label) {
			continue
		}
		if def.order == 0 {
			list.referenced++
			def.order = list.referenced
		}
		if line[0] == '!' {
			parent.AppendChild(parent, ast.NewTextSegment(text.NewSegment(seg.Start, seg.Start+1)))
		}
		return &footnoteRef{}
	}
	return nil
}

// footnoteTree drops the unreferenced definitions and puts the others at
// the end of the document, in the order of their first reference.
type footnoteTree struct{ key parser.ContextKey }

func (p footnoteTree) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	list, _ := pc.Get(p.key).(*footnoteList)
	if list == nil {
		return
	}
	pc.Set(p.key, nil)
	var kept []*footnoteDef
	for n := list.FirstChild(); n != nil; n = n.NextSibling() {
		if def := n.(*footnoteDef); def.order > 0 {
			kept = append(kept, def)
		}
	}
	list.RemoveChildren(list)
	if len(kept) == 0 {
		list.Parent().RemoveChild(list.Parent(), list)
		return
	}
	slices.SortFunc(kept, func(a, b *footnoteDef) int { return a.order - b.order })
	for _, def := range kept {
		list.AppendChild(list, def)
	}
	doc.AppendChild(doc, list)
}
