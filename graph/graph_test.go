package graph_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/graph"
	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/internal/synth"
	"github.com/okf-tools/okf/readmodel"
)

var day = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// shopSnapshot compiles the example shop's documentation in memory.
func shopSnapshot(t *testing.T) *readmodel.Snapshot {
	t.Helper()
	abs, err := filepath.Abs("../examples/shop")
	if err != nil {
		t.Fatal(err)
	}
	db, err := livesqlbench.Read(abs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Build(db, compile.Options{Generator: "okf/test", GeneratedAt: day})
	if err != nil {
		t.Fatal(err)
	}
	var docs []readmodel.Doc
	for _, p := range b.Paths() {
		docs = append(docs, readmodel.Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
	}
	s, _ := readmodel.Build("test", docs)
	return s
}

// The data block of the example shop's page is the golden file, byte for
// byte, and the page carries it unchanged.
func TestShopGolden(t *testing.T) {
	d, err := graph.Build(shopSnapshot(t), "shop", day)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "shop.json", got)
	if len(d.Nodes) != 15 || len(d.Kinds) != 4 || d.Kinds[0] != "business_rule" {
		t.Errorf("%d nodes, kinds %v", len(d.Nodes), d.Kinds)
	}
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if !strings.Contains(html, `<script type="application/json" id="okf-graph">`+string(got)+`</script>`) {
		t.Error("the page does not carry the data block verbatim")
	}
	for _, banned := range []string{"http://", "https://", "//cdn", "<link "} {
		if strings.Contains(html, banned) {
			t.Errorf("the page reaches for the network: %q", banned)
		}
	}
	var again bytes.Buffer
	d2, _ := graph.Build(shopSnapshot(t), "shop", day)
	if err := d2.WriteHTML(&again); err != nil || again.String() != html {
		t.Error("the same bundle gave a different page")
	}
}

func TestStatusesLinksAndEscaping(t *testing.T) {
	doc := func(front, body string) []byte { return []byte("---\n" + front + "\n---\n\n" + body + "\n") }
	s, _ := readmodel.Build("t", []readmodel.Doc{
		{Bundle: "b", Path: "a.md", Content: doc("type: Metric\ntitle: A </script><b>", "See [b](/b.md) and [b again](/b.md) and [self](/a.md).")},
		{Bundle: "b", Path: "b.md", Content: doc("type: Metric\ntitle: B\nstatus: draft", "Back to [a](/a.md).")},
		{Bundle: "b", Path: "c.md", Content: doc("type: Table\ntitle: C\nstale_after: 2026-01-01", "Alone.")},
		{Bundle: "other", Path: "x.md", Content: doc("type: Table\ntitle: X", "Elsewhere.")},
	})
	d, err := graph.Build(s, "b", day, "b")
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, n := range d.Nodes {
		statuses = append(statuses, n.Ref+"="+n.Status)
	}
	if got := strings.Join(statuses, " "); got != "b/a=- b/b=draft b/c=stale" {
		t.Errorf("nodes and statuses: %s", got)
	}
	if len(d.Links) != 2 || d.Links[0] != [2]int{0, 1} || d.Links[1] != [2]int{1, 0} {
		t.Errorf("links %v: want a→b and b→a once each, no self-link", d.Links)
	}
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "A </script><b>") {
		t.Error("a title closed the data block's script element")
	}
	if _, err := graph.Build(s, "x", day, "nope"); err == nil || !strings.Contains(err.Error(), `no bundle "nope"`) {
		t.Errorf("unknown bundle: %v", err)
	}
}

// The side panel wraps its text where words end: a manifest row's cells,
// a body's tables and the linked concepts' names never break inside a
// word ("col umns"), as break-all and overflow-wrap:anywhere would.
func TestPanelWrapsAtWordBoundaries(t *testing.T) {
	var page bytes.Buffer
	d, _ := graph.Build(shopSnapshot(t), "shop", day)
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	style := page.String()[:strings.Index(page.String(), "</style>")]
	for _, breaking := range []string{"break-all", "anywhere"} {
		if strings.Contains(style, breaking) {
			t.Errorf("the page's styles break words: %s", breaking)
		}
	}
	if !strings.Contains(style, ".badge{display:inline-block;") || !strings.Contains(style, "white-space:nowrap") {
		t.Error("a linked concept's name can wrap inside its badge")
	}
}

// The page's script, run in headless Chromium: at 15 concepts in one
// bundle and at 2,000 in four, it draws without an error and its first
// view holds every bundle's card whole.
func TestPageInBrowser(t *testing.T) {
	d, err := graph.Build(shopSnapshot(t), "shop", day)
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, d); got != "15 concepts in 1 bundle, 1 in view" {
		t.Errorf("the shop's page logged %q", got)
	}
	var docs []readmodel.Doc
	for _, doc := range synth.Generate(4*synth.BundleSize, 1) {
		docs = append(docs, readmodel.Doc{Bundle: doc.Bundle, Path: doc.Path, Content: doc.Content})
	}
	s, _ := readmodel.Build("synth", docs)
	d, err = graph.Build(s, "synth", day)
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, d); got != "2000 concepts in 4 bundles, 4 in view" {
		t.Errorf("the catalogue's page logged %q", got)
	}
}

var drawn = regexp.MustCompile(`"okf graph: ([^;]*);`)

// render opens the page in headless Chromium, 1400x900, and returns what
// its script logged once drawn, up to the timings.
func render(t *testing.T, d *graph.Data) string {
	t.Helper()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		msg := "no Chromium here (apt-get install chromium): the page's script is not run"
		if os.Getenv("OKF_REQUIRE_CHROMIUM") == "1" {
			t.Fatal(msg)
		}
		t.Skip("SKIP: " + msg + " (set OKF_REQUIRE_CHROMIUM=1 to make this a failure)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "page.html")
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--window-size=1400,900", "--screenshot="+filepath.Join(dir, "page.png"), "file://"+path).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "Uncaught") {
		t.Errorf("the page's script failed:\n%s", out)
	}
	m := drawn.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page logged no first render:\n%s", out)
	}
	return string(m[1])
}
