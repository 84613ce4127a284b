package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/atomicfile"
)

// Marker is the file okf compile leaves in each bundle folder it writes:
// the SHA-256 and slash path of every file it wrote, a line each. A later
// compile replaces the folder only while it holds exactly those files;
// okf reads no dotfile as knowledge, so the marker stays out of the bundle.
const Marker = ".okf-bundle"

// WriteOptions shape Write.
type WriteOptions struct {
	// Force replaces bundle folders that okf did not write, or that
	// changed since it did.
	Force bool
	// Sources are the folders and files the bundles were read from. A
	// bundle folder that is or holds one of them is never replaced.
	Sources []string
}

// Write puts each bundle in out/<name>, replacing what okf wrote there
// before. Every bundle is first written in full to a temporary folder
// inside out; only when all are written are they swapped in, one rename
// each, so a failure leaves every previous bundle as it was. It refuses,
// before writing anything, a target that holds anything okf did not write.
func Write(out string, o WriteOptions, bundles ...*Bundle) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	names := map[string]bool{}
	for _, b := range bundles {
		if names[b.Name] {
			return fmt.Errorf("two databases are named %s; their bundles would share %s", b.Name, filepath.Join(out, b.Name))
		}
		names[b.Name] = true
		if err := replaceable(filepath.Join(out, b.Name), o); err != nil {
			return err
		}
	}
	dirs := make([]*atomicfile.Dir, len(bundles))
	defer func() {
		for _, d := range dirs {
			d.Discard()
		}
	}()
	for i, b := range bundles {
		d, err := atomicfile.NewDir(filepath.Join(out, b.Name))
		if err != nil {
			return fmt.Errorf("creating a temporary folder in %s: %w", out, err)
		}
		dirs[i] = d
		for _, p := range b.Paths() {
			if err := d.WriteFile(p, b.Files[p]); err != nil {
				return fmt.Errorf("writing bundle %s: %w", b.Name, err)
			}
		}
		if err := d.WriteFile(Marker, marker(b)); err != nil {
			return fmt.Errorf("writing bundle %s: %w", b.Name, err)
		}
	}
	for i, b := range bundles {
		if err := dirs[i].Commit(); err != nil {
			return fmt.Errorf("replacing %s: %w", filepath.Join(out, b.Name), err)
		}
	}
	return nil
}

// marker lists a bundle's files with their hashes, in path order.
func marker(b *Bundle) []byte {
	var buf bytes.Buffer
	for _, p := range b.Paths() {
		sum := sha256.Sum256(b.Files[p])
		fmt.Fprintf(&buf, "%s  %s\n", hex.EncodeToString(sum[:]), p)
	}
	return buf.Bytes()
}

// replaceable checks that target may be replaced: it does not exist, is
// an empty folder, or holds exactly what okf last wrote there (or Force is
// set); and in every case it is not, and does not hold, a source.
func replaceable(target string, o WriteOptions) error {
	abs, err := realPath(target)
	if err != nil {
		return err
	}
	for _, src := range o.Sources {
		s, err := realPath(src)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(abs, s); err == nil && filepath.IsLocal(rel) || s == abs {
			return fmt.Errorf("refusing to write %s: it holds %s, which is being compiled; choose another --out", target, src)
		}
	}
	info, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.IsDir():
		return fmt.Errorf("%s exists and is not a folder", target)
	case o.Force:
		return nil
	}
	changed, err := changedSince(target)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		return nil
	}
	list := strings.Join(changed[:min(len(changed), 5)], ", ")
	if len(changed) > 5 {
		list += fmt.Sprintf(" and %d more", len(changed)-5)
	}
	if _, err := os.Stat(filepath.Join(target, Marker)); err != nil {
		return fmt.Errorf("refusing to replace %s: okf did not write it (it has no %s) and it holds %s; choose another --out, move it away, or pass --force to replace it", target, Marker, list)
	}
	return fmt.Errorf("refusing to replace %s: %s changed or appeared since okf wrote it; move them away, or pass --force to replace them", target, list)
}

// changedSince lists the files of a folder that its marker does not list
// with their current hash (every file, when there is no marker), and the
// files the marker lists that are gone.
func changedSince(dir string) ([]string, error) {
	want := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(dir, Marker)); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if sum, p, ok := strings.Cut(line, "  "); ok {
				want[p] = sum
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var changed []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || rel == Marker {
			return nil
		}
		if !d.Type().IsRegular() {
			changed = append(changed, rel)
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if want[rel] != hex.EncodeToString(sum[:]) {
			changed = append(changed, rel)
		}
		delete(want, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for p := range want {
		changed = append(changed, p+" (deleted)")
	}
	slices.Sort(changed)
	return changed, nil
}

// realPath is a path made absolute with its links resolved as far as it
// exists.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
