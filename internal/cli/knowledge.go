package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

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

// open returns the knowledge and the instant to read it at, refusing a
// bundle filter that names no bundle of it.
func (k *knowledgeSource) open(e *env, bundle string) (*readmodel.Snapshot, time.Time, error) {
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
	return s, now, nil
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

// docsFromDir reads a folder as bundles: the folder itself when it holds
// markdown files at its top, else each subfolder that does.
func docsFromDir(dir string) ([]readmodel.Doc, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, usageError("--dir %s: %v", dir, err)
	}
	if !info.IsDir() {
		return nil, usageError("--dir %s: not a directory", dir)
	}
	bundles, err := bundleDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("%s: no markdown files, neither at its top nor in its subfolders", dir)
	}
	var docs []readmodel.Doc
	for name, path := range bundles {
		// Read without parsing: the read model parses each document once.
		files, err := readBundle(path)
		if err != nil {
			return nil, err
		}
		for p, content := range files {
			docs = append(docs, readmodel.Doc{Bundle: name, Path: p, Content: content})
		}
	}
	return docs, nil
}

// bundleDirs maps bundle names to folders: the folder itself when it holds
// markdown at its top, else its subfolders that hold any.
func bundleDirs(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return nil, err
			}
			return map[string]string{bundleName(filepath.Base(abs)): dir}, nil
		}
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			sub := filepath.Join(dir, e.Name())
			if holdsMarkdown(sub) {
				out[bundleName(e.Name())] = sub
			}
		}
	}
	return out, nil
}

// bundleName makes a folder name a bundle name: lowercase, with anything
// but letters, digits, "_", "-" and "." replaced by "-".
func bundleName(s string) string {
	s = strings.ToLower(strings.TrimPrefix(s, "."))
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "bundle"
	}
	return b.String()
}

func holdsMarkdown(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// statLine writes a one-line summary of a text to stderr: its bytes and
// o200k tokens, so users see what an agent would pay.
func statLine(w io.Writer, what string, text []byte, s *readmodel.Snapshot) {
	fmt.Fprintf(w, "%s: snapshot %s, %d bundles, %d concepts, %d bytes, %d tokens\n",
		what, s.Digest[:12], len(s.Bundles), len(s.Concepts), len(text), tokens.Count(string(text)))
}
