package compile

import (
	"bytes"
	"strings"

	"github.com/okf-tools/okf/internal/yamlplain"
)

// A compile writes hundreds of frontmatters, and encoding them with
// yaml.v3's reflection and emitter was a sixth of its time. Most of their
// values are plain text, which yaml.v3 writes in one of two ways that are
// simple to decide and to write; the writer below writes those itself and
// leaves every other frontmatter to yaml.v3 (concept), so that the bytes
// are yaml.v3's either way. frontmatter_test.go holds the two to each
// other.

// frontWriter renders a frontmatter; ok turns false at the first value it
// cannot write as yaml.v3 would.
type frontWriter struct {
	b  bytes.Buffer
	ok bool
}

// scalar writes "key: value" at an indent.
func (f *frontWriter) scalar(indent, key, value string) {
	s, ok := yamlString(value, false)
	if !ok {
		f.ok = false
		return
	}
	f.b.WriteString(indent)
	f.b.WriteString(key)
	f.b.WriteString(": ")
	f.b.WriteString(s)
	f.b.WriteByte('\n')
}

// flowList writes "key: [a, b]".
func (f *frontWriter) flowList(key string, items []string) {
	f.b.WriteString(key)
	f.b.WriteString(": [")
	for i, item := range items {
		s, ok := yamlString(item, true)
		if !ok {
			f.ok = false
			return
		}
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.b.WriteString(s)
	}
	f.b.WriteString("]\n")
}

func (f *frontWriter) generated(g generated) {
	f.b.WriteString("generated:\n")
	f.scalar("  ", "by", g.By)
	if g.At != "" {
		f.scalar("  ", "at", g.At)
	}
}

func (f *frontWriter) sources(sources []source) {
	if len(sources) == 0 {
		return
	}
	f.b.WriteString("sources:\n")
	for _, s := range sources {
		// The first key of an item follows its dash.
		indent := "  - "
		if s.ID != "" {
			f.scalar(indent, "id", s.ID)
			indent = "    "
		}
		f.scalar(indent, "resource", s.Resource)
		if s.Title != "" {
			f.scalar("    ", "title", s.Title)
		}
	}
}

// renderFront returns a frontmatter's YAML as concept's yaml.v3 encoder
// writes it (indent 2), and false if some value is one it leaves to
// yaml.v3.
func renderFront(front any) ([]byte, bool) {
	f := &frontWriter{ok: true}
	switch front := front.(type) {
	case tableFront:
		f.scalar("", "type", front.Type)
		f.scalar("", "title", front.Title)
		f.scalar("", "description", front.Description)
		if len(front.Aliases) > 0 {
			f.flowList("aliases", front.Aliases)
		}
		f.flowList("tags", front.Tags)
		if len(front.Grain) > 0 {
			f.flowList("grain", front.Grain)
		}
		if front.Layer != "" {
			f.scalar("", "layer", front.Layer)
		}
		if len(front.PersonalData) > 0 {
			f.flowList("personal_data", front.PersonalData)
		}
		f.generated(front.Generated)
		f.sources(front.Sources)
	case ruleFront:
		f.scalar("", "type", front.Type)
		f.scalar("", "title", front.Title)
		f.scalar("", "description", front.Description)
		if len(front.Aliases) > 0 {
			f.flowList("aliases", front.Aliases)
		}
		f.flowList("tags", front.Tags)
		f.generated(front.Generated)
		f.sources(front.Sources)
	default:
		return nil, false
	}
	return f.b.Bytes(), f.ok
}

// yamlString returns a string as yaml.v3 writes it as a value in block
// context, or as an item of a flow sequence: plain when that reads back as
// the same string and has no indicator where it would be one, else
// single-quoted, and double-quoted when it would read back as another
// type. It returns false for what it leaves to yaml.v3: the empty string,
// anything but printable ASCII (tabs, line breaks, other scripts) and
// text led by a digit or a sign with no space in it that reads as a
// string (yaml.v3 quotes some of it as base-60 floats, "1:20").
func yamlString(s string, flow bool) (string, bool) {
	if s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "", false
		}
	}
	if yamlplain.ReadsAs(s) == yamlplain.Other {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, true
	}
	if c := s[0]; (c == '+' || c == '-' || '0' <= c && c <= '9') && !strings.Contains(s, " ") {
		return "", false // perhaps what yaml.v3 quotes as a base-60 float ("1:20")
	}
	if plainAllowed(s, flow) {
		return s, true
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", true
}

// plainAllowed reports whether yaml.v3's emitter writes a printable ASCII
// string plain in block context, or in flow context: no space at either
// end, no document marker, and no indicator where it would be one.
func plainAllowed(s string, flow bool) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' || strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	for i := 0; i < len(s); i++ {
		spaceAfter := i+1 == len(s) || s[i+1] == ' '
		spaceBefore := i > 0 && s[i-1] == ' '
		switch c := s[i]; {
		case i == 0 && strings.IndexByte("#,[]{}&*!|>'\"%@`", c) >= 0:
			return false
		case i == 0 && (c == '?' || c == ':'):
			if flow || spaceAfter {
				return false
			}
		case i == 0 && c == '-':
			if spaceAfter {
				return false
			}
		case i > 0 && strings.IndexByte(",?[]{}", c) >= 0:
			if flow {
				return false
			}
		case i > 0 && c == ':':
			if flow || spaceAfter {
				return false
			}
		case i > 0 && c == '#':
			if spaceBefore {
				return false
			}
		}
	}
	return true
}
