package readmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/internal/shareddata"
)

var day = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// loadDocs reads a bundle folder as the documents of one bundle.
func loadDocs(t testing.TB, bundle, dir string) []Doc {
	t.Helper()
	b, err := okf.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, d := range b.Docs {
		docs = append(docs, Doc{Bundle: bundle, Path: d.Path, Content: d.Raw})
	}
	return docs
}

func TestManifestGolden(t *testing.T) {
	docs := loadDocs(t, "sales", "../testdata/validate/clean-full/bundle")
	docs = append(docs, loadDocs(t, "links", "../testdata/validate/link-forms/bundle")...)
	s, st := Build("acme", docs)
	m, err := s.ManifestAt("", day)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "manifest.tsv", m)
	if st.Concepts != len(s.Concepts) || st.Bundles != 2 {
		t.Errorf("stats %+v", st)
	}
	one, err := s.ManifestAt("sales", day)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "manifest-sales.tsv", one)
}

func TestDeterministicWhateverTheOrder(t *testing.T) {
	docs := loadDocs(t, "sales", "../testdata/validate/clean-full/bundle")
	docs = append(docs, loadDocs(t, "links", "../testdata/validate/link-forms/bundle")...)
	first, _ := Build("acme", docs)
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		again, _ := Build("acme", docs)
		if again.Digest != first.Digest || !bytes.Equal(again.Encode(), first.Encode()) {
			t.Fatalf("digest %s after a shuffle, want %s", again.Digest, first.Digest)
		}
	}
	if len(first.Digest) != 64 {
		t.Errorf("digest %q is not a hex sha256", first.Digest)
	}
}

func TestManifestShapeOnSharedBundles(t *testing.T) {
	data := shareddata.Dir(t)
	var docs []Doc
	for _, dir := range []string{
		"okf-samples/knowledge-catalog/okf/bundles/stackoverflow",
		"okf-samples/knowledge-catalog/okf/bundles/acme_retail",
		"okf-samples/okf-skills/.okf",
		"livesqlbench/okf-sql-knowledge-bundles/solar",
	} {
		docs = append(docs, loadDocs(t, strings.ReplaceAll(filepath.Base(dir), ".", "dot"), filepath.Join(data, dir))...)
	}
	s, _ := Build("t", docs)
	m, _ := s.ManifestAt("", day)
	lines := strings.Split(strings.TrimSuffix(string(m), "\n"), "\n")
	if lines[0] != "# tenant: t" || lines[1] != "# bundles: acme_retail dotokf solar stackoverflow" || lines[2] != "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks" {
		t.Fatalf("header:\n%s", strings.Join(lines[:3], "\n"))
	}
	rows := lines[3:]
	if len(rows) != len(s.Concepts) {
		t.Fatalf("%d rows for %d concepts", len(rows), len(s.Concepts))
	}
	prev := ""
	for _, r := range rows {
		cells := strings.Split(r, "\t")
		if len(cells) != 7 {
			t.Fatalf("row has %d cells: %q", len(cells), r)
		}
		for _, c := range cells {
			if c == "" || strings.TrimSpace(c) != c {
				t.Errorf("empty or padded cell in %q", r)
			}
		}
		if n := utf8.RuneCountInString(cells[5]); n > SummaryWidth {
			t.Errorf("summary of %d characters: %q", n, cells[5])
		}
		key := cells[1] + "\x00" + cells[0]
		if key <= prev {
			t.Errorf("rows not sorted by bundle then id at %q", r)
		}
		prev = key
	}
	c, err := s.Concept("metrics/gross-margin-legacy")
	if err != nil || c.Status != "deprecated" || c.Kind != "metric" {
		t.Errorf("acme legacy metric: %+v, %v", c, err)
	}
	stale, err := s.Concept("metrics/revenue")
	if err != nil || stale.RowStatus(day) != "-" || stale.RowStatus(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) != "stale" {
		t.Errorf("revenue status before/after its stale_after: %+v %v", stale, err)
	}
	later, _ := s.ManifestAt("acme_retail", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if !strings.Contains(string(later), "metrics/revenue\tacme_retail\tmetric\tstale\t") {
		t.Errorf("stale status not shown after stale_after:\n%s", later)
	}
	if bytes.Contains(s.Manifest, []byte("\tstale\t")) {
		t.Error("the compiled manifest must not depend on the clock")
	}
}

func TestBundleSliceIsItsRows(t *testing.T) {
	docs := loadDocs(t, "sales", "../testdata/validate/clean-full/bundle")
	docs = append(docs, loadDocs(t, "links", "../testdata/validate/link-forms/bundle")...)
	s, _ := Build("acme", docs)
	whole, _ := s.ManifestAt("", day)
	slice, _ := s.ManifestAt("links", day)
	var want []string
	for _, l := range strings.Split(string(whole), "\n")[3:] {
		if strings.Contains(l, "\tlinks\t") {
			want = append(want, l)
		}
	}
	got := strings.Split(strings.TrimSuffix(string(slice), "\n"), "\n")
	if got[1] != "# bundles: links" || strings.Join(got[3:], "\n") != strings.Join(want, "\n") {
		t.Errorf("slice:\n%s\nwant rows:\n%s", slice, strings.Join(want, "\n"))
	}
	if _, err := s.ManifestAt("nope", day); !errors.Is(err, ErrNoBundle) {
		t.Errorf("unknown bundle: %v", err)
	}
}

func TestIDsStableWhenFilesAreAdded(t *testing.T) {
	docs := []Doc{
		{Bundle: "b", Path: "tables/orders.md", Content: []byte("---\ntype: Table\n---\n# Schema\n")},
		{Bundle: "b", Path: "orders.md", Content: []byte("---\ntype: Note\n---\nA note.\n")},
	}
	before, _ := Build("t", docs[:1])
	after, _ := Build("t", docs)
	if before.Concepts[0].ID != "tables/orders" || after.Concepts[1].ID != "tables/orders" || after.Concepts[0].ID != "orders" {
		t.Errorf("ids %q then %q %q", before.Concepts[0].ID, after.Concepts[0].ID, after.Concepts[1].ID)
	}
}

func TestEncodeDecode(t *testing.T) {
	s, _ := Build("acme", loadDocs(t, "sales", "../testdata/validate/clean-full/bundle"))
	enc := s.Encode()
	back, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest != s.Digest || !bytes.Equal(back.Encode(), enc) {
		t.Fatal("decode changed the snapshot")
	}
	if _, err := back.Get("tables/orders", GetOptions{Section: "schema"}); err != nil {
		t.Errorf("a decoded snapshot cannot be read: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("OKFSNAP1\n"), enc[:len(enc)-1], append(bytes.Clone(enc), 0)} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("decoded %d bad bytes without an error", len(bad))
		}
	}
}

func TestGet(t *testing.T) {
	body := "Intro line.\n# Schema\n| a | b |\n## Notes\nÉtat café.\n# Joins\nSee [x](x.md). See again.\n"
	s, _ := Build("t", []Doc{
		{Bundle: "one", Path: "x.md", Content: []byte("---\ntype: T\n---\n" + body)},
		{Bundle: "two", Path: "x.md", Content: []byte("---\ntype: T\n---\nother\n")},
		{Bundle: "two", Path: "y.md", Content: []byte("---\ntype: T\n---\n" + body)},
	})
	whole, err := s.Get("two/y", GetOptions{})
	if err != nil || whole.Text != body || whole.Total != len(body) || whole.Ref != "two/y" {
		t.Fatalf("whole: %+v %v", whole, err)
	}
	schema, _ := s.Get("y", GetOptions{Section: "schema"})
	if schema.Text != "# Schema\n| a | b |\n## Notes\nÉtat café.\n" {
		t.Errorf("schema section %q", schema.Text)
	}
	notes, _ := s.Get("y", GetOptions{Section: "notes", Offset: 9, Limit: 4})
	if notes.Text != "Éta" || notes.Start != 9 || notes.End != 13 {
		t.Errorf("offset/limit window %+v", notes)
	}
	cut, _ := s.Get("y", GetOptions{Section: "notes", Offset: 10, Limit: 3})
	if !utf8.ValidString(cut.Text) || cut.Start != 9 {
		t.Errorf("a window must not split a character: %+v", cut)
	}
	found, _ := s.Get("y", GetOptions{Find: "SEE", Limit: 20})
	if len(found.Matches) != 2 || found.Matches[0] != strings.Index(body, "See") || found.Start != found.Matches[0]-5 || !strings.Contains(found.Text, "See [x]") {
		t.Errorf("find: %+v", found)
	}
	for _, c := range []struct {
		sl   Slice
		want string
	}{
		{Slice{Ref: "b/x", Text: "t", Start: 1, End: 2, Total: 3, Matches: []int{1}}, `{"ref":"b/x","text":"t","start":1,"end":2,"total":3,"matches":[1]}`},
		{Slice{Ref: "b/x", Section: "schema", Text: "t"}, `{"ref":"b/x","section":"schema","text":"t","start":0,"end":0,"total":0}`},
	} {
		if js, _ := json.Marshal(c.sl); string(js) != c.want {
			t.Errorf("slice JSON %s, want %s", js, c.want)
		}
	}
	if _, err := s.Get("x", GetOptions{}); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "one/x, two/x") {
		t.Errorf("ambiguous id: %v", err)
	}
	if _, err := s.Get("nope", GetOptions{}); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := s.Get("y", GetOptions{Section: "nope"}); !errors.Is(err, ErrNoSection) || !strings.Contains(err.Error(), "body schema notes joins") {
		t.Errorf("unknown section: %v", err)
	}
	if _, err := s.Get("y", GetOptions{Offset: -1}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("negative offset: %v", err)
	}
}

func TestSummaryFallsBackToFirstSentence(t *testing.T) {
	s, _ := Build("t", []Doc{
		{Bundle: "b", Path: "a.md", Content: []byte("---\ntype: T\n---\n# Title\n\n```\ncode.\n```\n\nThe **first** [sentence](b.md) here. And more.\n")},
		{Bundle: "b", Path: "b.md", Content: []byte("---\ntype: T\ndescription: \"tab\\there\\nand a newline\"\n---\n")},
		{Bundle: "b", Path: "c.md", Content: []byte("plain markdown, no frontmatter\n")},
	})
	want := map[string]string{"a": "The first sentence here.", "b": "tab here and a newline", "c": "plain markdown, no frontmatter"}
	for id, sum := range want {
		c, _ := s.Concept(id)
		if c.Summary != sum {
			t.Errorf("%s summary %q, want %q", id, c.Summary, sum)
		}
	}
	if c, _ := s.Concept("c"); c.Kind != "-" {
		t.Errorf("a concept without frontmatter has kind %q", c.Kind)
	}
}

func TestBuilderReusesParses(t *testing.T) {
	docs := loadDocs(t, "sales", "../testdata/validate/clean-full/bundle")
	b := NewBuilder()
	first, st1 := b.Build("acme", docs)
	second, st2 := b.Build("acme", docs)
	if st1.Reused != 0 || st2.Reused != len(docs) || first.Digest != second.Digest {
		t.Errorf("reused %d then %d of %d; digests %s %s", st1.Reused, st2.Reused, len(docs), first.Digest, second.Digest)
	}
}
