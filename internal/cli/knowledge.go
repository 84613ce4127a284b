package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
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
	s, err := k.snapshot(e)
	if err != nil {
		return nil, now, err
	}
	if bundle != "" {
		if _, ok := s.Bundle(bundle); !ok {
			names := make([]string, len(s.Bundles))
			for i, b := range s.Bundles {
				names[i] = b.Name
			}
			return nil, now, usageError("no bundle %q (bundles: %s)", bundle, strings.Join(names, " "))
		}
	}
	return engine.NewView(k.store.tenant, s), now, nil
}

// snapshot compiles or loads the knowledge.
func (k *knowledgeSource) snapshot(e *env) (*readmodel.Snapshot, error) {
	if k.dir != "" {
		docs, err := docsFromDir(k.dir)
		if err != nil {
			return nil, err
		}
		s, st := readmodel.Build(k.store.tenant, docs)
		for _, d := range st.Diagnostics {
			fmt.Fprintf(e.stderr, "warn: %s\n", d)
		}
		return s, nil
	}
	return k.store.snapshot(e)
}

// docsFromDir reads the --dir folder: a bundle folder, or a folder of
// bundle folders.
func docsFromDir(dir string) ([]readmodel.Doc, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	return engine.FolderDocs(dir)
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
func statLine(w io.Writer, what string, text []byte, s *readmodel.Snapshot) {
	fmt.Fprintf(w, "%s: snapshot %s, %d bundles, %d concepts, %d bytes, %d tokens\n",
		what, s.Digest[:12], len(s.Bundles), len(s.Concepts), len(text), tokens.Count(string(text)))
}
