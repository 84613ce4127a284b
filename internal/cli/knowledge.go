package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/tokens"
)

// knowledgeSource says where the reading commands (manifest, get, search,
// context) find the knowledge: a folder of markdown, or the store.
type knowledgeSource struct {
	dir   string
	store storeFlags
	today string
}

func (k *knowledgeSource) register(f *pflag.FlagSet) {
	f.StringVar(&k.dir, "dir", "", "read a bundle folder (or a folder of bundle folders) directly instead of the store")
	k.store.register(f)
	f.StringVar(&k.today, "today", "", "decide stale statuses as of this date (YYYY-MM-DD) instead of now")
}

// now returns the instant stale statuses are decided against.
func (k *knowledgeSource) now() (time.Time, error) {
	if k.today == "" {
		return time.Now(), nil
	}
	t, err := time.Parse("2006-01-02", k.today)
	if err != nil {
		return time.Time{}, usageError("--today %q: want a date like 2026-11-29", k.today)
	}
	return t, nil
}

// open returns the knowledge as a view and the instant to read it at,
// refusing a bundle filter that names no bundle of it.
func (k *knowledgeSource) open(e *env, bundle string) (*engine.View, time.Time, error) {
	now, err := k.now()
	if err != nil {
		return nil, now, err
	}
	v, err := k.view(e)
	if err != nil {
		return nil, now, err
	}
	if err := engine.CheckBundle(v, bundle); err != nil {
		return nil, now, usageError("%v", err)
	}
	return v, now, nil
}

// view opens the knowledge of the --dir folder, else of the store,
// warning of the documents that did not compile.
func (k *knowledgeSource) view(e *env) (*engine.View, error) {
	ctx := context.Background()
	var src engine.Source
	if k.dir != "" {
		if err := checkDir(k.dir); err != nil {
			return nil, err
		}
		src = engine.Folder(k.dir, k.store.tenant)
	} else {
		st, err := k.store.open(ctx)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		src = engine.StoreHead(st, k.store.tenant)
	}
	v, err := engine.Open(ctx, src, "")
	if err != nil {
		return nil, err
	}
	for _, d := range v.Diagnostics {
		fmt.Fprintf(e.stderr, "warn: %s\n", d)
	}
	return v, nil
}

// checkDir refuses a --dir that is not a folder as bad usage.
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return usageError("--dir %s: %v", dir, err)
	}
	if !info.IsDir() {
		return usageError("--dir %s: not a directory", dir)
	}
	return nil
}

// statLine writes a one-line summary of a text to stderr: its bytes and
// o200k tokens, so users see what an agent would pay.
func statLine(w io.Writer, what string, text []byte, v *engine.View) {
	fmt.Fprintf(w, "%s: snapshot %s, %d bundles, %d concepts, %d bytes, %d tokens\n",
		what, v.Snap.Digest[:12], len(v.Snap.Bundles), len(v.Snap.Concepts), len(text), tokens.Count(string(text)))
}
