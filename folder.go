package okf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The rules by which okf reads folders as bundles live here alone, so that
// Load, okf import, the reading commands' --dir, okf mcp and okf serve and
// the folder watcher agree on what a bundle holds and what it is called.

// IsDocument reports whether a bundle file is a document: its name ends in
// ".md".
func IsDocument(name string) bool { return strings.HasSuffix(name, ".md") }

// WalkFolder walks the bundle folder at the root of fsys as fs.WalkDir does,
// in lexical order, calling fn for the root and for what a bundle holds:
// folders and regular files. Below the root, names starting with "." are
// skipped (a dot-folder such as .git or .obsidian with all it holds), and so
// are symbolic links, which are never followed, so the walk never leaves the
// folder, and devices, pipes and sockets. Every other name is walked, a
// node_modules or _site folder too: a skip list by name would drop a
// bundle's own folder of that name without a word.
func WalkFolder(fsys fs.FS, fn fs.WalkDirFunc) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if p == "." {
			return fn(p, d, err)
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		return fn(p, d, err)
	})
}

// ReadFolder reads the documents of the bundle folder dir as path → exact
// bytes, picked by WalkFolder's rules as Load picks them, without parsing
// them: hashing them for a re-import costs far less. Where Load makes an
// unreadable file a document with ReadErr, ReadFolder stops, naming it.
func ReadFolder(dir string) (map[string][]byte, error) {
	docs := map[string][]byte{}
	err := inFolder(dir, func(fsys fs.FS) error {
		return WalkFolder(fsys, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !IsDocument(p) {
				return err
			}
			content, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			docs[p] = content
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", dir, err)
	}
	return docs, nil
}

// inFolder calls f with the folder dir, opened as an os.Root so that no
// path read through it leaves dir, even one swapped for a link meanwhile.
func inFolder(dir string, f func(fs.FS) error) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	fsys := &folderFS{top: root}
	defer fsys.close()
	return f(fsys)
}

// folderFS is the file system of an os.Root that keeps the folder it last
// opened a file in open as a root of its own. A path through a root costs a
// system call for each of its folders, and a walk reads a folder's files
// one after another: so a file costs one open, not one a folder. One folder
// is kept, so a tree of any width holds two descriptors.
type folderFS struct {
	top *os.Root

	mu       sync.Mutex
	lastDir  string
	lastRoot *os.Root
	lastFile *os.File // lastDir opened as a file, for readIn; nil until asked
}

func (f *folderFS) Open(name string) (fs.File, error) { return f.open(name) }

func (f *folderFS) open(name string) (*os.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir, base := path.Split(name)
	if dir == "" {
		return f.top.Open(name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastRoot == nil || f.lastDir != dir {
		r, err := f.top.OpenRoot(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
		}
		f.closeLast()
		f.lastDir, f.lastRoot = dir, r
	}
	file, err := f.lastRoot.Open(base)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	return file, nil
}

// ReadDir lists a folder sorted by name, as fs.ReadDir does, with listDir.
func (f *folderFS) ReadDir(name string) ([]fs.DirEntry, error) {
	dir, err := f.open(name)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := listDir(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPath(err)}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// ReadFile reads a file as fs.ReadFile would through Open, in fewer
// system calls where the platform allows (readIn): a bundle is read file
// by file, and each os.File costs four calls more than the reading.
func (f *folderFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir, base := path.Split(name)
	f.mu.Lock()
	var (
		content []byte
		done    bool
		err     error
	)
	if folder, ferr := f.folderFile(dir); ferr == nil {
		content, done, err = readIn(folder, base)
	}
	f.mu.Unlock()
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if done {
		return content, nil
	}
	// Open says why the folder or the file would not open.
	file, err := f.open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(file)
}

// folderFile returns the folder dir ("" for the top) opened as a file,
// kept with lastRoot. f.mu is held.
func (f *folderFS) folderFile(dir string) (*os.File, error) {
	if f.lastFile != nil && f.lastDir == dir {
		return f.lastFile, nil
	}
	name := strings.TrimSuffix(dir, "/")
	if name == "" {
		name = "."
	}
	d, err := f.top.Open(name)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if f.lastDir != dir {
		f.closeLast()
		if dir != "" {
			r, err := f.top.OpenRoot(name)
			if err != nil {
				d.Close()
				return nil, unwrapPath(err)
			}
			f.lastRoot = r
		}
		f.lastDir = dir
	}
	f.lastFile = d
	return d, nil
}

func (f *folderFS) closeLast() {
	if f.lastRoot != nil {
		f.lastRoot.Close()
		f.lastRoot = nil
	}
	if f.lastFile != nil {
		f.lastFile.Close()
		f.lastFile = nil
	}
	f.lastDir = ""
}

func (f *folderFS) close() {
	f.mu.Lock()
	f.closeLast()
	f.mu.Unlock()
	f.top.Close()
}

// unwrapPath returns the cause of a path error, whose path is then the
// whole name rather than the part a folder's root saw.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// A BundleFolder is a bundle found in a folder.
type BundleFolder struct {
	Name string // the bundle's name, made by BundleName
	Dir  string // its folder
}

// Bundles finds the bundles of a folder of bundle folders: each subfolder
// that WalkFolder walks and that holds a document at any depth is a bundle,
// named by BundleName of its folder name, in lexical order. The documents
// at the top of dir belong to no bundle; their names come back as loose.
// Two folders that make the same bundle name are an error naming both.
func Bundles(dir string) (bundles []BundleFolder, loose []string, err error) {
	folders := map[string]string{}
	err = inFolder(dir, func(fsys fs.FS) error {
		return WalkFolder(fsys, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || p == ".":
				return err
			case !d.IsDir():
				if IsDocument(p) {
					loose = append(loose, p)
				}
				return nil
			}
			has, err := holdsDocument(fsys, p)
			if err != nil || !has {
				return err
			}
			name := BundleName(p)
			if other, dup := folders[name]; dup {
				return fmt.Errorf("the folders %s and %s both make the bundle name %s: rename one", other, p, name)
			}
			folders[name] = p
			bundles = append(bundles, BundleFolder{Name: name, Dir: filepath.Join(dir, p)})
			return fs.SkipDir
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return bundles, loose, nil
}

// FindBundles finds the bundles of dir, a bundle folder or a folder of
// bundle folders: dir itself, named by BundleName of its own name, when it
// has documents at its top, else the Bundles in it. A folder without a
// document is an error.
func FindBundles(dir string) ([]BundleFolder, error) {
	bundles, loose, err := Bundles(dir)
	if err != nil {
		return nil, err
	}
	if len(loose) > 0 {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		return []BundleFolder{{Name: BundleName(filepath.Base(abs)), Dir: dir}}, nil
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("%s: no markdown files, neither at its top nor in its subfolders", dir)
	}
	return bundles, nil
}

// holdsDocument reports whether the folder p of fsys holds a document.
func holdsDocument(fsys fs.FS, p string) (bool, error) {
	sub, err := fs.Sub(fsys, p)
	if err != nil {
		return false, err
	}
	found := false
	err = WalkFolder(sub, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && IsDocument(p) {
			found = true
			return fs.SkipAll
		}
		return err
	})
	return found, err
}

// maxBundleName is the longest bundle name the store takes.
const maxBundleName = 64

// BundleName makes a folder name a bundle name: lower case, with every
// character but a-z, 0-9, "_", "-" and "." made "-", the characters before
// the first letter or digit dropped (so ".okf" is "okf"), at most 64
// characters long, and "bundle" when nothing is left. So every folder name
// makes a name the store takes.
func BundleName(folder string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(folder) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() == 0:
		case r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() == maxBundleName {
			break
		}
	}
	if b.Len() == 0 {
		return "bundle"
	}
	return b.String()
}
