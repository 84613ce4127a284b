package engine

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/readmodel"
)

// SnapshotFiles presents one bundle of a snapshot as a read-only folder
// of markdown files, for the browse strategy when the knowledge comes from
// the store rather than a folder: each concept is <id>.md, its title and
// summary as frontmatter above its body. A snapshot keeps no index.md, so
// every folder reads as a listing of its files.
func SnapshotFiles(s *readmodel.Snapshot, bundle string) fs.FS {
	f := snapshotFS{files: map[string][]byte{}, dirs: map[string][]string{".": nil}}
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if c.Bundle != bundle {
			continue
		}
		head, _ := yaml.Marshal(map[string]string{"title": c.Title, "description": c.Summary})
		name := c.ID + ".md"
		f.files[name] = []byte("---\n" + string(head) + "---\n" + string(s.Body(c)))
		for child := name; child != "."; {
			dir := path.Dir(child)
			known := f.dirs[dir] != nil
			if !slices.Contains(f.dirs[dir], path.Base(child)) {
				f.dirs[dir] = append(f.dirs[dir], path.Base(child))
			}
			if known {
				break
			}
			child = dir
		}
	}
	for _, names := range f.dirs {
		slices.Sort(names)
	}
	return f
}

type snapshotFS struct {
	files map[string][]byte
	dirs  map[string][]string // folder → the names in it
}

func (f snapshotFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := f.files[name]; ok {
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(data))}, r: strings.NewReader(string(data))}, nil
	}
	if names, ok := f.dirs[name]; ok {
		d := &memDir{info: memInfo{name: path.Base(name), dir: true}}
		for _, n := range names {
			child := path.Join(name, n)
			_, isDir := f.dirs[child]
			d.entries = append(d.entries, fs.FileInfoToDirEntry(memInfo{name: n, dir: isDir, size: int64(len(f.files[child]))}))
		}
		return d, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

type memFile struct {
	info memInfo
	r    *strings.Reader
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Read(p []byte) (int, error) { return m.r.Read(p) }
func (m *memFile) Close() error               { return nil }

type memDir struct {
	info    memInfo
	entries []fs.DirEntry
	read    int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.read:]
	if n <= 0 {
		d.read = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.read += len(rest)
	return rest, nil
}
