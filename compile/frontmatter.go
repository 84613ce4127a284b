package compile

import (
	"bytes"
	"strconv"
	"strings"
	"time"
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
		f.flowList("tags", front.Tags)
		if len(front.Grain) > 0 {
			f.flowList("grain", front.Grain)
		}
		f.generated(front.Generated)
		f.sources(front.Sources)
	case ruleFront:
		f.scalar("", "type", front.Type)
		f.scalar("", "title", front.Title)
		f.scalar("", "description", front.Description)
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
// strings whose type it cannot tell cheaply.
func yamlString(s string, flow bool) (string, bool) {
	if s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "", false
		}
	}
	switch readsAs(s) {
	case readsAsOther:
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, true
	case readsAsUnknown:
		return "", false
	}
	if plainAllowed(s, flow) {
		return s, true
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", true
}

// What a string written plain reads back as.
const (
	readsAsString = iota
	readsAsOther  // a boolean, null, number or time, or an old boolean yaml.v3 quotes
	readsAsUnknown
)

// readsAs tells what yaml.v3 would read s, written plain, back as,
// following its resolve on the first byte: a letter or punctuation other
// than those below always reads as a string; y, n, t, f, o, ~ and < only
// as the words of its table of booleans, nulls and the merge key; a "."
// as a float when it parses as one; a digit or a sign as a string when
// the text holds a space and does not start like a time (YYYY-), for
// numbers never do, and as a time when it parses as one of yaml.v3's
// formats. Other numbers are unknown.
func readsAs(s string) int {
	switch c := s[0]; {
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		digits := 0
		for digits < len(s) && '0' <= s[digits] && s[digits] <= '9' {
			digits++
		}
		if digits == 4 && len(s) > 4 && s[4] == '-' {
			for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
				if _, err := time.Parse(layout, s); err == nil {
					return readsAsOther
				}
			}
			return readsAsUnknown
		}
		if strings.Contains(s, " ") {
			return readsAsString
		}
		return readsAsUnknown
	case c == '.':
		if isYAMLWord(s) {
			return readsAsOther
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return readsAsOther
		}
	case strings.IndexByte("yYnNtTfFoO~<", c) >= 0:
		if isYAMLWord(s) {
			return readsAsOther
		}
	}
	return readsAsString
}

// isYAMLWord reports whether s is one of the words yaml.v3 reads as
// something other than a string, or quotes as an old boolean.
func isYAMLWord(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "<<",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
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
