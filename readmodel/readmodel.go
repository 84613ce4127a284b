// Package readmodel compiles the markdown documents of a tenant into a
// snapshot: the compact, deterministic artifact an agent reads instead of the
// markdown. A snapshot holds a dense manifest (one TSV row a concept), the
// body of every concept with the byte range of each section, the link graph,
// and the facts a concept states in okf compile's shapes (a table's columns,
// keys and joins; the columns and rules a rule uses), parsed once here so
// that no reader parses markdown for them. Its bytes depend only on the
// documents, never on the clock or the order they arrive in, so a snapshot
// is named by the digest of its bytes and an agent's prompt cache stays
// valid until the knowledge really changes.
package readmodel

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/lazy"
)

// SummaryWidth is the longest summary cell, in characters.
const SummaryWidth = 120

// Doc is one markdown document of a bundle, as stored.
type Doc struct {
	Bundle  string
	Path    string // slash-separated bundle path, e.g. "tables/orders.md"
	Content []byte
}

// Concept is one row of the manifest with what is needed to read and
// search it.
type Concept struct {
	ID     string `json:"id"`
	Bundle string `json:"bundle"`
	Title  string `json:"title"`
	// Kind, Status, Grain and Summary are the manifest cells ("-" when empty).
	Kind    string `json:"kind"`
	Status  string `json:"status"`
	Grain   string `json:"grain"`
	Summary string `json:"summary"`
	// Links are the ids of the concepts of the same bundle this one links to.
	Links []string `json:"links,omitempty"`
	// StaleAfter is the authored stale_after value; staleness is decided at
	// read time so the snapshot never depends on the clock.
	StaleAfter string `json:"stale_after,omitempty"`
	// Layer is the frontmatter's layer: where the data a table concept
	// describes sits in its lineage ("source", "staging", "mart"), as okf
	// compile writes it for a dbt project; search ranks by it.
	Layer string `json:"layer,omitempty"`
	// Aliases are the other names people call the concept by, from its
	// frontmatter's aliases: search and packs find it by them, and its
	// manifest row lists them.
	Aliases []string `json:"aliases,omitempty"`
	// Row is the byte range of the concept's manifest row, newline included.
	Row [2]int `json:"row"`
	// Body is the byte range of the concept's body (the document after its
	// frontmatter) inside the snapshot's text region.
	Body [2]int `json:"body"`
	// Sections are the body's sections, with offsets relative to the body.
	Sections []Section `json:"sections,omitempty"`

	text []byte // the body bytes
	// facts is the concept's table or rule facts, encoded as a snapshot
	// encodes them and read on demand (Table, Rule): only a context pack
	// reads them, a few concepts at a time, and decoded they would be most
	// of a large snapshot's objects.
	facts string
}

// Section is a heading-addressed part of a body.
type Section struct {
	Slug  string `json:"slug"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Diagnostic is something the compiler noticed but compiled anyway.
type Diagnostic struct {
	Bundle, Path, Message string
}

func (d Diagnostic) String() string { return d.Bundle + "/" + d.Path + ": " + d.Message }

// Snapshot is a compiled tenant. Treat it as immutable.
type Snapshot struct {
	Tenant   string
	Bundles  []BundleRange
	Concepts []Concept // sorted by bundle, then id, by code unit
	// Manifest is the TSV text as compiled, without stale statuses.
	Manifest []byte
	// textSize is the length of all bodies back to back, as encoded.
	textSize int
	// Digest is the hex sha256 of Encode's bytes.
	Digest string

	byKey map[string]int   // "bundle/id" → concept index
	byID  map[string][]int // bare id → concept indexes
}

// BundleRange is the run of manifest rows of one bundle.
type BundleRange struct {
	Name string `json:"name"`
	Rows [2]int `json:"rows"`
}

// Stats describe a build, for stderr.
type Stats struct {
	Bundles, Concepts, Reused int
	ManifestBytes, TextBytes  int // TextBytes: all concept bodies
	Diagnostics               []Diagnostic
}

// Builder compiles snapshots. One made by NewBuilder remembers the parse of
// every document by path and content, so a rebuild after an edit parses
// only what changed. A Builder is not safe for concurrent use.
type Builder struct {
	cache map[cacheKey]*okf.Document // nil: no caching
}

type cacheKey struct {
	path string
	sum  [32]byte
}

// NewBuilder returns a Builder that caches parses between builds.
func NewBuilder() *Builder { return &Builder{cache: map[cacheKey]*okf.Document{}} }

// Build compiles a tenant's documents. Documents may come in any order;
// index.md and log.md files guide navigation but are not concepts, so they
// do not appear in the snapshot. The snapshot refers to the documents'
// bytes, which must not change afterwards.
func Build(tenant string, docs []Doc) (*Snapshot, Stats) { return (&Builder{}).Build(tenant, docs) }

// Build compiles a tenant's documents, reusing earlier parses when the
// builder caches them. Bundles are compiled one at a time, each parsed on
// every core, so memory holds one bundle's parse trees at once.
func (b *Builder) Build(tenant string, docs []Doc) (*Snapshot, Stats) {
	byBundle := map[string][]int{}
	for i, d := range docs {
		byBundle[d.Bundle] = append(byBundle[d.Bundle], i)
	}
	names := make([]string, 0, len(byBundle))
	for name := range byBundle {
		names = append(names, name)
	}
	sort.Strings(names)

	var st Stats
	var fresh map[cacheKey]*okf.Document
	if b.cache != nil {
		fresh = map[cacheKey]*okf.Document{}
	}
	s := &Snapshot{Tenant: tenant}
	var manifest bytes.Buffer
	manifest.Grow(128 * len(docs))
	manifest.WriteString("# tenant: " + cell(tenant) + "\n")
	manifest.WriteString("# bundles: " + strings.Join(names, " ") + "\n")
	manifest.WriteString("id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n")
	for _, name := range names {
		parsed, reused := b.parse(docs, byBundle[name], fresh)
		st.Reused += reused
		bundle := okf.NewBundle(parsed)
		br := BundleRange{Name: name}
		br.Rows[0] = manifest.Len()
		concepts := bundle.Concepts()
		sort.Slice(concepts, func(i, j int) bool { return concepts[i].ID() < concepts[j].ID() })
		// Reading a concept's facts is most of compiling it: do it on every
		// core, then lay the concepts out in order.
		compiled := make([]Concept, len(concepts))
		diagnostics := make([][]string, len(concepts))
		onEveryCore(len(concepts), func(k int) {
			compiled[k], diagnostics[k] = compileConcept(name, bundle, concepts[k])
		})
		for k, d := range concepts {
			c := compiled[k]
			for _, m := range diagnostics[k] {
				st.Diagnostics = append(st.Diagnostics, Diagnostic{name, d.Path, m})
			}
			c.Row[0] = manifest.Len()
			manifest.WriteString(row(c))
			c.Row[1] = manifest.Len()
			// The snapshot keeps the body by reference, not by copy: the
			// documents' bytes are not changed after they are given.
			c.text = d.Body()
			c.Body = [2]int{s.textSize, s.textSize + len(c.text)}
			s.textSize += len(c.text)
			s.Concepts = append(s.Concepts, c)
		}
		br.Rows[1] = manifest.Len()
		s.Bundles = append(s.Bundles, br)
	}
	if b.cache != nil {
		b.cache = fresh
	}
	s.Manifest = manifest.Bytes()
	s.index()
	s.Digest = s.computeDigest()
	st.Bundles, st.Concepts = len(names), len(s.Concepts)
	st.ManifestBytes, st.TextBytes = len(s.Manifest), s.textSize
	return s, st
}

// parse parses the documents at the given positions on every core, taking
// cached parses where the builder has them and recording them in fresh.
func (b *Builder) parse(docs []Doc, idx []int, fresh map[cacheKey]*okf.Document) ([]*okf.Document, int) {
	out := make([]*okf.Document, len(idx))
	keys := make([]cacheKey, len(idx))
	onEveryCore(len(idx), func(k int) {
		d := docs[idx[k]]
		if b.cache != nil {
			keys[k] = cacheKey{d.Bundle + "\x00" + d.Path, sha256.Sum256(d.Content)}
			if pd, ok := b.cache[keys[k]]; ok {
				out[k] = pd
				return
			}
		}
		out[k] = okf.Parse(d.Path, d.Content)
	})
	reused := 0
	if b.cache != nil {
		for k, key := range keys {
			if b.cache[key] == out[k] {
				reused++
			}
			fresh[key] = out[k]
		}
	}
	return out, reused
}

// onEveryCore calls f for 0..n-1, spread over the cores when there is
// enough work to be worth a goroutine.
func onEveryCore(n int, f func(k int)) {
	var wg sync.WaitGroup
	workers := max(1, min(runtime.GOMAXPROCS(0), n/32))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < n; k += workers {
				f(k)
			}
		}()
	}
	wg.Wait()
}

func (s *Snapshot) index() {
	s.byKey = make(map[string]int, len(s.Concepts))
	s.byID = make(map[string][]int, len(s.Concepts))
	for i, c := range s.Concepts {
		s.byKey[c.Bundle+"/"+c.ID] = i
		s.byID[c.ID] = append(s.byID[c.ID], i)
	}
}

func row(c Concept) string {
	links := "-"
	if len(c.Links) > 0 {
		ids := make([]string, len(c.Links))
		for i, l := range c.Links {
			ids[i] = IDCell(l)
		}
		links = strings.Join(ids, " ")
	}
	return strings.Join([]string{IDCell(c.ID), c.Bundle, c.Kind, c.Status, c.Grain, c.Summary, links}, "\t") + "\n"
}

// idEscaper writes an id into a manifest cell. Ids are file paths and may
// hold spaces, which would split the space-separated links cell, so those
// (and "%", tabs and newlines) are percent-encoded. Lookups accept both
// forms.
var idEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer("%", "%25", " ", "%20", "\t", "%09", "\n", "%0A", "\r", "%0D")
}}

// IDCell returns an id as the manifest writes it.
func IDCell(id string) string { return idEscaper.Get().Replace(id) }

func compileConcept(bundleName string, b *okf.Bundle, d *okf.Document) (Concept, []string) {
	var diags []string
	c := Concept{ID: d.ID(), Bundle: bundleName, Title: oneLine(d.Title())}
	switch {
	case d.ReadErr != nil:
		diags = append(diags, "unreadable: "+d.ReadErr.Error())
	case !d.ValidUTF8:
		diags = append(diags, "not valid UTF-8, compiled as is")
	case !d.Frontmatter.Present:
		diags = append(diags, "no frontmatter, compiled as plain markdown")
	case d.Frontmatter.Err != nil:
		diags = append(diags, "frontmatter ignored: "+d.Frontmatter.Err.Error())
	}
	c.Kind = cell(okf.Snake(d.Type()))
	if d.Frontmatter.Node != nil && c.Kind == "-" {
		diags = append(diags, "no type")
	}
	switch st := d.Status(); st {
	case "stable", "current":
		c.Status = "-"
	default:
		c.Status = cell(st)
	}
	c.Grain = cell(d.TextOrList("grain"))
	c.Aliases = aliases(d)
	summary := d.Description()
	if summary == "" {
		summary = firstSentence(d.Body())
	}
	if len(c.Aliases) > 0 {
		summary = strings.TrimSpace(summary + " Also called: " + strings.Join(c.Aliases, "; ") + ".")
	}
	c.Summary = cut(cell(summary), SummaryWidth)
	c.Links = append([]string(nil), b.Outbound(d.ID())...)
	c.StaleAfter, _ = d.Text("stale_after")
	c.StaleAfter = strings.TrimSpace(c.StaleAfter)
	c.Layer, _ = d.Text("layer")
	c.Layer = strings.TrimSpace(c.Layer)
	for _, sec := range d.Sections {
		c.Sections = append(c.Sections, Section{Slug: sec.Slug, Start: sec.Start - d.BodyStart, End: sec.End - d.BodyStart})
	}
	if okf.IsQuery(d) {
		q, why := readQuery(d)
		if q == nil {
			return c, append(diags, why)
		}
		c.facts = string(appendQuery(nil, q))
		return c, diags
	}
	t, r := okf.ParseFacts(b, d, c.Kind)
	c.facts = string(appendFacts(nil, t, r))
	return c, diags
}

// Bounds of a concept's aliases, which a hostile document could make
// many or long.
const (
	maxAliases     = 32
	maxAliasLength = 120
)

// aliases reads the frontmatter's aliases, a list or one name: each on one
// line, the empty and repeated ones (ignoring case) and those past the
// bounds left out.
func aliases(d *okf.Document) []string {
	var names []string
	if s, ok := d.Text("aliases"); ok {
		names = []string{s}
	} else if n := d.Field("aliases"); n != nil {
		for _, item := range n.Content {
			names = append(names, item.Value)
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range names {
		a = oneLine(a)
		if a == "" || utf8.RuneCountInString(a) > maxAliasLength || seen[strings.ToLower(a)] {
			continue
		}
		seen[strings.ToLower(a)] = true
		if out = append(out, a); len(out) == maxAliases {
			break
		}
	}
	return out
}

// cell makes a value safe for one TSV cell: one line, no tabs, "-" if empty.
func cell(s string) string {
	s = oneLine(s)
	if s == "" {
		return "-"
	}
	return s
}

// oneLine collapses every run of whitespace, tabs and newlines included,
// into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut shortens s to at most width characters, ending with "…" when cut.
func cut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	runes := []rune(s)
	return strings.TrimRight(string(runes[:width-1]), " ") + "…"
}

var (
	mdLinkRe   = lazy.Regexp{Expr: `!?\[([^\]]*)\]\([^)]*\)`}
	mdMarkupRe = lazy.Regexp{Expr: "[*_`]+"}
	sentenceRe = lazy.Regexp{Expr: `^(.+?[.!?])(\s|$)`}
)

// firstSentence returns the first sentence of the first prose paragraph of a
// body, skipping headings, lists, tables, quotes and code.
func firstSentence(body []byte) string {
	inFence := false
	var para []string
	for _, line := range strings.Split(string(body), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if t == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, ">") ||
			strings.HasPrefix(t, "<") || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") ||
			strings.HasPrefix(t, "---") || strings.HasPrefix(t, "[^") {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, t)
	}
	s := strings.Join(para, " ")
	s = mdLinkRe.Get().ReplaceAllString(s, "$1")
	s = mdMarkupRe.Get().ReplaceAllString(s, "")
	if m := sentenceRe.Get().FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// Concept returns the concept addressed by ref: a bare id that only one
// bundle holds, or "bundle/id".
func (s *Snapshot) Concept(ref string) (*Concept, error) {
	i, err := s.Lookup(ref)
	if err != nil {
		return nil, err
	}
	return &s.Concepts[i], nil
}

// Lookup returns the position in Concepts of the concept addressed by ref.
func (s *Snapshot) Lookup(ref string) (int, error) {
	switch idx := s.byID[ref]; len(idx) {
	case 1:
		return idx[0], nil
	case 0:
		if i, ok := s.byKey[ref]; ok {
			return i, nil
		}
		if strings.Contains(ref, "%") {
			if plain, err := url.PathUnescape(ref); err == nil && plain != ref {
				return s.Lookup(plain)
			}
		}
		return -1, fmt.Errorf("%w: %s", ErrUnknown, ref)
	default:
		refs := make([]string, len(idx))
		for k, i := range idx {
			refs[k] = s.Concepts[i].Bundle + "/" + ref
		}
		return -1, fmt.Errorf("%w: %s is in several bundles; name one of %s", ErrAmbiguous, ref, strings.Join(refs, ", "))
	}
}

// LookupIn returns the position of a concept given its bundle and id.
func (s *Snapshot) LookupIn(bundle, id string) (int, bool) {
	i, ok := s.byKey[bundle+"/"+id]
	return i, ok
}

// Body returns a concept's body bytes.
func (s *Snapshot) Body(c *Concept) []byte { return c.text }

// Bundle returns the range of a bundle's rows, or false.
func (s *Snapshot) Bundle(name string) (BundleRange, bool) {
	for _, b := range s.Bundles {
		if b.Name == name {
			return b, true
		}
	}
	return BundleRange{}, false
}
