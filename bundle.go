package okf

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Bundle is a folder of OKF documents with the links between them.
type Bundle struct {
	// Docs holds every markdown document, sorted by path (byte order).
	Docs []*Document
	// Files holds the path of every regular file in the bundle, markdown or
	// not, so that links to other files can be checked.
	Files map[string]bool
	// Dirs holds every folder path, without a trailing slash; the root is "".
	Dirs map[string]bool

	byPath   map[string]*Document
	outbound map[string][]string
	inbound  map[string][]string
}

// Load reads the bundle rooted at dir, by WalkFolder's rules: every
// regular .md file is a document; hidden files and folders (names starting
// with ".") below the root and symbolic links are skipped. A file that
// cannot be read becomes a document with ReadErr set.
func Load(dir string) (*Bundle, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	var b *Bundle
	err = inFolder(dir, func(fsys fs.FS) error {
		b, err = LoadFS(fsys)
		return err
	})
	return b, err
}

// LoadFS reads a bundle from the root of a file system.
func LoadFS(fsys fs.FS) (*Bundle, error) {
	var docs []*Document
	files := map[string]bool{}
	dirs := map[string]bool{"": true}
	err := WalkFolder(fsys, func(p string, e fs.DirEntry, err error) error {
		switch {
		case p == ".":
			return err
		case e.IsDir():
			dirs[p] = true
			if err != nil {
				return fs.SkipDir // unreadable: record what is known and go on
			}
		default:
			files[p] = true
			if IsDocument(p) {
				raw, rerr := fs.ReadFile(fsys, p)
				var d *Document
				if rerr != nil {
					d = &Document{Path: p, ReadErr: rerr}
				} else {
					d = Parse(p, raw)
				}
				docs = append(docs, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := NewBundle(docs)
	b.Files, b.Dirs = files, dirs
	return b, nil
}

// NewBundle makes a bundle of parsed documents, for documents that do not
// come from a folder (a store, a test). Files and Dirs are derived from the
// document paths.
func NewBundle(docs []*Document) *Bundle {
	sorted := append([]*Document(nil), docs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	b := &Bundle{Docs: sorted, Files: map[string]bool{}, Dirs: map[string]bool{"": true}, byPath: map[string]*Document{}}
	for _, d := range sorted {
		b.byPath[d.Path] = d
		b.Files[d.Path] = true
		for dir := path.Dir(d.Path); dir != "."; dir = path.Dir(dir) {
			b.Dirs[dir] = true
		}
	}
	b.link()
	return b
}

// Doc returns the document at a bundle path.
func (b *Bundle) Doc(p string) *Document { return b.byPath[p] }

// Concept returns the concept with the given id, or nil.
func (b *Bundle) Concept(id string) *Document {
	d := b.byPath[id+".md"]
	if d == nil || d.Kind() != ConceptKind {
		return nil
	}
	return d
}

// Concepts returns the concept documents in path order.
func (b *Bundle) Concepts() []*Document {
	var out []*Document
	for _, d := range b.Docs {
		if d.Kind() == ConceptKind {
			out = append(out, d)
		}
	}
	return out
}

// PersonalData returns the columns the bundle's concepts mark as personal
// data (Document.PersonalData), as "table.column" with the concept's title
// as the table, in path order.
func (b *Bundle) PersonalData() []string {
	var out []string
	for _, d := range b.Concepts() {
		for _, c := range d.PersonalData() {
			out = append(out, d.Title()+"."+c)
		}
	}
	return out
}

// Target returns the concept id a link points at, or "" when the link does
// not reach a concept of this bundle. A target without an extension also
// reaches the concept of the same name with ".md".
func (b *Bundle) Target(l Link) string {
	if l.Kind != InternalLink || strings.HasSuffix(l.Path, "/") {
		return ""
	}
	p := l.Path
	if path.Ext(p) == "" && b.byPath[p] == nil {
		p += ".md"
	}
	if d := b.byPath[p]; d != nil && d.Kind() == ConceptKind {
		return d.ID()
	}
	return ""
}

// Exists reports whether an internal link resolves to a file or folder.
func (b *Bundle) Exists(l Link) bool {
	if l.Kind != InternalLink {
		return false
	}
	if l.Path == "/" {
		return true
	}
	if strings.HasSuffix(l.Path, "/") {
		return b.Dirs[strings.TrimSuffix(l.Path, "/")]
	}
	if b.Files[l.Path] || b.Dirs[l.Path] {
		return true
	}
	return path.Ext(l.Path) == "" && b.Files[l.Path+".md"]
}

// Outbound returns the concepts a concept links to, sorted, without itself.
func (b *Bundle) Outbound(id string) []string { return b.outbound[id] }

// Inbound returns the concepts that link to a concept, sorted, without itself.
func (b *Bundle) Inbound(id string) []string { return b.inbound[id] }

// link builds the concept-to-concept graph.
func (b *Bundle) link() {
	b.outbound = map[string][]string{}
	b.inbound = map[string][]string{}
	for _, d := range b.Docs {
		if d.Kind() != ConceptKind {
			continue
		}
		from := d.ID()
		seen := map[string]bool{}
		for _, l := range d.Links {
			to := b.Target(l)
			if to == "" || to == from || seen[to] {
				continue
			}
			seen[to] = true
			b.outbound[from] = append(b.outbound[from], to)
			b.inbound[to] = append(b.inbound[to], from)
		}
		sort.Strings(b.outbound[from])
	}
	for id := range b.inbound {
		sort.Strings(b.inbound[id])
	}
}
