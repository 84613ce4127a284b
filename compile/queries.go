package compile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/okf-tools/okf"
)

// QueriesDir is the folder, beside a database's documentation, whose query
// concepts (docs/queries.md) okf compile copies into the bundle.
const QueriesDir = "queries"

// isConceptFile reports whether a file name in a bundle's folder names a
// concept: markdown, not the folder's index, not hidden.
func isConceptFile(name string) bool {
	return strings.HasSuffix(name, ".md") && name != "index.md" && !strings.HasPrefix(name, ".")
}

// maxQueryFile bounds one query concept read from the sources.
const maxQueryFile = 1 << 20

// ReadQueries adds to a database the query concepts in dir/queries: every
// .md file there must be one (type: SQL Query), or the error names it.
// A missing folder adds none.
func ReadQueries(db *Database, dir string) error {
	folder := filepath.Join(dir, QueriesDir)
	entries, err := os.ReadDir(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, en := range entries {
		name := en.Name()
		if !isConceptFile(name) {
			continue
		}
		p := filepath.Join(folder, name)
		if !en.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		if info, err := en.Info(); err != nil {
			return err
		} else if info.Size() > maxQueryFile {
			return fmt.Errorf("%s: %d bytes; a query concept holds at most %d", p, info.Size(), maxQueryFile)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d := okf.Parse(QueriesDir+"/"+name, raw); !okf.IsQuery(d) {
			return fmt.Errorf("%s: not a query concept (its type is %q, want %q)", p, d.Type(), okf.QueryType)
		}
		db.Queries = append(db.Queries, QueryFile{Name: name, Raw: raw})
	}
	slices.SortFunc(db.Queries, func(a, b QueryFile) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// queries writes the query concepts as they are, said to be compiled by
// okf, and lists them in the queries index.
func (w *writer) queries() {
	for _, q := range w.db.Queries {
		p := QueriesDir + "/" + q.Name
		if !q.Kept {
			w.files[p] = seal(w.stampGenerated(q.Raw))
		}
		d := okf.Parse(p, q.Raw)
		w.addEntry(p, okf.QueryType, d.Title(), d.Description())
	}
}

// stampGenerated adds `generated: {by: ...}` to a concept's frontmatter
// when it has none, so that recompiles know the copy as okf's.
func (w *writer) stampGenerated(raw []byte) []byte {
	if !bytes.HasPrefix(raw, []byte("---\n")) {
		return raw
	}
	end := bytes.Index(raw[3:], []byte("\n---\n"))
	if end < 0 || bytes.Contains(raw[:end+4], []byte("\ngenerated:")) {
		return raw
	}
	at := end + 4
	return slices.Concat(raw[:at], []byte("generated:\n  by: "+w.opt.Generator+"\n"), raw[at:])
}

// keptQueries are the query concepts in dir/queries that okf did not
// write and the sources do not hold.
func keptQueries(dir string, wrote map[string]string, from []QueryFile) ([]QueryFile, error) {
	entries, err := os.ReadDir(filepath.Join(dir, QueriesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []QueryFile
	for _, en := range entries {
		name := en.Name()
		p := QueriesDir + "/" + name
		if !en.Type().IsRegular() || !isConceptFile(name) {
			continue
		}
		if _, generated := wrote[p]; generated || slices.ContainsFunc(from, func(q QueryFile) bool { return q.Name == name }) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, QueriesDir, name))
		if err != nil {
			return nil, err
		}
		if okf.IsQuery(okf.Parse(p, raw)) {
			out = append(out, QueryFile{Name: name, Raw: raw, Kept: true})
		}
	}
	return out, nil
}
