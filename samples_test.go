package okf_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/shareddata"
)

var sampleDay = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// sampleBundles lists the real bundles under ../shared/data, relative to it.
func sampleBundles(t *testing.T) []string {
	t.Helper()
	data := shareddata.Dir(t)
	var out []string
	for _, glob := range []string{
		"okf-samples/knowledge-catalog/okf/bundles/*",
		"livesqlbench/okf-sql-knowledge-bundles/*",
	} {
		m, err := filepath.Glob(filepath.Join(data, glob))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	out = append(out,
		filepath.Join(data, "okf-samples/okf-skills/examples/sample-bundle"),
		filepath.Join(data, "okf-samples/okf-skills/.okf"),
	)
	if len(out) != 14 {
		t.Fatalf("found %d sample bundles, want 14 (4 Google, 8 LiveSQLBench, 2 okf-skills): %v", len(out), out)
	}
	return out
}

// countOnDisk counts markdown files by kind, walking the folder independently
// of Load (hidden folders below the root are skipped, as Load does).
func countOnDisk(t *testing.T, root string) okf.Counts {
	t.Helper()
	var c okf.Counts
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			return nil
		}
		switch e.Name() {
		case "index.md":
			c.Indexes++
		case "log.md":
			c.Logs++
		default:
			c.Concepts++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSampleBundlesConform(t *testing.T) {
	for _, dir := range sampleBundles(t) {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			b, err := okf.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			rep := okf.Validate(b, okf.Options{Now: sampleDay})
			for _, f := range rep.Findings {
				if f.Severity == okf.Error {
					t.Errorf("unexpected error: %s", f)
				}
			}
			if want := countOnDisk(t, dir); rep.Counts != want || want.Concepts == 0 {
				t.Errorf("counts %+v, files on disk %+v", rep.Counts, want)
			}
			if got := len(b.Concepts()); got != rep.Counts.Concepts {
				t.Errorf("Concepts() returned %d, report counted %d", got, rep.Counts.Concepts)
			}
		})
	}
}

func TestNegativeFixtureFailsForTheRightReason(t *testing.T) {
	dir := shareddata.Dir(t, "okf-samples/okf-skills/tests/fixtures/non-conformant")
	b, err := okf.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := okf.Validate(b, okf.Options{Now: sampleDay})
	if rep.Conformant() {
		t.Fatal("the non-conformant fixture passed")
	}
	var errs []okf.Finding
	for _, f := range rep.Findings {
		if f.Severity == okf.Error {
			errs = append(errs, f)
		}
	}
	if len(errs) != 1 || errs[0].Code != "frontmatter-missing" || errs[0].Path != "broken.md" || errs[0].Section != "§11.1" {
		t.Fatalf("want exactly one §11.1 frontmatter-missing error on broken.md, got %v", errs)
	}
}

// TestSamplesRoundTrip checks that every sample document keeps its exact
// bytes and that its sections cover the body in order.
func TestSamplesRoundTrip(t *testing.T) {
	for _, dir := range sampleBundles(t) {
		b, err := okf.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range b.Docs {
			raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != string(d.Raw) {
				t.Fatalf("%s: bytes changed on load", d.Path)
			}
			prev := d.BodyStart
			for _, s := range d.Sections {
				if s.Start < prev || s.End < s.Start || s.End > len(d.Raw) {
					t.Fatalf("%s: section %q range [%d,%d) out of order after %d", d.Path, s.Slug, s.Start, s.End, prev)
				}
				prev = s.Start
			}
		}
	}
}

// TestGoogleSampleSections pins the sections and links of a known concept.
func TestGoogleSampleSections(t *testing.T) {
	dir := shareddata.Dir(t, "okf-samples/knowledge-catalog/okf/bundles/stackoverflow")
	b, err := okf.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := b.Concept("tables/posts_questions")
	if d == nil {
		t.Fatal("tables/posts_questions not found")
	}
	var slugs []string
	for _, s := range d.Sections {
		slugs = append(slugs, s.Slug)
	}
	if got := strings.Join(slugs, " "); !strings.Contains(got, "schema") || !strings.Contains(got, "common_query_patterns") {
		t.Errorf("sections %q lack schema and common_query_patterns", got)
	}
	for _, s := range d.Sections {
		if strings.HasPrefix(strings.TrimSpace(s.Title), "--") || strings.Contains(s.Title, "SELECT") {
			t.Errorf("a line of fenced SQL became section %q", s.Title)
		}
	}
	ds := b.Concept("datasets/stackoverflow")
	if ds == nil || len(b.Outbound(ds.ID())) < 16 {
		t.Fatalf("the dataset concept should link to the 16 tables, got %v", b.Outbound("datasets/stackoverflow"))
	}
	if in := b.Inbound("tables/posts_questions"); len(in) == 0 {
		t.Error("tables/posts_questions has no inbound links")
	}
}
