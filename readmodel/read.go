package readmodel

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/okf-tools/okf"
)

// Errors a read can return.
var (
	ErrUnknown    = errors.New("unknown concept")
	ErrAmbiguous  = errors.New("ambiguous concept id")
	ErrNoSection  = errors.New("no such section")
	ErrNoBundle   = errors.New("no such bundle")
	ErrBadOptions = errors.New("bad read options")
)

func digest(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

// Stale reports whether a concept is past its stale_after at now.
func (c *Concept) Stale(now time.Time) bool {
	return c.StaleAfter != "" && okf.IsStale(c.StaleAfter, now)
}

// RowStatus is the status cell as read at now: "stale" once stale_after has
// passed, else the compiled status.
func (c *Concept) RowStatus(now time.Time) string {
	if c.Stale(now) {
		return "stale"
	}
	return c.Status
}

// ManifestAt returns the manifest as read at now, whole or for one bundle.
// A bundle's rows are one byte range of the compiled manifest; only rows of
// concepts that went stale are rewritten.
func (s *Snapshot) ManifestAt(bundle string, now time.Time) ([]byte, error) {
	start, end := 0, len(s.Manifest)
	names := make([]string, len(s.Bundles))
	for i, b := range s.Bundles {
		names[i] = b.Name
	}
	if len(s.Bundles) > 0 {
		start, end = s.Bundles[0].Rows[0], s.Bundles[len(s.Bundles)-1].Rows[1]
	} else {
		start = len(s.Manifest)
	}
	if bundle != "" {
		b, ok := s.Bundle(bundle)
		if !ok {
			return nil, fmt.Errorf("%w: %s (bundles: %s)", ErrNoBundle, bundle, strings.Join(names, " "))
		}
		start, end, names = b.Rows[0], b.Rows[1], []string{bundle}
	}
	var out bytes.Buffer
	out.WriteString("# tenant: " + cell(s.Tenant) + "\n")
	out.WriteString("# bundles: " + strings.Join(names, " ") + "\n")
	out.WriteString("id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n")
	at := start
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if c.Row[0] < start || c.Row[1] > end || !c.Stale(now) {
			continue
		}
		out.Write(s.Manifest[at:c.Row[0]])
		stale := *c
		stale.Status = "stale"
		out.WriteString(row(stale))
		at = c.Row[1]
	}
	out.Write(s.Manifest[at:end])
	return out.Bytes(), nil
}

// Row returns a concept's manifest row as read at now, without its newline.
func (s *Snapshot) Row(c *Concept, now time.Time) string {
	if c.Stale(now) {
		stale := *c
		stale.Status = "stale"
		return strings.TrimSuffix(row(stale), "\n")
	}
	return strings.TrimSuffix(string(s.Manifest[c.Row[0]:c.Row[1]]), "\n")
}

// GetOptions narrow a read.
type GetOptions struct {
	// Section is a heading slug; empty means the whole body.
	Section string
	// Offset and Limit select bytes of the section (or body); Limit 0 means
	// to the end.
	Offset, Limit int
	// Find is a literal phrase, matched without regard to case; the read
	// returns a window around its first match and the offsets of all.
	Find string
}

// FindWindow is the size of the window returned around a match when no
// Limit is given.
const FindWindow = 2000

// Slice is the text a read returns.
type Slice struct {
	Ref     string `json:"ref"` // bundle/id
	Section string `json:"section,omitempty"`
	Text    string `json:"text"`
	// Start and End are the slice's byte offsets in the addressed text
	// (the section, or the body), and Total its length.
	Start int `json:"start"`
	End   int `json:"end"`
	Total int `json:"total"`
	// Matches are the offsets of every match of Find.
	Matches []int `json:"matches,omitempty"`
}

// Get reads a concept, or one section of it, or a window of either.
func (s *Snapshot) Get(ref string, o GetOptions) (Slice, error) {
	if o.Offset < 0 || o.Limit < 0 {
		return Slice{}, fmt.Errorf("%w: offset and limit must not be negative", ErrBadOptions)
	}
	c, err := s.Concept(ref)
	if err != nil {
		return Slice{}, err
	}
	text := s.Body(c)
	if o.Section != "" {
		sec, ok := c.Section(o.Section)
		if !ok {
			var slugs []string
			for _, x := range c.Sections {
				slugs = append(slugs, x.Slug)
			}
			return Slice{}, fmt.Errorf("%w: %s#%s (sections: %s)", ErrNoSection, c.ID, o.Section, strings.Join(slugs, " "))
		}
		text = text[sec.Start:sec.End]
	}
	out := Slice{Ref: c.Bundle + "/" + c.ID, Section: o.Section, Total: len(text)}
	start, limit := o.Offset, o.Limit
	if o.Find != "" {
		out.Matches = findAll(text, o.Find)
		if limit == 0 {
			limit = FindWindow
		}
		if len(out.Matches) > 0 && o.Offset == 0 {
			// Show a little of what comes before the first match.
			start = max(0, out.Matches[0]-limit/4)
		}
	}
	start = min(start, len(text))
	end := len(text)
	if limit > 0 {
		end = min(len(text), start+limit)
	}
	start, end = runeStart(text, start), runeStart(text, end)
	out.Start, out.End, out.Text = start, end, string(text[start:end])
	return out, nil
}

// Section returns a concept's section by slug.
func (c *Concept) Section(slug string) (Section, bool) {
	for _, s := range c.Sections {
		if s.Slug == slug {
			return s, true
		}
	}
	return Section{}, false
}

// runeStart moves an offset back to the start of the rune it falls in.
func runeStart(b []byte, i int) int {
	for i > 0 && i < len(b) && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// findAll returns the offsets of every match of a phrase, ignoring case.
func findAll(text []byte, phrase string) []int {
	needle := bytes.ToLower([]byte(phrase))
	hay := bytes.ToLower(text)
	if len(hay) != len(text) {
		// Lowercasing changed byte lengths (rare scripts): match exactly.
		hay, needle = text, []byte(phrase)
	}
	var out []int
	for i := 0; ; {
		j := bytes.Index(hay[i:], needle)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + max(1, len(needle))
	}
}
