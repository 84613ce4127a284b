package readmodel

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Every reading command decodes every concept of its snapshot first, and
// encoding/json's reflection was most of that (issue 17). decodeConcept
// reads the JSON json.Marshal writes for a Concept, keys in their order,
// itself, and leaves anything else to json.Unmarshal, so a snapshot reads
// the same either way (conceptjson_test.go).

func decodeConcept(b []byte, c *Concept) error {
	if (&conceptReader{b: b}).concept(c) {
		return nil
	}
	*c = Concept{}
	return json.Unmarshal(b, c)
}

type conceptReader struct {
	b  []byte
	i  int
	ok bool
}

func (r *conceptReader) concept(c *Concept) bool {
	r.ok = true
	for _, f := range [...]struct {
		key string
		to  *string
	}{{`{"id":`, &c.ID}, {`,"bundle":`, &c.Bundle}, {`,"title":`, &c.Title}, {`,"kind":`, &c.Kind},
		{`,"status":`, &c.Status}, {`,"grain":`, &c.Grain}, {`,"summary":`, &c.Summary}} {
		r.lit(f.key)
		*f.to = r.str()
	}
	if r.maybe(`,"links":[`) {
		c.Links = r.strs()
	}
	if r.maybe(`,"stale_after":`) {
		c.StaleAfter = r.str()
	}
	if r.maybe(`,"layer":`) {
		c.Layer = r.str()
	}
	if r.maybe(`,"aliases":[`) {
		c.Aliases = r.strs()
	}
	r.lit(`,"row":`)
	c.Row = r.pair()
	r.lit(`,"body":`)
	c.Body = r.pair()
	if r.maybe(`,"sections":[`) {
		for r.ok {
			var s Section
			r.lit(`{"slug":`)
			s.Slug = r.str()
			r.lit(`,"start":`)
			s.Start = r.num()
			r.lit(`,"end":`)
			s.End = r.num()
			r.lit("}")
			c.Sections = append(c.Sections, s)
			if !r.maybe(",") {
				break
			}
		}
		r.lit("]")
	}
	r.lit("}")
	return r.ok && r.i == len(r.b)
}

// strs reads the strings of a list whose "[" is read, and its "]".
func (r *conceptReader) strs() []string {
	var out []string
	for r.ok {
		out = append(out, r.str())
		if !r.maybe(",") {
			break
		}
	}
	r.lit("]")
	return out
}

// lit consumes s, or fails the read.
func (r *conceptReader) lit(s string) {
	if !r.maybe(s) {
		r.ok = false
	}
}

// maybe consumes s if it comes next.
func (r *conceptReader) maybe(s string) bool {
	if !r.ok || len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// pair reads [a,b].
func (r *conceptReader) pair() [2]int {
	r.lit("[")
	a := r.num()
	r.lit(",")
	b := r.num()
	r.lit("]")
	return [2]int{a, b}
}

// num reads a non-negative integer as json.Marshal writes one.
func (r *conceptReader) num() int {
	start := r.i
	for r.ok && r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
		r.i++
	}
	if !r.ok || r.i == start || r.i-start > 1 && r.b[start] == '0' {
		r.ok = false
		return 0
	}
	n, err := strconv.Atoi(string(r.b[start:r.i]))
	if err != nil {
		r.ok = false
	}
	return n
}

// str reads a JSON string, its escapes too.
func (r *conceptReader) str() string {
	if !r.ok || r.i >= len(r.b) || r.b[r.i] != '"' {
		r.ok = false
		return ""
	}
	r.i++
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			if !utf8.Valid(r.b[start:r.i]) {
				r.ok = false // json.Unmarshal replaces; leave it to it
				return ""
			}
			s := string(r.b[start:r.i])
			r.i++
			return s
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			r.ok = false
			return ""
		}
		r.i++
	}
	r.ok = false
	return ""
}

// escaped finishes a string that has an escape, from its start.
func (r *conceptReader) escaped(start int) string {
	out := append([]byte{}, r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			if !utf8.Valid(out) {
				r.ok = false // json.Unmarshal replaces; leave it to it
			}
			return string(out)
		case c < 0x20:
			r.ok = false
			return ""
		case c != '\\':
			out = append(out, c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.b) {
			break
		}
		r.i += 2
		switch e := r.b[r.i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			v, ok := r.hex4()
			if !ok {
				break
			}
			if utf16.IsSurrogate(v) {
				lo, ok := rune(0), false
				if r.maybe(`\u`) {
					lo, ok = r.hex4()
				}
				if v = utf16.DecodeRune(v, lo); !ok || v == utf8.RuneError {
					r.ok = false // a lone surrogate: json.Unmarshal's rules
					return ""
				}
			}
			out = utf8.AppendRune(out, v)
		default:
			r.ok = false
			return ""
		}
		if !r.ok {
			return ""
		}
	}
	r.ok = false
	return ""
}

func (r *conceptReader) hex4() (rune, bool) {
	if len(r.b)-r.i < 4 {
		r.ok = false
		return 0, false
	}
	v, err := strconv.ParseUint(string(r.b[r.i:r.i+4]), 16, 32)
	if err != nil {
		r.ok = false
		return 0, false
	}
	r.i += 4
	return rune(v), true
}
