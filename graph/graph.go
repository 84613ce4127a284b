// Package graph draws OKF knowledge as one self-contained HTML page that
// stays readable from ten concepts to tens of thousands: each bundle a
// labelled card packed to fill the page, each concept a node coloured by
// its type and outlined by its status, each link an arrow, drawn on a
// canvas with levels of detail by zoom, a search that flies to what it
// finds, and a side panel with a concept's manifest row and body. The page
// needs no network: its script and styles are inline, and the knowledge is
// one JSON block inside it, written in a fixed order so the same knowledge
// gives the same bytes. The page's script computes the layout with no
// randomness, so the same knowledge draws the same picture.
package graph

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/internal/scriptjson"
	"github.com/okf-tools/okf/readmodel"
)

// Data is what the page draws.
type Data struct {
	Title string `json:"title"`
	// Kinds are the concept types present, sorted; a node's colour is its
	// kind's place in this list.
	Kinds []string `json:"kinds"`
	Nodes []Node   `json:"nodes"`
	// Links are [from, to] node indexes, sorted, without duplicates.
	Links [][2]int `json:"links"`
}

// Node is one concept.
type Node struct {
	// Ref is bundle/id.
	Ref    string `json:"ref"`
	Bundle string `json:"bundle"`
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	// Status is draft, deprecated, stale, or "-" for a stable concept.
	Status  string `json:"status"`
	Summary string `json:"summary"`
	// Row is the concept's manifest row, as an agent reads it.
	Row string `json:"row"`
	// Body is the markdown after the frontmatter.
	Body string `json:"body"`
}

// Build collects the concepts of the snapshot's bundles (all of them when
// bundles is empty), with statuses decided at now.
func Build(s *readmodel.Snapshot, title string, now time.Time, bundles ...string) (*Data, error) {
	want := map[string]bool{}
	for _, b := range bundles {
		if _, ok := s.Bundle(b); !ok {
			return nil, fmt.Errorf("no bundle %q in the knowledge", b)
		}
		want[b] = true
	}
	d := &Data{Title: title, Kinds: []string{}, Nodes: []Node{}, Links: [][2]int{}}
	index := map[string]int{}
	kinds := map[string]bool{}
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if len(want) > 0 && !want[c.Bundle] {
			continue
		}
		index[c.Bundle+"/"+c.ID] = len(d.Nodes)
		kinds[c.Kind] = true
		d.Nodes = append(d.Nodes, Node{
			Ref: c.Bundle + "/" + c.ID, Bundle: c.Bundle, ID: c.ID, Title: c.Title, Kind: c.Kind,
			Status: c.RowStatus(now), Summary: c.Summary, Row: strings.TrimSuffix(s.Row(c, now), "\n"), Body: string(s.Body(c)),
		})
	}
	seen := map[[2]int]bool{}
	for from, n := range d.Nodes {
		c, err := s.Concept(n.Ref)
		if err != nil {
			return nil, err
		}
		for _, l := range c.Links {
			to, ok := index[n.Bundle+"/"+l]
			if !ok || to == from || seen[[2]int{from, to}] {
				continue
			}
			seen[[2]int{from, to}] = true
			d.Links = append(d.Links, [2]int{from, to})
		}
	}
	sort.Slice(d.Links, func(i, j int) bool {
		a, b := d.Links[i], d.Links[j]
		return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
	})
	for k := range kinds {
		d.Kinds = append(d.Kinds, k)
	}
	sort.Strings(d.Kinds)
	return d, nil
}

// JSON is the page's data block: indented, with <, > and & escaped so it
// cannot close the script element that holds it.
func (d *Data) JSON() ([]byte, error) {
	b, err := scriptjson.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the graph: %w", err)
	}
	return b, nil
}

//go:embed page.html
var pages embed.FS

var page = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.ParseFS(pages, "page.html"))
}}

// WriteHTML writes the page.
func (d *Data) WriteHTML(w io.Writer) error {
	data, err := d.JSON()
	if err != nil {
		return err
	}
	return page.Get().Execute(w, struct {
		Title string
		Data  template.JS
	}{d.Title, template.JS(data)})
}
