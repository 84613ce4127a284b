package okf_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/internal/shareddata"
)

// The W4G1 validator (github.com/W4G1/okf, Rust) is built from
// ../shared/peers/w4g1-okf:
//
//	cd ../shared/peers/w4g1-okf && CARGO_TARGET_DIR=/tmp/w4g1-target cargo build --release --offline
const (
	envW4G1        = "OKF_W4G1"         // the binary, if not at a default path
	envRequireW4G1 = "OKF_REQUIRE_W4G1" // "1": a missing binary fails the test
)

// w4g1Differs lists the bundles on which okf's verdict deliberately
// differs from W4G1's, each with the section that decides it. Every other
// bundle must get the same verdict from both.
var w4g1Differs = map[string]string{
	"suite/log-frontmatter": "§9 says nothing of frontmatter in log.md and Google's own acme_retail sample has it " +
		"(knowledge-catalog #78), so okf warns (log-frontmatter); W4G1 reads its lines as non-log content, an error",
	"okf-samples/knowledge-catalog/okf/bundles/acme_retail": "the same: its log.md has frontmatter (type: Log), " +
		"a warning under §9 for okf, an error for W4G1; okf keeps Google's own sample conformant",
	"suite/fenced-code": "§9 makes log entries prose and fixes only the date headings; a `## ` line inside fenced code " +
		"is code, not a heading (CommonMark, which §4.2's markdown means). W4G1 reads it as a date group, then finds " +
		"empty groups, a bad date and dates out of order",
	"suite/hidden-folders": "§3 names a git repository as a way to distribute a bundle: its .git folder, and every " +
		"other dot-folder, belongs to the distribution, not the bundle, so okf skips it; W4G1 reads .git/info/notes.md " +
		"and gives up on a file that is not UTF-8",
}

func w4g1Binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envW4G1); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", envW4G1, p, err)
		}
		return p
	}
	candidates := []string{"/tmp/w4g1-target/release/okf"}
	if data := shareddata.Find(); data != "" {
		candidates = append(candidates, filepath.Join(filepath.Dir(data), "peers", "w4g1-okf", "target", "release", "okf"))
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("SKIP: the W4G1 validator is not at %s; build it (cd ../shared/peers/w4g1-okf && "+
		"CARGO_TARGET_DIR=/tmp/w4g1-target cargo build --release --offline) or set %s (%s=1 makes this a failure)",
		strings.Join(candidates, " or "), envW4G1, envRequireW4G1)
	if os.Getenv(envRequireW4G1) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// w4g1Verdict runs W4G1's validate on dir: exit 0 is conformant, 65 is
// non-conformant, and any other status (66: it could not read the bundle)
// is a refusal, so not conformant either.
func w4g1Verdict(t *testing.T, bin, dir string) (conformant bool, status int) {
	t.Helper()
	out, err := exec.Command(bin, "validate", dir, "--today", "2026-11-29").CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, 0
	case errors.As(err, &exit):
		return false, exit.ExitCode()
	}
	t.Fatalf("running %s: %v\n%s", bin, err, out)
	return false, 0
}

// parityBundles returns every bundle to compare, by name: the validator
// suite's cases, the bundles of ../shared/data, and the bundles okf
// compiles from LiveSQLBench's and BIRD's documentation without a time,
// as `okf compile` does by default.
func parityBundles(t *testing.T) map[string]string {
	t.Helper()
	bundles := map[string]string{}
	for _, name := range okf.SuiteCases(t) {
		bundles["suite/"+name] = okf.SuiteCaseDir(t, name)
	}
	data := shareddata.Dir(t)
	for _, folder := range []string{"okf-samples/knowledge-catalog/okf/bundles", "livesqlbench/okf-sql-knowledge-bundles"} {
		found, err := okf.FindBundles(filepath.Join(data, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range found {
			bundles[filepath.ToSlash(filepath.Join(folder, filepath.Base(b.Dir)))] = b.Dir
		}
	}
	for _, p := range []string{"okf-samples/okf-skills/examples/sample-bundle", "okf-samples/okf-skills/.okf", "okf-samples/okf-skills/tests/fixtures/non-conformant"} {
		bundles[p] = filepath.Join(data, p)
	}
	out := t.TempDir()
	for _, b := range compiletest.Shared(t, "livesqlbench/base-lite", "bird/superhero") {
		if err := compile.Write(out, compile.WriteOptions{}, b); err != nil {
			t.Fatal(err)
		}
		bundles["compiled/"+b.Name] = filepath.Join(out, b.Name)
	}
	return bundles
}

// TestW4G1Parity checks that okf and the W4G1 validator agree on whether
// each bundle conforms to OKF v0.2, but for the cases w4g1Differs lists
// with the section that explains okf's verdict. Run with -v for the table.
func TestW4G1Parity(t *testing.T) {
	bin := w4g1Binary(t)
	bundles := parityBundles(t)
	if len(bundles) < 85 {
		t.Errorf("only %d bundles to compare", len(bundles))
	}
	names := make([]string, 0, len(bundles))
	for name := range bundles {
		names = append(names, name)
	}
	sort.Strings(names)
	verdict := func(ok bool) string {
		if ok {
			return "conformant"
		}
		return "non-conformant"
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-62s %-15s %-20s %s\n", "bundle", "okf", "W4G1 (exit)", "")
	for _, name := range names {
		dir := bundles[name]
		b, err := okf.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ours := okf.Validate(b, okf.Options{Now: sampleDay}).Conformant()
		theirs, status := w4g1Verdict(t, bin, dir)
		why, listed := w4g1Differs[name]
		note := ""
		switch {
		case ours != theirs && listed:
			note = "differs on purpose"
		case ours != theirs:
			note = "DIFFERS"
			t.Errorf("%s: okf says %s, W4G1 says %s (exit %d); agree, or list it in w4g1Differs with the section that decides",
				name, verdict(ours), verdict(theirs), status)
		case listed:
			t.Errorf("%s: okf and W4G1 now agree (%s), so drop it from w4g1Differs (%s)", name, verdict(ours), why)
		}
		fmt.Fprintf(&table, "%-62s %-15s %-20s %s\n", name, verdict(ours), fmt.Sprintf("%s (%d)", verdict(theirs), status), note)
	}
	for name := range w4g1Differs {
		if _, ok := bundles[name]; !ok {
			t.Errorf("w4g1Differs lists %s, which is no bundle compared here", name)
		}
	}
	t.Logf("verdicts:\n%s", table.String())
}
