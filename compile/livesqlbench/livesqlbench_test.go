package livesqlbench_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/internal/shareddata"
)

var testOptions = compile.Options{Generator: "okf/test"}

// databases returns every LiveSQLBench database folder of the shared data.

func compileDir(t *testing.T, dir string, opt compile.Options) *compile.Bundle {
	t.Helper()
	db, err := livesqlbench.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Build(db, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEveryDatabaseCompilesToAStrictlyValidBundle(t *testing.T) {
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			compiletest.ValidateStrictly(t, compileDir(t, dir, testOptions))
			at := testOptions
			at.GeneratedAt = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
			compiletest.ValidateStrictly(t, compileDir(t, dir, at))
		})
	}
}

func TestSameInputSameBytes(t *testing.T) {
	dir := shareddata.LiveSQLBenchDatabases(t)[0]
	a, b := compileDir(t, dir, testOptions), compileDir(t, dir, testOptions)
	if len(a.Files) != len(b.Files) {
		t.Fatalf("%d files, then %d", len(a.Files), len(b.Files))
	}
	for p, data := range a.Files {
		if !bytes.Equal(data, b.Files[p]) {
			t.Errorf("%s differs between two builds", p)
		}
	}
	for p, data := range a.Files {
		if bytes.Contains(data, []byte("at:")) || bytes.Contains(data, []byte("## 20")) {
			t.Errorf("%s holds a time although none was given", p)
		}
	}
}

// unlinked are the rules linked to no table, per database: ours, and the
// seed compiler's (rules whose concept has no "# Columns used"). Ours must
// never be worse; the figures are pinned so a change shows up here.
var unlinked = map[string]struct{ ours, seed int }{
	"archeology":  {0, 14},
	"credit":      {1, 4},
	"cross_db":    {0, 33},
	"cybermarket": {0, 4},
	"disaster":    {0, 4},
	"gaming":      {0, 11},
	"museum":      {2, 27},
	"solar":       {2, 37},
}

func TestUnlinkedRulesAgainstTheSeed(t *testing.T) {
	seedRoot := shareddata.Dir(t, "livesqlbench", "okf-sql-knowledge-bundles")
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		name := filepath.Base(dir)
		b := compileDir(t, dir, testOptions)
		seed := loadBundle(t, filepath.Join(seedRoot, name))
		seedUnlinked := 0
		for _, d := range seed.Concepts() {
			if strings.HasPrefix(d.Path, "knowledge/") {
				if _, ok := d.Section("columns_used"); !ok {
					seedUnlinked++
				}
			}
		}
		ours := len(b.Gaps.UnlinkedRules)
		t.Logf("%-12s rules %3d  unlinked: ours %2d, seed %2d", name, b.Rules, ours, seedUnlinked)
		want, ok := unlinked[name]
		if !ok {
			t.Errorf("%s: no pinned figures", name)
			continue
		}
		if ours != want.ours || seedUnlinked != want.seed {
			t.Errorf("%s: unlinked rules: ours %d, seed %d; pinned %d and %d", name, ours, seedUnlinked, want.ours, want.seed)
		}
		if ours > seedUnlinked {
			t.Errorf("%s: %d rules unlinked, more than the seed's %d", name, ours, seedUnlinked)
		}
	}
}

func loadBundle(t *testing.T, dir string) *okf.Bundle {
	t.Helper()
	b, err := okf.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkReadAndBuildBaseLite reads and compiles the eight LiveSQLBench
// databases in memory, without writing: the compiler's own cost.
func BenchmarkReadAndBuildBaseLite(b *testing.B) {
	root := shareddata.Dir(b, "livesqlbench", "base-lite")
	entries, err := os.ReadDir(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, e := range entries {
			db, err := livesqlbench.Read(filepath.Join(root, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := compile.Build(db, testOptions); err != nil {
				b.Fatal(err)
			}
		}
	}
}
