package compile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/okf-tools/okf/internal/atomicfile"
)

// Write puts each bundle in out/<name>, replacing what was there. Every
// bundle is first written in full to a temporary folder inside out; only
// when all are written are they swapped in, one rename each, so a failure
// leaves every previous bundle as it was.
func Write(out string, bundles ...*Bundle) error {
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
	}
	for i, b := range bundles {
		if err := dirs[i].Commit(); err != nil {
			return fmt.Errorf("replacing %s: %w", filepath.Join(out, b.Name), err)
		}
	}
	return nil
}
