// Package atomicfile replaces files and folders whole: what okf writes is
// first written in full beside its target and then renamed into place, so
// a reader, or a run that fails half-way, sees the old file or folder or
// the new one, never part of either. The tokens file, eval reports, okf
// export and okf compile write this way.
package atomicfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path as os.WriteFile does (perm before the
// umask), but whole: to a new file beside path, synced, then renamed over
// it. It refuses to replace anything but a regular file: renaming over a
// link, a device or a folder would swap out what the name stood for.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): refusing to replace it", path, info.Mode().Type())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".okf-"+rand.Text())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// A Dir is a folder written in full beside the folder it is to replace;
// Commit puts it in place, Discard removes it.
type Dir struct {
	target, tmp string
}

// NewDir starts the folder that is to replace target: an empty temporary
// folder beside it, in target's parent, which must exist.
func NewDir(target string) (*Dir, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(target), "."+filepath.Base(target)+".okf-new-")
	if err != nil {
		return nil, err
	}
	return &Dir{target: target, tmp: tmp}, nil
}

// WriteFile writes a file of the folder, at the slash path rel, mode 0644,
// making the folders it needs.
func (d *Dir) WriteFile(rel string, data []byte) error {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) {
		return fmt.Errorf("refusing path %q outside the folder", rel)
	}
	full := filepath.Join(d.tmp, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.WriteFile(full, data, 0o644)
}

// Commit gives the folder mode 0755 (MkdirTemp made it private; what okf
// writes is meant to be read) and puts it at the target. An existing
// target, which must be a folder, is moved aside first and removed only
// once the new folder is in place; if that fails it is moved back, so the
// target never lacks its old contents without its new ones.
func (d *Dir) Commit() error {
	if err := os.Chmod(d.tmp, 0o755); err != nil {
		return err
	}
	info, err := os.Lstat(d.target)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(d.tmp, d.target); err != nil {
			return err
		}
		d.tmp = ""
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a folder (%s): refusing to replace it", d.target, info.Mode().Type())
	}
	// The old folder goes into a private folder of its own, since
	// os.Rename will not replace a folder, and is removed with it.
	aside, err := os.MkdirTemp(filepath.Dir(d.target), "."+filepath.Base(d.target)+".okf-old-")
	if err != nil {
		return err
	}
	old := filepath.Join(aside, filepath.Base(d.target))
	if err := os.Rename(d.target, old); err != nil {
		os.Remove(aside)
		return fmt.Errorf("moving the old contents aside: %w", err)
	}
	if err := os.Rename(d.tmp, d.target); err != nil {
		if rerr := os.Rename(old, d.target); rerr != nil {
			return fmt.Errorf("%w; the old contents are in %s (%v)", err, old, rerr)
		}
		os.Remove(aside)
		return err
	}
	d.tmp = ""
	if err := os.RemoveAll(aside); err != nil {
		return fmt.Errorf("%s is in place, but removing the old contents in %s: %w", d.target, aside, err)
	}
	return nil
}

// Discard removes the folder unless it was committed; after a Commit it
// does nothing, so it may be deferred.
func (d *Dir) Discard() {
	if d != nil && d.tmp != "" {
		os.RemoveAll(d.tmp)
		d.tmp = ""
	}
}
