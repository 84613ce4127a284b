package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/atomicfile"
)

// Marker is the file okf compile leaves in each bundle folder it writes:
// the SHA-256 and slash path of every file it generated, a line each. A
// later compile tells from it which files are still as okf wrote them and
// which a person wrote or edited; okf reads no dotfile as knowledge, so
// the marker stays out of the bundle.
const Marker = ".okf-bundle"

// WriteOptions shape Write.
type WriteOptions struct {
	// Force replaces bundle folders that okf did not write, whole.
	Force bool
	// Sources are the folders and files the bundles were read from. A
	// bundle folder that is or holds one of them is never written.
	Sources []string
	// Conflict hears of each file a person changed that the sources now
	// say otherwise about: the person's version is kept.
	Conflict func(bundle, path, why string)
	// Read holds, by bundle name, files of the bundle folders as the
	// caller has just read them (okf compile, to report drift), by slash
	// path: Write takes those bytes rather than reading the files again.
	Read map[string]map[string][]byte
}

// Write puts each bundle in out/<name>. Into a folder okf compiled before
// it merges: a file still as okf wrote it is regenerated (or removed, when
// no longer generated), a file a person edited is kept as theirs, a file a
// person added is kept, and the log gains an entry when anything changed.
// Every bundle is first written in full to a temporary folder inside out;
// only when all are written are they swapped in, one rename each, so a
// failure leaves every previous bundle as it was; a folder that already
// holds, byte for byte, what it would be replaced with is left as it is.
// It refuses, before writing anything, a folder okf did not write, and one
// where a person's file stands where okf would now write one.
func Write(out string, o WriteOptions, bundles ...*Bundle) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	names := map[string]bool{}
	merged := make([]map[string][]byte, len(bundles))
	generated := make([]map[string][]byte, len(bundles))
	unchanged := make([]bool, len(bundles))
	for i, b := range bundles {
		if names[b.Name] {
			return fmt.Errorf("two databases are named %s; their bundles would share %s", b.Name, filepath.Join(out, b.Name))
		}
		names[b.Name] = true
		files, gen, same, err := merge(filepath.Join(out, b.Name), b, o)
		if err != nil {
			return err
		}
		merged[i], generated[i], unchanged[i] = files, gen, same
	}
	dirs := make([]*atomicfile.Dir, len(bundles))
	defer func() {
		for _, d := range dirs {
			d.Discard()
		}
	}()
	for i, b := range bundles {
		if unchanged[i] {
			// Rewriting it would only cost a file created and one removed
			// for every file: a recompile of unchanged sources is the
			// common case.
			continue
		}
		d, err := atomicfile.NewDir(filepath.Join(out, b.Name))
		if err != nil {
			return fmt.Errorf("creating a temporary folder in %s: %w", out, err)
		}
		dirs[i] = d
		for _, p := range slices.Sorted(maps.Keys(merged[i])) {
			if err := d.WriteFile(p, merged[i][p]); err != nil {
				return fmt.Errorf("writing bundle %s: %w", b.Name, err)
			}
		}
		if err := d.WriteFile(Marker, marker(generated[i])); err != nil {
			return fmt.Errorf("writing bundle %s: %w", b.Name, err)
		}
	}
	for i, b := range bundles {
		if unchanged[i] {
			continue
		}
		if err := dirs[i].Commit(); err != nil {
			return fmt.Errorf("replacing %s: %w", filepath.Join(out, b.Name), err)
		}
	}
	return nil
}

// merge returns the files the bundle folder target is to hold, those of
// them okf generated (for the marker), and whether target holds exactly
// these already, its marker included.
func merge(target string, b *Bundle, o WriteOptions) (files, gen map[string][]byte, same bool, err error) {
	if err := notASource(target, o.Sources); err != nil {
		return nil, nil, false, err
	}
	info, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return b.Files, b.Files, false, nil
	case err != nil:
		return nil, nil, false, err
	case !info.IsDir():
		return nil, nil, false, fmt.Errorf("%s exists and is not a folder", target)
	}
	wrote, record, hasMarker, err := readMarker(target)
	if err != nil {
		return nil, nil, false, err
	}
	existing, err := readTree(target, o.Read[b.Name])
	if err != nil {
		return nil, nil, false, err
	}
	ours := hasMarker
	for _, data := range existing {
		if ours {
			break
		}
		ours, _ = Sealed(data)
	}
	if !ours {
		if len(existing) > 0 && !o.Force {
			return nil, nil, false, fmt.Errorf("refusing to replace %s: okf did not write it (it has no %s and no concept okf generated) and it holds %s; choose another --out, move it away, or pass --force to replace it",
				target, Marker, list(slices.Sorted(maps.Keys(existing))))
		}
		return b.Files, b.Files, false, nil
	}
	conflict := func(p, why string) {
		if o.Conflict != nil {
			o.Conflict(b.Name, p, why)
		}
	}
	files = maps.Clone(b.Files)
	var clashes []string
	changed := false
	for _, p := range slices.Sorted(maps.Keys(existing)) {
		data := existing[p]
		next, still := b.Files[p]
		if p == "log.md" {
			continue // merged below: the log keeps its history
		}
		switch origin(p, data, wrote, hasMarker) {
		case untouched:
			// As okf wrote it: regenerated, or gone with its source.
			changed = changed || !still || !bytes.Equal(next, data)
		case edited:
			files[p] = data
			switch {
			case !still:
				conflict(p, "edited by a person, and no longer generated from the sources: kept")
			case sourcesChanged(p, data, next, wrote):
				conflict(p, "edited by a person, and the sources now say otherwise: kept the person's version")
			}
		case own:
			if still {
				clashes = append(clashes, p)
			}
			files[p] = data
		}
	}
	for p := range b.Files {
		if _, ok := existing[p]; !ok {
			changed = true
		}
	}
	if len(clashes) > 0 {
		return nil, nil, false, fmt.Errorf("refusing to compile into %s: %s, which okf did not write, stand where okf would now write; rename or move them", target, list(clashes))
	}
	gen = maps.Clone(b.Files)
	if old, ok := existing["log.md"]; ok {
		if changed {
			files["log.md"] = appendLog(old, b.Files["log.md"])
		} else {
			files["log.md"] = old
		}
		if origin("log.md", old, wrote, hasMarker) == untouched {
			gen["log.md"] = files["log.md"]
		} else {
			delete(gen, "log.md") // a person's log: theirs
		}
	}
	same = hasMarker && bytes.Equal(record, marker(gen)) && maps.EqualFunc(files, existing, bytes.Equal)
	return files, gen, same, nil
}

// Where a file of a bundle folder came from.
const (
	untouched = iota // okf wrote it, and it is as okf wrote it
	edited           // okf wrote it, and a person changed it since
	own              // a person wrote it
)

// origin tells where a file came from: by the folder's record when it has
// one, else by the digest okf seals concepts with. Without the record (a
// bundle back from a store or an export), indexes and the log of a folder
// okf compiled are taken as okf's: they carry no frontmatter to seal.
func origin(p string, data []byte, wrote map[string]string, hasMarker bool) int {
	if was, ok := wrote[p]; ok {
		if was == hash(data) {
			return untouched
		}
		return edited
	}
	if sealed, intact := Sealed(data); sealed {
		if intact {
			return untouched
		}
		return edited
	}
	if !hasMarker && (p == "log.md" || path.Base(p) == "index.md") {
		return untouched
	}
	return own
}

// sourcesChanged reports whether okf now generates a file other than the
// one a person edited: by the record's hash when the folder has one, else
// by the digests the two versions were sealed with.
func sourcesChanged(p string, edited, next []byte, wrote map[string]string) bool {
	if was, ok := wrote[p]; ok {
		return was != hash(next)
	}
	return digestOf(edited) != digestOf(next)
}

// appendLog puts the new log's entry, as an update, on top of the old log:
// under the old log's first date when it is the same day, else under a new
// date heading above it (newest first, §9).
func appendLog(old, fresh []byte) []byte {
	_, rest, _ := bytes.Cut(fresh, []byte("\n## "))
	day, entry, _ := bytes.Cut(rest, []byte("\n"))
	entry = bytes.TrimSpace(bytes.Replace(entry, []byte("**Creation**"), []byte("**Update**"), 1))
	at := bytes.Index(old, []byte("\n## "))
	if at < 0 {
		return append(bytes.TrimRight(old, "\n"), []byte("\n\n## "+string(day)+"\n\n"+string(entry)+"\n")...)
	}
	heading := old[at+1:]
	if line, _, _ := bytes.Cut(heading, []byte("\n")); string(line) == "## "+string(day) {
		end := at + 1 + len(line) + 1
		return slices.Concat(old[:end], []byte("\n"+string(entry)+"\n"), old[end:])
	}
	return slices.Concat(old[:at+1], []byte("## "+string(day)+"\n\n"+string(entry)+"\n\n"), old[at+1:])
}

// AddKept adds to a database, as rules with File set, the concepts a
// person added directly in knowledge/ of its bundle folder dir since okf
// compiled it (files the marker does not list): compiled with the sources,
// they are linked to the tables whose columns they name and listed in the
// indexes, and Write keeps their files as they are. Query concepts added
// in queries/ are listed in its index the same way. It returns how many.
func AddKept(db *Database, dir string) (int, error) {
	next := 1
	for _, r := range db.Rules {
		next = max(next, r.ID+1)
	}
	wrote, _, _, err := readMarker(dir)
	if err != nil {
		return 0, err
	}
	kept, err := kept(dir, wrote, next)
	if err != nil {
		return 0, err
	}
	db.Rules = append(db.Rules, kept...)
	queries, err := keptQueries(dir, wrote, db.Queries)
	db.Queries = append(db.Queries, queries...)
	slices.SortFunc(db.Queries, func(a, b QueryFile) int { return strings.Compare(a.Name, b.Name) })
	return len(kept) + len(queries), err
}

func kept(dir string, wrote map[string]string, firstID int) ([]*Rule, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "knowledge"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rules []*Rule
	for _, en := range entries {
		p := "knowledge/" + en.Name()
		if !en.Type().IsRegular() || !isConceptFile(en.Name()) {
			continue
		}
		if _, generated := wrote[p]; generated {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		if sealed, _ := Sealed(raw); sealed {
			continue // okf wrote it
		}
		d := okf.Parse(p, raw)
		title := d.Title()
		if title == "" {
			title = strings.TrimSuffix(en.Name(), ".md")
		}
		desc, _ := d.Text("description")
		rules = append(rules, &Rule{ID: firstID + len(rules), Name: title, Description: desc, Definition: string(d.Body()), Kind: d.Type(), File: p})
	}
	return rules, nil
}

// KeepPersonalData marks as personal data, in a database, the columns that
// people marked so in the table concepts of its bundle folder dir (a
// personal_data they added to a concept okf wrote, or in one they wrote),
// so that a recompile reads none of their values and renders the mark. A
// concept still as okf wrote it is left out: its marks came from the
// sources, which say again what they say now.
func KeepPersonalData(db *Database, dir string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "tables"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	wrote, _, hasMarker, err := readMarker(dir)
	if err != nil {
		return err
	}
	for _, en := range entries {
		p := "tables/" + en.Name()
		if !en.Type().IsRegular() || !isConceptFile(en.Name()) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		if origin(p, raw, wrote, hasMarker) == untouched {
			continue
		}
		d := okf.Parse(p, raw)
		t := db.Table(d.Title())
		if t == nil {
			continue
		}
		for _, name := range d.PersonalData() {
			if c := t.Column(name); c != nil {
				c.PersonalData = true
			}
		}
	}
	return nil
}

// marker lists files with their hashes, in path order.
func marker(files map[string][]byte) []byte {
	var buf bytes.Buffer
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(&buf, "%s  %s\n", hash(files[p]), p)
	}
	return buf.Bytes()
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readMarker reads a folder's marker: path → hash of what okf wrote, and
// the marker's bytes.
func readMarker(dir string) (wrote map[string]string, data []byte, found bool, err error) {
	data, err = os.ReadFile(filepath.Join(dir, Marker))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	wrote = map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if sum, p, ok := strings.Cut(line, "  "); ok {
			wrote[p] = sum
		}
	}
	return wrote, data, true, nil
}

// readTree reads every file of a folder but its marker, by slash path,
// taking those in read as they are. A file that is not regular (a link, a
// device) is refused: okf does not write through or over one.
func readTree(dir string, read map[string][]byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() || rel == Marker:
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("refusing to compile into %s: %s is not a regular file", dir, rel)
		}
		data, ok := read[rel]
		if !ok {
			data, err = os.ReadFile(path)
		}
		files[rel] = data
		return err
	})
	return files, err
}

func list(paths []string) string {
	s := strings.Join(paths[:min(len(paths), 5)], ", ")
	if len(paths) > 5 {
		s += fmt.Sprintf(" and %d more", len(paths)-5)
	}
	return s
}

// notASource refuses a target that is, or holds, a source.
func notASource(target string, sources []string) error {
	abs, err := realPath(target)
	if err != nil {
		return err
	}
	for _, src := range sources {
		s, err := realPath(src)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(abs, s); err == nil && filepath.IsLocal(rel) || s == abs {
			return fmt.Errorf("refusing to write %s: it holds %s, which is being compiled; choose another --out", target, src)
		}
	}
	return nil
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
