package okf

import (
	"bytes"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary bytes to the document parser and the validator:
// neither may panic, the exact bytes must round-trip, and every range and
// line must fall inside the document.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"---\n",
		"---\ntype: Table\n---\n# A\n## B\ntext [x](y.md#z)\n",
		"\xef\xbb\xbf---\r\ntype: X\r\n---\r\n# A\r\n",
		"---\ntype: [a\n---\n",
		"---\n- a\n---\n```\n# not a heading\n[not](a.md)\n```\n",
		"# Title\n\ntext[^note]\n\n[^note]: a note\n\nA\n===\n",
		"---\nsources: [{id: a, resource: /x.md}]\n---\n[ref]: ../../x.md\n[a][ref] <b>\n",
		"\xff\xfe---\n",
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		d := Parse("dir/doc.md", raw)
		if !bytes.Equal(d.Raw, orig) || !bytes.Equal(raw, orig) {
			t.Fatal("bytes changed")
		}
		if d.BodyStart < 0 || d.BodyStart > len(raw) {
			t.Fatalf("BodyStart %d outside [0,%d]", d.BodyStart, len(raw))
		}
		if fm := d.Frontmatter; fm.Present && (fm.Start > fm.End || fm.End > d.BodyStart) {
			t.Fatalf("frontmatter range [%d,%d) with body at %d", fm.Start, fm.End, d.BodyStart)
		}
		lines := bytes.Count(raw, []byte("\n")) + 1
		for _, s := range d.Sections {
			if s.Start < d.BodyStart || s.End < s.Start || s.End > len(raw) || s.Line < 1 || s.Line > lines {
				t.Fatalf("section %+v outside the document", s)
			}
		}
		for _, l := range d.Links {
			if l.Line < 1 || l.Line > lines {
				t.Fatalf("link %+v on line outside 1..%d", l, lines)
			}
		}
		idx := Parse("index.md", raw)
		log := Parse("log.md", raw)
		rep := Validate(NewBundle([]*Document{d, idx, log}), Options{Now: now})
		for _, f := range rep.Findings {
			if f.Line < 0 || f.Line > lines {
				t.Fatalf("finding %v on a line outside 1..%d", f, lines)
			}
		}
	})
}
