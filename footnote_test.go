package okf

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/okf-tools/okf/internal/shareddata"
)

// withExtension is the parser okf used before its own footnote parsing:
// the same block and inline parsers with goldmark's Footnote extension.
// The tests hold okf's parser to the tree it builds.
var withExtension = goldmark.New(
	goldmark.WithParser(parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(
			util.Prioritized(parser.NewCodeSpanParser(), 100),
			util.Prioritized(parser.NewLinkParser(), 200),
			util.Prioritized(parser.NewAutoLinkParser(), 300),
			util.Prioritized(parser.NewRawHTMLParser(), 400),
		),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)),
	goldmark.WithExtensions(extension.Footnote),
).Parser()

// outline writes the parts of a tree the format reads, in walk order:
// blocks with their lines, links with their destinations, text with its
// bytes, code spans, and footnotes under one name whichever parser made
// them (the extension's backlinks, which carry no text, left out).
func outline(root ast.Node, src []byte) string {
	var b strings.Builder
	depth := 0
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if _, ok := n.(*extast.FootnoteBacklink); ok {
			return ast.WalkSkipChildren, nil
		}
		if !entering {
			depth--
			return ast.WalkContinue, nil
		}
		var name string
		switch n := n.(type) {
		case *extast.FootnoteList, *footnoteList:
			name = "footnotes"
		case *extast.Footnote:
			name = "footnote " + string(n.Ref)
		case *footnoteDef:
			name = "footnote " + string(n.label)
		case *extast.FootnoteLink, *footnoteRef:
			name = "reference"
		case *ast.Link:
			name = fmt.Sprintf("link %q pos %d", n.Destination, n.Pos())
		case *ast.Text:
			name = fmt.Sprintf("text %q", n.Segment.Value(src))
		default:
			name = n.Kind().String()
		}
		depth++
		fmt.Fprintf(&b, "%*s%s", 2*depth, "", name)
		if n.Type() == ast.TypeBlock {
			for i := 0; i < n.Lines().Len(); i++ {
				s := n.Lines().At(i)
				fmt.Fprintf(&b, " [%d,%d)", s.Start, s.Stop)
			}
		}
		b.WriteByte('\n')
		return ast.WalkContinue, nil
	})
	return b.String()
}

func sameTree(t *testing.T, name string, src []byte) {
	t.Helper()
	want := outline(withExtension.Parse(text.NewReader(src)), src)
	got := outline(markdown.Get().Parse(text.NewReader(src)), src)
	if got != want {
		t.Errorf("%s: okf's tree differs from the Footnote extension's\nsource:\n%s\ngot:\n%s\nwant:\n%s", name, src, got, want)
	}
}

var footnoteCases = []string{
	"text[^1]\n\n[^1]: a note with [a link](a.md)\n",
	"[^1]: defined, never referenced, [hidden](h.md)\n\ntext\n",
	"b[^b] a[^a]\n\n[^a]: first [x](x.md)\n[^b]: second [y](y.md)\n",
	"para\n[^i]: interrupts the paragraph\n\nuse[^i]\n",
	"![^img] bang\n\n[^img]: x\n",
	"!x^odd] as goldmark reads it\n\n[^odd]: y\n",
	"[^ ]: blank label\n\n[^ ]\n",
	"[^a\\]b]: escaped bracket\n\n[^a\\]b]\n",
	"[^a[b]: nested\n\n[^a[b]\n",
	"[^n]:\n\n[^n] empty definition\n",
	"[^n]: first line\n    indented continuation [c](c.md)\n\n    second paragraph\nnot indented\n\n[^n]\n",
	"> [^q]: in a quote\n\n[^q] and [q][r]\n\n[r]: r.md\n",
	"- item\n  [^l]: in a list\n\n[^l]\n",
	"# Heading [^h]\n\n[^h]: note\n\n## Other ![^h]\n",
	"[^x]: url-like\n\n[^x] [^x] [^missing] [^]\n",
	"`[^c]` code\n\n[^c]: c\n\n```\n[^c]: in code\n```\n",
	"[^1]: one\n[^1]: duplicate\n\n[^1]\n",
	"[^" + strings.Repeat("x", 1200) + "]: too long\n",
	"    [^ind]: indented code\n\n[^ind]\n",
}

func TestFootnotesAsTheExtensionParsesThem(t *testing.T) {
	for i, c := range footnoteCases {
		sameTree(t, fmt.Sprint("case ", i), []byte(c))
	}
}

// TestFootnotesOnTheCorpora compares the trees of every markdown file of
// the shared corpora and the validator suite.
func TestFootnotesOnTheCorpora(t *testing.T) {
	roots := []string{"testdata"}
	if data := shareddata.Find(); data != "" {
		roots = append(roots, data)
	}
	files := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			sameTree(t, p, src)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Errorf("compared %d files, expected the corpora's hundreds", files)
	}
}

func FuzzFootnotes(f *testing.F) {
	for _, c := range footnoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, src []byte) { sameTree(t, "fuzz", src) })
}

// oldFootnoteRe is the expression footnoteLabels replaces.
var oldFootnoteRe = regexp.MustCompile(`\[\^([^\]\s]+)\]`)

func TestFootnoteLabelsAsTheOldExpression(t *testing.T) {
	for _, c := range append(footnoteCases, "[^a b] [^a]] [^[^a] [^^] [^\t] [^é]", "[^", "[^]", "x[^y") {
		var got []string
		for _, m := range footnoteLabels([]byte(c)) {
			got = append(got, fmt.Sprint(m))
		}
		var want []string
		for _, m := range oldFootnoteRe.FindAllSubmatchIndex([]byte(c), -1) {
			want = append(want, fmt.Sprint([4]int{m[0], m[1], m[2], m[3]}))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%q: got %v, want %v", c, got, want)
		}
	}
}
