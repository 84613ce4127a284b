package okf

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestFrontmatterRanges(t *testing.T) {
	tests := []struct {
		name                        string
		src                         string
		present, unclosed           bool
		start, end, line, bodyStart int
		yaml, body                  string
	}{
		{name: "plain", src: "---\ntype: X\n---\n# H\n",
			present: true, start: 4, end: 12, line: 2, bodyStart: 16, yaml: "type: X\n", body: "# H\n"},
		{name: "bom", src: "\ufeff---\ntype: X\n---\n# H\n",
			present: true, start: 7, end: 15, line: 2, bodyStart: 19, yaml: "type: X\n", body: "# H\n"},
		{name: "crlf", src: "---\r\ntype: X\r\n---\r\n# H\r\n",
			present: true, start: 5, end: 14, line: 2, bodyStart: 19, yaml: "type: X\r\n", body: "# H\r\n"},
		{name: "bom and crlf", src: "\ufeff---\r\ntype: X\r\n---\r\n# H\r\n",
			present: true, start: 8, end: 17, line: 2, bodyStart: 22, yaml: "type: X\r\n", body: "# H\r\n"},
		{name: "empty block", src: "---\n---\nbody\n",
			present: true, start: 4, end: 4, line: 2, bodyStart: 8, yaml: "", body: "body\n"},
		{name: "closed at end of file", src: "---\ntype: X\n---",
			present: true, start: 4, end: 12, line: 2, bodyStart: 15, yaml: "type: X\n", body: ""},
		{name: "delimiters with trailing blanks", src: "--- \ntype: X\n---\t\nb\n",
			present: true, start: 5, end: 13, line: 2, bodyStart: 18, yaml: "type: X\n", body: "b\n"},
		{name: "no block", src: "# H\n", bodyStart: 0, body: "# H\n"},
		{name: "bom without block", src: "\ufeff# H\n", bodyStart: 3, body: "# H\n"},
		{name: "block not on the first line", src: "\n---\ntype: X\n---\n", bodyStart: 0, body: "\n---\ntype: X\n---\n"},
		{name: "four dashes", src: "----\ntype: X\n----\n", bodyStart: 0, body: "----\ntype: X\n----\n"},
		{name: "empty file", src: "", bodyStart: 0, body: ""},
		{name: "only an opening line", src: "---\n", unclosed: true, bodyStart: 0, body: "---\n"},
		{name: "never closed", src: "---\ntype: X\n# H\n", unclosed: true, bodyStart: 0, body: "---\ntype: X\n# H\n"},
		{name: "bom never closed", src: "\ufeff---\ntype: X\n", unclosed: true, bodyStart: 3, body: "---\ntype: X\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Parse("x.md", []byte(tt.src))
			fm := d.Frontmatter
			if fm.Present != tt.present || fm.Unclosed != tt.unclosed {
				t.Errorf("Present, Unclosed = %v, %v; want %v, %v", fm.Present, fm.Unclosed, tt.present, tt.unclosed)
			}
			if fm.Start != tt.start || fm.End != tt.end || fm.Line != tt.line {
				t.Errorf("Start, End, Line = %d, %d, %d; want %d, %d, %d", fm.Start, fm.End, fm.Line, tt.start, tt.end, tt.line)
			}
			if d.BodyStart != tt.bodyStart {
				t.Errorf("BodyStart = %d, want %d", d.BodyStart, tt.bodyStart)
			}
			if got := string(d.FrontmatterText()); got != tt.yaml {
				t.Errorf("FrontmatterText = %q, want %q", got, tt.yaml)
			}
			if got := string(d.Body()); got != tt.body {
				t.Errorf("Body = %q, want %q", got, tt.body)
			}
			if tt.present != (fm.Node != nil) {
				t.Errorf("Node = %v, want one only for a present block", fm.Node)
			}
			if !tt.present && d.Type() != "" {
				t.Errorf("Type = %q without a block", d.Type())
			}
		})
	}
}

func TestFrontmatterEmptyBlockIsEmptyMapping(t *testing.T) {
	for _, src := range []string{"---\n---\n", "---\n# a YAML comment\n---\n"} {
		fm := Parse("x.md", []byte(src)).Frontmatter
		if fm.Err != nil || fm.NotMapping || fm.Node == nil || fm.Node.Tag != "!!map" || len(fm.Node.Content) != 0 {
			t.Errorf("%q: Node %+v, Err %v, NotMapping %v; want an empty mapping", src, fm.Node, fm.Err, fm.NotMapping)
		}
	}
}

func TestFrontmatterErrors(t *testing.T) {
	tests := []struct {
		src        string
		err        string
		notMapping bool
	}{
		{"---\n- type: X\n---\n", "frontmatter is a list, not a mapping", true},
		{"---\njust words\n---\n", "frontmatter is a scalar, not a mapping", true},
		{"---\n~\n---\n", "frontmatter is a null, not a mapping", true},
		// Scanner errors: yaml.v3 counts their lines from 1.
		{"---\ntype: X\n  bad: y\n---\n", "yaml: line 3: mapping values are not allowed in this context", false},
		{"\ufeff---\r\ntype: X\r\n\tbad: y\r\n---\r\n", "yaml: line 3: found a tab character that violates indentation", false},
		// Parser errors: yaml.v3 counts their lines from 0; the message
		// must still name the file line of the construct at fault.
		{"---\ntype: X\ntitle: [a\n---\n", "yaml: line 3: did not find expected ',' or ']'", false},
		{"---\ntype: X\ntitle: \"a\" b\n---\n", "yaml: line 3: did not find expected key", false},
		{"---\ntype: X\nb: 1\n- c\n---\n", "yaml: line 4: did not find expected key", false},
		// Past a list written over two lines, yaml.v3 names the line of
		// the mapping around the problem, far above it.
		{"---\ntype: X\nmeta:\n  tags: [a,\n    b]\n  owner: o\n team: t\n---\n", "yaml: line 7: did not find expected key", false},
		{"---\ntype: X\nitems:\n  - name: a\n    guard:\n      tables: [a,\n        b]\n      max_rows: 5\n     timeout: 5s\n---\n", "yaml: line 9: did not find expected key", false},
	}
	for _, tt := range tests {
		fm := Parse("x.md", []byte(tt.src)).Frontmatter
		if !fm.Present || fm.Node != nil || fm.Err == nil || fm.Err.Error() != tt.err || fm.NotMapping != tt.notMapping {
			t.Errorf("%q: Present %v, Node %v, Err %v, NotMapping %v; want Err %q, NotMapping %v",
				tt.src, fm.Present, fm.Node, fm.Err, fm.NotMapping, tt.err, tt.notMapping)
		}
	}
}

func TestScalarsKeepAuthoredText(t *testing.T) {
	d := Parse("x.md", []byte("---\n"+
		"at: 2026-06-30T14:00:00Z\n"+
		"okf_version: 0.2\n"+
		"n: 010\n"+
		"day: 2026-06-30\n"+
		"yes: yes\n"+
		"q: \"  quoted  \"\n"+
		"empty: ''\n"+
		"nothing:\n"+
		"list: [a]\n"+
		"dup: first\n"+
		"dup: second\n"+
		"type: '  Metric '\n"+
		"---\n"))
	tests := []struct {
		key  string
		text string
		ok   bool
	}{
		{"at", "2026-06-30T14:00:00Z", true},
		{"okf_version", "0.2", true},
		{"n", "010", true},
		{"day", "2026-06-30", true},
		{"yes", "yes", true},
		{"q", "  quoted  ", true},
		{"empty", "", true},
		{"nothing", "", false},
		{"list", "", false},
		{"absent", "", false},
		{"dup", "first", true},
	}
	for _, tt := range tests {
		if s, ok := d.Text(tt.key); s != tt.text || ok != tt.ok {
			t.Errorf("Text(%q) = %q, %v; want %q, %v", tt.key, s, ok, tt.text, tt.ok)
		}
	}
	if got := d.Type(); got != "Metric" {
		t.Errorf("Type = %q, want the trimmed %q", got, "Metric")
	}
	if n := d.Field("n"); n == nil || n.Line != 4 {
		t.Errorf("Field(n).Line = %v, want file line 4", n)
	}
	if got := d.Status(); got != "stable" {
		t.Errorf("Status = %q, want the default stable", got)
	}
}

func TestSections(t *testing.T) {
	src := "Preamble text.\n" + // 0
		"\n" + // 15
		"# A\n" + // 16
		"## B\n" + // 20
		"text\n" + // 25
		"```\n" + // 30
		"# fenced\n" + // 34
		"```\n" + // 43
		"# A\n" + // 47
		"Setext\n" + // 51
		"======\n" + // 58
		"Sub setext\n" + // 65
		"----------\n" + // 76
		"# A\n" // 87, ends at 91
	d := Parse("x.md", []byte(src))
	want := []Section{
		{Slug: "body", Title: "body", Level: 0, Start: 0, End: 16, Line: 1},
		{Slug: "a", Title: "A", Level: 1, Start: 16, End: 47, Line: 3},
		{Slug: "b", Title: "B", Level: 2, Start: 20, End: 47, Line: 4},
		{Slug: "a_2", Title: "A", Level: 1, Start: 47, End: 51, Line: 9},
		{Slug: "setext", Title: "Setext", Level: 1, Start: 51, End: 87, Line: 10},
		{Slug: "sub_setext", Title: "Sub setext", Level: 2, Start: 65, End: 87, Line: 12},
		{Slug: "a_3", Title: "A", Level: 1, Start: 87, End: 91, Line: 14},
	}
	if !reflect.DeepEqual(d.Sections, want) {
		t.Errorf("Sections =\n%+v\nwant\n%+v", d.Sections, want)
	}
	if s, ok := d.Section("b"); !ok || string(d.Raw[s.Start:s.End]) != "## B\ntext\n```\n# fenced\n```\n" {
		t.Errorf("Section(b) = %+v, %v", s, ok)
	}
	if s, ok := d.Section("a"); !ok || string(d.Raw[s.Start:s.End]) != "# A\n## B\ntext\n```\n# fenced\n```\n" {
		t.Errorf("Section(a) = %+v, %v; want # A to contain its ## B", s, ok)
	}
	if _, ok := d.Section("fenced"); ok {
		t.Error("a heading inside a fence became a section")
	}
	if got := d.Title(); got != "A" {
		t.Errorf("Title = %q, want the first heading", got)
	}
}

func TestSectionSlugCollisions(t *testing.T) {
	d := Parse("x.md", []byte("# A\n# A\n# A 2\n# Body\n"))
	var got []string
	for _, s := range d.Sections {
		got = append(got, s.Slug)
	}
	if want := []string{"a", "a_2", "a_2_2", "body"}; !reflect.DeepEqual(got, want) {
		t.Errorf("slugs = %q, want %q", got, want)
	}
	// A preamble takes "body", so a heading of that name gets "body_2".
	d = Parse("x.md", []byte("intro\n# Body\n"))
	got = nil
	for _, s := range d.Sections {
		got = append(got, s.Slug)
	}
	if want := []string{"body", "body_2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("slugs = %q, want %q", got, want)
	}
}

func TestSectionsAfterFrontmatterWithCRLF(t *testing.T) {
	src := "\ufeff---\r\ntype: X\r\n---\r\n# Schema\r\ntext\r\n## Sub ##\r\n~~~\r\n# not\r\n~~~\r\n"
	// offsets: BOM 0-3, "---\r\n" 3-8, "type: X\r\n" 8-17, "---\r\n" 17-22,
	// "# Schema\r\n" 22-32, "text\r\n" 32-38, "## Sub ##\r\n" 38-49, the fence 49-66.
	d := Parse("x.md", []byte(src))
	want := []Section{
		{Slug: "schema", Title: "Schema", Level: 1, Start: 22, End: 66, Line: 4},
		{Slug: "sub", Title: "Sub", Level: 2, Start: 38, End: 66, Line: 6},
	}
	if !reflect.DeepEqual(d.Sections, want) {
		t.Errorf("Sections =\n%+v\nwant\n%+v", d.Sections, want)
	}
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"Schema":                 "schema",
		"Common query patterns":  "common_query_patterns",
		"  Hello, World!  ":      "hello_world",
		"Schema (v2)":            "schema_v2",
		"Café au lait":           "café_au_lait",
		"Ünïcode — Überblick":    "ünïcode_überblick",
		"知识 规则":                  "知识_规则",
		"Données 2026-06-30":     "données_2026_06_30",
		"Ελληνικά: Σχήμα":        "ελληνικά_σχήμα",
		"---":                    "section",
		"":                       "section",
		"snake_case and kebab-x": "snake_case_and_kebab_x",
	}
	for in, want := range tests {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLinks(t *testing.T) {
	src := "---\ntype: X\n---\n" + // lines 1-3
		"[rel](customers.md#schema) [up](../metrics/revenue.md) [abs](/guides/howto.md)\n" + // 4
		"[frag](#joins) [web](https://example.com/a.md#x) [mail](mailto:data@example.com)\n" + // 5
		"[folder](../tables/) [here](./) [root](/) [out](../../x.md) [abs out](/../x.md)\n" + // 6
		"[enc](my%20file.md) [angle](<my file.md>) [query](x.md?a=1#f) [bare](customers)\n" + // 7
		"[ref][r] and [shortcut] and `[code](code.md)` and ![img](pic.png) and <https://auto.example>\n" + // 8
		"\n" +
		"```\n[fenced](fenced.md)\n```\n" + // 10-12
		"\n" +
		"[r]: ./customers \"Customers\"\n" + // 14
		"[shortcut]: <../a b.md#top>\n" // 15
	d := Parse("tables/orders.md", []byte(src))
	want := []Link{
		{Target: "customers.md#schema", Kind: InternalLink, Path: "tables/customers.md", Fragment: "schema", Line: 4},
		{Target: "../metrics/revenue.md", Kind: InternalLink, Path: "metrics/revenue.md", Line: 4},
		{Target: "/guides/howto.md", Kind: InternalLink, Path: "guides/howto.md", Line: 4},
		{Target: "#joins", Kind: FragmentLink, Fragment: "joins", Line: 5},
		{Target: "https://example.com/a.md#x", Kind: ExternalLink, Fragment: "x", Line: 5},
		{Target: "mailto:data@example.com", Kind: ExternalLink, Line: 5},
		{Target: "../tables/", Kind: InternalLink, Path: "tables/", Line: 6},
		{Target: "./", Kind: InternalLink, Path: "tables/", Line: 6},
		{Target: "/", Kind: InternalLink, Path: "/", Line: 6},
		{Target: "../../x.md", Kind: OutsideLink, Line: 6},
		{Target: "/../x.md", Kind: OutsideLink, Line: 6},
		{Target: "my%20file.md", Kind: InternalLink, Path: "tables/my file.md", Line: 7},
		{Target: "my file.md", Kind: InternalLink, Path: "tables/my file.md", Line: 7},
		{Target: "x.md?a=1#f", Kind: InternalLink, Path: "tables/x.md", Fragment: "f", Line: 7},
		{Target: "customers", Kind: InternalLink, Path: "tables/customers", Line: 7},
		{Target: "./customers", Kind: InternalLink, Path: "tables/customers", Line: 8},
		{Target: "../a b.md#top", Kind: InternalLink, Path: "a b.md", Fragment: "top", Line: 8},
	}
	if !reflect.DeepEqual(d.Links, want) {
		t.Errorf("Links:\n%s", diffLinks(d.Links, want))
	}
}

// diffLinks lists the links that differ, position by position.
func diffLinks(got, want []Link) string {
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w Link
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "%d: got  %+v\n%d: want %+v\n", i, g, i, w)
		}
	}
	return b.String()
}

func TestResolvePath(t *testing.T) {
	tests := []struct {
		from, target, path string
		kind               LinkKind
	}{
		{"a.md", "b.md", "b.md", InternalLink},
		{"x/a.md", "b.md", "x/b.md", InternalLink},
		{"x/a.md", "../b.md", "b.md", InternalLink},
		{"x/a.md", "/b.md", "b.md", InternalLink},
		{"x/a.md", "//b.md", "b.md", InternalLink},
		{"x/a.md", "./y/../z/", "x/z/", InternalLink},
		{"x/a.md", "..", "/", InternalLink},
		{"x/a.md", "../..", "", OutsideLink},
		{"a.md", "../b.md", "", OutsideLink},
		{"a.md", ".", "/", InternalLink},
	}
	for _, tt := range tests {
		if p, k := ResolvePath(tt.from, tt.target); p != tt.path || k != tt.kind {
			t.Errorf("ResolvePath(%q, %q) = %q, %v; want %q, %v", tt.from, tt.target, p, k, tt.path, tt.kind)
		}
	}
}

func TestFootnotes(t *testing.T) {
	src := "---\ntype: X\n---\n" +
		"A claim[^docs] and another[^logs].\n" + // 4
		"`[^span]` is code.\n" + // 5
		"\n```\n[^fenced]\n```\n\n" + // 6-10
		"[^docs]: The docs.\n" // 11
	d := Parse("x.md", []byte(src))
	want := []Footnote{{"docs", 4}, {"logs", 4}, {"docs", 11}}
	if !reflect.DeepEqual(d.Footnotes, want) {
		t.Errorf("Footnotes = %+v, want %+v", d.Footnotes, want)
	}
}

func TestLineAt(t *testing.T) {
	d := Parse("x.md", []byte("ab\r\ncd\n\nef"))
	for off, want := range map[int]int{0: 1, 3: 1, 4: 2, 6: 2, 7: 3, 8: 4, 9: 4} {
		if got := d.LineAt(off); got != want {
			t.Errorf("LineAt(%d) = %d, want %d", off, got, want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for p, want := range map[string]Kind{
		"index.md": IndexKind, "a/b/index.md": IndexKind, "log.md": LogKind, "a/log.md": LogKind,
		"Index.md": ConceptKind, "index.md.md": ConceptKind, "a/logs.md": ConceptKind,
	} {
		if got := KindOf(p); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", p, got, want)
		}
	}
	if got := ConceptID("tables/orders.md"); got != "tables/orders" {
		t.Errorf("ConceptID = %q", got)
	}
}

func TestBundleGraph(t *testing.T) {
	doc := func(p, body string) *Document { return Parse(p, []byte("---\ntype: X\n---\n"+body)) }
	b := NewBundle([]*Document{
		doc("c.md", "[a](a.md) [b](b) [a again](/a.md#top)\n"),
		doc("a.md", "[b](b.md) [c](c) [b again](./b.md#x) [self](a.md) [self](a) [self](#top)\n"+
			"[index](index.md) [folder](sub/) [missing](zzz.md) [out](../x.md) [web](https://x.example/a.md)\n"),
		doc("b.md", "[a](/a.md)\n"),
		doc("sub/d.md", "[a](../a) [c](/c.md) [deep](e/f.md)\n"),
		doc("sub/e/f.md", "no links\n"),
		doc("index.md", "[a](a.md) [d](sub/d.md)\n"),
		doc("log.md", "[f](sub/e/f.md)\n"),
	})
	var paths []string
	for _, d := range b.Docs {
		paths = append(paths, d.Path)
	}
	if want := []string{"a.md", "b.md", "c.md", "index.md", "log.md", "sub/d.md", "sub/e/f.md"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("Docs = %q, want %q", paths, want)
	}
	graph := []struct {
		id            string
		out, inbound  []string
		conceptExists bool
	}{
		{"a", []string{"b", "c"}, []string{"b", "c", "sub/d"}, true},
		{"b", []string{"a"}, []string{"a", "c"}, true},
		{"c", []string{"a", "b"}, []string{"a", "sub/d"}, true},
		{"sub/d", []string{"a", "c", "sub/e/f"}, nil, true},
		{"sub/e/f", nil, []string{"sub/d"}, true},
		{"index", nil, nil, false},
		{"log", nil, nil, false},
		{"zzz", nil, nil, false},
	}
	for _, g := range graph {
		if got := b.Outbound(g.id); !reflect.DeepEqual(got, g.out) {
			t.Errorf("Outbound(%q) = %q, want %q", g.id, got, g.out)
		}
		if got := b.Inbound(g.id); !reflect.DeepEqual(got, g.inbound) {
			t.Errorf("Inbound(%q) = %q, want %q", g.id, got, g.inbound)
		}
		if c := b.Concept(g.id); (c != nil) != g.conceptExists || (c != nil && c.ID() != g.id) {
			t.Errorf("Concept(%q) = %v, want one: %v", g.id, c, g.conceptExists)
		}
	}
	targets := []struct {
		l    Link
		want string
	}{
		{Link{Kind: InternalLink, Path: "c"}, "c"},
		{Link{Kind: InternalLink, Path: "c.md"}, "c"},
		{Link{Kind: InternalLink, Path: "sub/e/f"}, "sub/e/f"},
		{Link{Kind: InternalLink, Path: "sub/"}, ""},
		{Link{Kind: InternalLink, Path: "sub"}, ""},
		{Link{Kind: InternalLink, Path: "index.md"}, ""},
		{Link{Kind: InternalLink, Path: "index"}, ""},
		{Link{Kind: InternalLink, Path: "zzz"}, ""},
		{Link{Kind: ExternalLink}, ""},
		{Link{Kind: FragmentLink, Fragment: "top"}, ""},
	}
	for _, tt := range targets {
		if got := b.Target(tt.l); got != tt.want {
			t.Errorf("Target(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
	exists := map[string]bool{"/": true, "c": true, "c.md": true, "sub": true, "sub/": true, "sub/e/": true,
		"index.md": true, "zzz.md": false, "zzz": false, "sub/e/f": true, "sub/x/": false}
	for p, want := range exists {
		if got := b.Exists(Link{Kind: InternalLink, Path: p}); got != want {
			t.Errorf("Exists(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestLoadFSSkipsHiddenFiles(t *testing.T) {
	b, err := LoadFS(fstest.MapFS{
		"index.md":             {Data: []byte("# Index\n")},
		"a.md":                 {Data: []byte("---\ntype: X\n---\n")},
		"assets/logo.png":      {Data: []byte("png")},
		".hidden.md":           {Data: []byte("x")},
		".obsidian/work.md":    {Data: []byte("x")},
		"sub/.git/HEAD.md":     {Data: []byte("x")},
		"sub/.draft.md":        {Data: []byte("x")},
		"sub/b.md":             {Data: []byte("---\ntype: X\n---\n")},
		"sub/deeper/notes.txt": {Data: []byte("x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range b.Docs {
		paths = append(paths, d.Path)
	}
	if want := []string{"a.md", "index.md", "sub/b.md"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("Docs = %q, want %q", paths, want)
	}
	wantFiles := map[string]bool{"index.md": true, "a.md": true, "assets/logo.png": true, "sub/b.md": true, "sub/deeper/notes.txt": true}
	if !reflect.DeepEqual(b.Files, wantFiles) {
		t.Errorf("Files = %v, want %v", b.Files, wantFiles)
	}
	wantDirs := map[string]bool{"": true, "assets": true, "sub": true, "sub/deeper": true}
	if !reflect.DeepEqual(b.Dirs, wantDirs) {
		t.Errorf("Dirs = %v, want %v", b.Dirs, wantDirs)
	}
}
