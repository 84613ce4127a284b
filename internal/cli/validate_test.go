package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
)

// run executes the okf command line in-process.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// writeBundle creates a bundle from path → content pairs.
func writeBundle(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const cleanConcept = `---
type: Metric
title: Revenue
description: Recognised revenue.
tags: [finance]
generated: {by: process:test, at: 2026-01-01T00:00:00Z}
stale_after: 2026-12-31
---
# Definition

Sum of net amounts.
`

func cleanBundle(t *testing.T) string {
	return writeBundle(t, map[string]string{
		"index.md":          "---\nokf_version: \"0.2\"\n---\n# Bundle\n\n* [Revenue](revenue.md) - Recognised revenue.\n",
		"revenue.md":        cleanConcept,
		"log.md":            "# Log\n\n## 2026-02-01\n* **Update**: b\n\n## 2026-01-01\n* **Creation**: a\n",
		"assets/readme.txt": "not markdown",
	})
}

func TestValidateCleanBundle(t *testing.T) {
	dir := cleanBundle(t)
	code, out, errOut := run(t, "validate", "--today", "2026-11-29", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	want := "OKF v0.2 conformance — " + dir + "\n  concepts: 1   index.md: 1   log.md: 1\n  ✓ conformant — no issues\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes written to a non-terminal")
	}
}

func TestValidateStaleDependsOnToday(t *testing.T) {
	dir := cleanBundle(t)
	_, before, _ := run(t, "validate", "--today", "2026-12-30", dir)
	_, after, _ := run(t, "validate", "--today", "2026-12-31", dir)
	if strings.Contains(before, "[stale]") {
		t.Errorf("stale before its date:\n%s", before)
	}
	if !strings.Contains(after, "revenue.md:7: §5.5 stale since 2026-12-31 (today is 2026-12-31) [stale]") {
		t.Errorf("not stale on its date:\n%s", after)
	}
}

func TestValidateExitCodes(t *testing.T) {
	warned := writeBundle(t, map[string]string{
		"a.md": "---\ntype: Note\n---\nSee [b](b.md).\n",
	})
	broken := writeBundle(t, map[string]string{
		"a.md": "# no frontmatter\n",
	})
	notDir := filepath.Join(t.TempDir(), "file.md")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"warnings pass by default", []string{"validate", warned}, 0},
		{"strict fails on warnings", []string{"validate", "--strict", warned}, 1},
		{"max-warnings below the count fails", []string{"validate", "--max-warnings", "2", warned}, 1},
		{"max-warnings at the count passes", []string{"validate", "--max-warnings", "6", warned}, 0},
		{"errors fail", []string{"validate", broken}, 1},
		{"not a directory", []string{"validate", notDir}, 2},
		{"missing directory", []string{"validate", filepath.Join(t.TempDir(), "nope")}, 2},
		{"no argument", []string{"validate"}, 2},
		{"bad --today", []string{"validate", "--today", "29/11/2026", warned}, 2},
		{"unknown flag", []string{"validate", "--nope", warned}, 2},
		{"unknown command", []string{"frobnicate"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
		})
	}
}

func TestValidateWarningCountMatchesMaxWarnings(t *testing.T) {
	dir := writeBundle(t, map[string]string{"a.md": "---\ntype: Note\n---\nSee [b](b.md).\n"})
	_, out, _ := run(t, "validate", "--json", dir)
	var rep okf.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// title, description, tags, generated missing; broken link; orphan.
	if len(rep.Warnings) != 6 {
		t.Fatalf("got %d warnings, the exit-code table above assumes 6: %+v", len(rep.Warnings), rep.Warnings)
	}
}

func TestValidateJSON(t *testing.T) {
	dir := writeBundle(t, map[string]string{
		"a.md":  "# no frontmatter\n",
		"b.md":  "---\ntype: Note\ntitle: B\ndescription: d\ntags: [x]\ngenerated: {by: process:t}\n---\n[a](a.md) [gone](gone.md)\n",
		"c.md":  "---\ntype: Note\n---\n[b](b.md)\n",
		"index": "not markdown",
	})
	code, out, _ := run(t, "validate", "--json", "--today", "2026-11-29", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var rep okf.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Conformant || rep.Passed || rep.Bundle != dir || rep.Counts != (okf.Counts{Concepts: 3}) {
		t.Errorf("header fields wrong: %+v", rep)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Code != "frontmatter-missing" || rep.Errors[0].Path != "a.md" || rep.Errors[0].Line != 1 {
		t.Errorf("errors: %+v", rep.Errors)
	}
	var broken *okf.Finding
	for i, f := range rep.Warnings {
		if f.Code == "link-broken" {
			broken = &rep.Warnings[i]
		}
	}
	if broken == nil || broken.Path != "b.md" || broken.Line != 8 || broken.Section != "§6.1" || broken.Severity != okf.Warning {
		t.Errorf("link-broken finding: %+v", broken)
	}
	if rep.Infos == nil {
		t.Error("infos must be an empty list, not null")
	}
	_, again, _ := run(t, "validate", "--json", "--today", "2026-11-29", dir)
	if again != out {
		t.Error("two runs gave different bytes")
	}
}

func TestValidateRulesListsEveryCode(t *testing.T) {
	code, out, _ := run(t, "validate", "--rules")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(okf.Checks) {
		t.Fatalf("%d lines for %d rules", len(lines), len(okf.Checks))
	}
	for i, r := range okf.Checks {
		if f := strings.Fields(lines[i]); f[0] != r.Code || f[1] != r.Severity.String() || f[2] != r.Section {
			t.Errorf("line %d = %q, want %s %s %s", i, lines[i], r.Code, r.Severity, r.Section)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, out, _ := run(t, "--help")
	if code != 0 || !strings.Contains(out, "validate") || !strings.Contains(out, "Examples:") {
		t.Errorf("--help exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, "validate", "--help")
	if code != 0 || !strings.Contains(out, "--max-warnings") || !strings.Contains(out, "okf validate --strict") {
		t.Errorf("validate --help exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, "version")
	if code != 0 || !strings.HasPrefix(out, "okf ") {
		t.Errorf("version exit %d: %q", code, out)
	}
}

func TestValidateDocsListEveryRule(t *testing.T) {
	page, err := os.ReadFile("../../docs/validate.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range okf.Checks {
		row := "| `" + r.Code + "` | " + r.Severity.String() + " | " + r.Section + " | "
		if !strings.Contains(string(page), row) {
			t.Errorf("docs/validate.md has no row starting %q", row)
		}
	}
}

func TestValidateFolderOfBundles(t *testing.T) {
	// Read as one bundle, the folder would break the bundle-absolute link
	// of good/index.md and orphan good/revenue.md.
	dir := writeBundle(t, map[string]string{
		"good/index.md":   "# Good\n\n* [Revenue](/revenue.md) - Recognised revenue.\n",
		"good/revenue.md": cleanConcept,
		"bad/index.md":    "# Bad\n\n* [Plain](plain.md) - No frontmatter.\n",
		"bad/plain.md":    "# no frontmatter\n",
		"notes/readme":    "not markdown, so not a bundle",
	})
	code, out, errOut := run(t, "validate", "--today", "2026-11-29", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q, stdout:\n%s", code, errOut, out)
	}
	want := "read " + dir + " as 2 bundles: bad, good (it has no document at its top; an index.md there makes it one bundle)\n" +
		"\n" +
		"OKF v0.2 conformance — " + filepath.Join(dir, "bad") + "\n" +
		"  concepts: 1   index.md: 1   log.md: 0\n" +
		"  ✗ ERROR  plain.md:1: §11.1 no parseable YAML frontmatter block [frontmatter-missing]\n" +
		"  ✗ non-conformant (1 error(s), 0 warning(s))\n" +
		"\n" +
		"OKF v0.2 conformance — " + filepath.Join(dir, "good") + "\n" +
		"  concepts: 1   index.md: 1   log.md: 0\n" +
		"  ✓ conformant — no issues\n" +
		"\n" +
		"2 bundles: 1 passed, 1 failed\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}

	code, out, _ = run(t, "validate", "--json", "--today", "2026-11-29", dir)
	var folder folderReport
	if err := json.Unmarshal([]byte(out), &folder); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, out)
	}
	if folder.Folder != dir || !slices.Equal(folder.Bundles, []string{"bad", "good"}) || folder.Passed {
		t.Errorf("folder fields: %+v", folder)
	}
	reps := folder.Reports
	if code != 1 || len(reps) != 2 || reps[0].Bundle != filepath.Join(dir, "bad") || reps[0].Conformant ||
		reps[1].Bundle != filepath.Join(dir, "good") || !reps[1].Passed || len(reps[1].Warnings) != 0 {
		t.Errorf("exit %d, reports %+v", code, reps)
	}

	if err := os.RemoveAll(filepath.Join(dir, "bad")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, "validate", "--today", "2026-11-29", dir); code != 0 || !strings.HasSuffix(out, "\n1 bundle: 1 passed, 0 failed\n") {
		t.Errorf("a folder of one good bundle: exit %d:\n%s", code, out)
	}
}

func TestValidateFolderWithoutBundles(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"empty":       {},
		"no markdown": {"notes/readme.txt": "x", "top.txt": "y"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeBundle(t, files)
			code, out, errOut := run(t, "validate", dir)
			if code != 1 || out != "" || errOut != "okf: "+dir+": no markdown files, neither at its top nor in its subfolders\n" {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}

// TestValidateChecksQuerySQL: okf validate passes a query concept's SQL,
// placeholders bound, through the SQL guard's validator.
func TestValidateChecksQuerySQL(t *testing.T) {
	dir := writeBundle(t, map[string]string{
		"shop/purge.md": "---\ntype: SQL Query\ntitle: Purge\ndescription: Not a read.\ntags: [shop]\ngenerated:\n  by: human:ana\nparameters:\n  - {name: region, type: text}\n---\n# SQL\n\n```sql\nDELETE FROM orders WHERE region = :region\n```\n",
	})
	code, out, _ := run(t, "validate", filepath.Join(dir, "shop"))
	if code != 0 || !strings.Contains(out, "purge.md:14: okf the SQL guard refuses this query: refused by the validator: DELETE is not allowed") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, _, _ := run(t, "validate", filepath.Join(dir, "shop"), "--strict"); code == 0 {
		t.Error("--strict passed a refused query")
	}
}

// TestValidateJSONLineOnEveryFinding: docs/validate.md promises every
// finding a line; a finding on the whole file has line 0.
func TestValidateJSONLineOnEveryFinding(t *testing.T) {
	dir := writeBundle(t, map[string]string{"a.md": "---\ntype: Note\n---\nSee [b](b.md).\n"})
	_, out, _ := run(t, "validate", "--json", dir)
	var rep struct {
		Warnings []map[string]any `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	lines := map[string]any{}
	for _, f := range rep.Warnings {
		line, ok := f["line"]
		if !ok {
			t.Errorf("finding without a line key: %v", f)
		}
		code, ok := f["code"].(string)
		if !ok {
			t.Fatalf("finding without a code: %v", f)
		}
		lines[code] = line
	}
	if lines["title-missing"] != 0.0 || lines["orphan"] != 0.0 || lines["link-broken"] != 4.0 {
		t.Errorf("lines by code: %v", lines)
	}
}

// nestedBundles is a folder whose top holds only folders, the first with
// a root index.md that declares okf_version, as okf compile writes it.
func nestedBundles(t *testing.T, aIndex string) string {
	return writeBundle(t, map[string]string{
		"a/index.md":   aIndex,
		"a/revenue.md": cleanConcept,
		"b/index.md":   "# B\n\n* [Revenue](revenue.md) - Recognised revenue.\n",
		"b/revenue.md": cleanConcept,
		"c/index.md":   "# C\n\n* [Revenue](revenue.md) - Recognised revenue.\n",
		"c/revenue.md": cleanConcept,
	})
}

const okfVersionIndex = "---\nokf_version: \"0.2\"\n---\n# A\n\n* [Revenue](revenue.md) - Recognised revenue.\n"

// TestValidateNestedBundleIndex pins how a folder whose top holds only
// folders is read, and its subfolders' index.md frontmatter, against the
// peers run on the same folders. The spec (§3, §8, §12) makes the folder
// given the bundle root, whose index.md alone may hold frontmatter, and
// okf_version only. W4G1 and okf_validate.py read such a folder as one
// bundle: on a/index.md with okf_version W4G1 fails ("index.md should not
// contain frontmatter"), okf_validate.py warns (§8). okf reads it as a
// folder of bundles, as okf import and --dir do, where a/index.md is a
// bundle root and may declare okf_version: so it says which reading it
// took and how to get the other, and a root index.md gives W4G1's verdict.
func TestValidateNestedBundleIndex(t *testing.T) {
	dir := nestedBundles(t, okfVersionIndex)
	code, out, _ := run(t, "validate", "--today", "2026-11-29", dir)
	head := "read " + dir + " as 3 bundles: a, b, c (it has no document at its top; an index.md there makes it one bundle)\n"
	if code != 0 || !strings.HasPrefix(out, head) || !strings.HasSuffix(out, "\n3 bundles: 3 passed, 0 failed\n") {
		t.Errorf("as a folder of bundles: exit %d:\n%s", code, out)
	}

	// With an index.md at its top the folder is one bundle, and
	// a/index.md's frontmatter breaks §8 as W4G1 reports it.
	mustWriteFile(t, filepath.Join(dir, "index.md"), "# All\n\n* [A](a/) - a\n* [B](b/) - b\n* [C](c/) - c\n")
	code, out, _ = run(t, "validate", "--json", "--today", "2026-11-29", dir)
	var rep okf.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one report: %v\n%s", err, out)
	}
	if code != 1 || len(rep.Errors) != 1 || rep.Errors[0].Code != "index-frontmatter" || rep.Errors[0].Path != "a/index.md" || rep.Errors[0].Line != 1 {
		t.Errorf("as one bundle: exit %d, errors %+v", code, rep.Errors)
	}

	// Frontmatter no bundle root may hold fails either way; W4G1 fails
	// it too.
	dir = nestedBundles(t, "---\ntype: Index\n---\n# A\n\n* [Revenue](revenue.md) - Recognised revenue.\n")
	code, out, _ = run(t, "validate", "--json", "--today", "2026-11-29", dir)
	var folder folderReport
	if err := json.Unmarshal([]byte(out), &folder); err != nil {
		t.Fatalf("not a folder report: %v\n%s", err, out)
	}
	if code != 1 || folder.Passed || !slices.Equal(folder.Bundles, []string{"a", "b", "c"}) || len(folder.Reports) != 3 {
		t.Fatalf("exit %d, %+v", code, folder)
	}
	if errs := folder.Reports[0].Errors; len(errs) != 1 || errs[0].Code != "index-root-keys" || errs[0].Path != "index.md" || errs[0].Line != 2 {
		t.Errorf("a/index.md with type: errors %+v", errs)
	}
}

func mustWriteFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
