package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/readmodel"
)

// WatchOptions shape Watch.
type WatchOptions struct {
	// Debounce is how long the folder must stay unchanged before it is
	// compiled again, so an editor's burst of saves costs one compile.
	Debounce time.Duration
	// Poll is how often the folder's files are looked at; 0 means
	// min(Debounce, 250ms).
	Poll time.Duration
	// Load reads the folder's documents; nil reads them as FolderDocs.
	Load func() ([]readmodel.Doc, error)
	// Report is told about every compile and every failed load.
	Report func(string)
}

// DefaultDebounce is the quiet time Watch waits for by default.
const DefaultDebounce = 300 * time.Millisecond

// Watch polls a folder's documents (their paths, sizes and modification
// times, picked by okf.WalkFolder's rules) until ctx ends.
// Once a change has held still for the debounce time, it loads the
// documents and reloads the folder library, so the next read sees them. A
// failed load is reported and the previous view kept; a document caught
// half written keeps its last good version (see Reload).
func (l *FolderLibrary) Watch(ctx context.Context, dir string, o WatchOptions) error {
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Poll <= 0 {
		o.Poll = min(o.Debounce, 250*time.Millisecond)
	}
	if _, err := fingerprint(dir); err != nil {
		return err
	}
	// What was loaded before the watch began is not known to match the
	// folder now, so the first poll compiles it again; parses of unchanged
	// documents are reused.
	var (
		applied, pending string
		since            time.Time
	)
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			fp, err := fingerprint(dir)
			switch {
			case err != nil:
				o.Report(fmt.Sprintf("watch: %v", err))
				continue
			case fp == applied:
				pending = ""
				continue
			case fp != pending:
				pending, since = fp, now
				continue
			case now.Sub(since) < o.Debounce:
				continue
			}
			applied, pending = fp, ""
			load := o.Load
			if load == nil {
				load = func() ([]readmodel.Doc, error) { return FolderDocs(dir) }
			}
			docs, err := load()
			if err != nil {
				o.Report(fmt.Sprintf("watch: %v (still serving the previous snapshot)", err))
				continue
			}
			st := l.Reload(docs)
			v := l.ts.view.Load()
			o.Report(fmt.Sprintf("watch: snapshot %s, %d bundles, %d concepts (%d parses reused)",
				v.Snap.Digest[:12], st.Bundles, st.Concepts, st.Reused))
			for _, d := range st.Diagnostics {
				o.Report("warn: " + d.String())
			}
		}
	}
}

// fingerprint sums the path, size and modification time of every document
// under dir, picked by okf.WalkFolder's rules as the load picks them.
func fingerprint(dir string) (string, error) {
	h := sha256.New()
	err := okf.WalkFolder(os.DirFS(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !okf.IsDocument(p) {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking: the next poll sees it gone
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", dir, err)
	}
	return string(h.Sum(nil)), nil
}
