package compile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write puts each bundle in out/<name>, replacing what was there. Every
// bundle is first written in full to a temporary folder inside out; only
// when all are written are they swapped in, one rename each, so a failure
// leaves every previous bundle as it was.
func Write(out string, bundles ...*Bundle) (err error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	names := map[string]bool{}
	for _, b := range bundles {
		if names[b.Name] {
			return fmt.Errorf("two databases are named %s; their bundles would share %s", b.Name, filepath.Join(out, b.Name))
		}
		names[b.Name] = true
		target := filepath.Join(out, b.Name)
		if info, err := os.Lstat(target); err == nil && !info.IsDir() {
			return fmt.Errorf("%s exists and is not a folder", target)
		}
	}
	temps := make([]string, len(bundles))
	defer func() {
		for _, t := range temps {
			if t != "" {
				os.RemoveAll(t)
			}
		}
	}()
	for i, b := range bundles {
		if temps[i], err = os.MkdirTemp(out, ".okf-compile-"+b.Name+"-"); err != nil {
			return fmt.Errorf("creating a temporary folder in %s: %w", out, err)
		}
		if err := writeFiles(temps[i], b); err != nil {
			return err
		}
	}
	for i, b := range bundles {
		if err := swap(temps[i], filepath.Join(out, b.Name)); err != nil {
			return err
		}
		temps[i] = ""
	}
	return nil
}

func writeFiles(dir string, b *Bundle) error {
	for _, p := range b.Paths() {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("writing bundle %s: %w", b.Name, err)
		}
		if err := os.WriteFile(full, b.Files[p], 0o644); err != nil {
			return fmt.Errorf("writing bundle %s: %w", b.Name, err)
		}
	}
	// MkdirTemp makes the folder private; a bundle is meant to be read.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("writing bundle %s: %w", b.Name, err)
	}
	return nil
}

// swap replaces target with the folder at temp: the old folder is moved
// aside, the new one renamed into place, and the old one removed. If the
// second rename fails the old folder is moved back.
func swap(temp, target string) error {
	old := ""
	if _, err := os.Lstat(target); err == nil {
		dir, err := os.MkdirTemp(filepath.Dir(target), ".okf-old-"+filepath.Base(target)+"-")
		if err != nil {
			return fmt.Errorf("replacing %s: %w", target, err)
		}
		old = filepath.Join(dir, filepath.Base(target))
		if err := os.Rename(target, old); err != nil {
			os.Remove(dir)
			return fmt.Errorf("replacing %s: %w", target, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	if err := os.Rename(temp, target); err != nil {
		if old != "" {
			os.Rename(old, target)
			os.Remove(filepath.Dir(old))
		}
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Dir(old)); err != nil {
			return fmt.Errorf("removing the previous bundle %s: %w", old, err)
		}
	}
	return nil
}
