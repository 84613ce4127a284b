package livesqlbench_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/shareddata"
)

// facts are the statements a bundle makes, each as one comparable line.
type facts map[string]bool

var (
	joinRe      = regexp.MustCompile("^\\* `([^`]+)` references `([^`]+)` in \\[([^\\]]+)\\]")
	jsonFieldRe = regexp.MustCompile("^\\* `([^`]+)`(?:: (.*))?$")
)

// bundleFacts reads the tables, columns with their meanings, JSON field
// paths with theirs, joins, rule definitions and depends-on links of a
// bundle, from the markdown alone, so the seed's bundles and ours are read
// the same way.
func bundleFacts(t *testing.T, b *okf.Bundle) facts {
	t.Helper()
	f := facts{}
	titles := map[string]string{}
	for _, d := range b.Concepts() {
		titles[d.ID()] = d.Title()
	}
	for _, d := range b.Concepts() {
		title := d.Title()
		switch {
		case strings.HasPrefix(d.Path, "tables/"):
			f["table "+title] = true
			for _, line := range sectionLines(d, "schema") {
				cells := splitRow(line)
				if len(cells) < 3 || !strings.HasPrefix(cells[0], "`") {
					continue
				}
				col := strings.Trim(cells[0], "`")
				f[fmt.Sprintf("column %s.%s", title, col)] = true
				f[fmt.Sprintf("meaning %s.%s: %s", title, col, cells[len(cells)-1])] = true
			}
			for _, line := range sectionLines(d, "json_fields") {
				if m := jsonFieldRe.FindStringSubmatch(line); m != nil {
					f[fmt.Sprintf("json %s.%s", title, m[1])] = true
					f[fmt.Sprintf("json meaning %s.%s: %s", title, m[1], m[2])] = true
				}
			}
			for _, line := range sectionLines(d, "joins") {
				if m := joinRe.FindStringSubmatch(line); m != nil {
					f[fmt.Sprintf("join %s.%s -> %s.%s", title, m[1], m[3], m[2])] = true
				}
			}
		case strings.HasPrefix(d.Path, "knowledge/"):
			f[fmt.Sprintf("rule %s: %s", title, strings.Join(sectionLines(d, "definition"), "\n"))] = true
			s, ok := d.Section("depends_on")
			if !ok {
				continue
			}
			for _, l := range d.Links {
				if off := d.LineAt(s.Start); l.Line > off && l.Line <= d.LineAt(s.End-1) {
					f[fmt.Sprintf("depends %s -> %s", title, titles[b.Target(l)])] = true
				}
			}
		}
	}
	return f
}

// sectionLines returns the non-blank lines of a section, without its heading.
func sectionLines(d *okf.Document, slug string) []string {
	s, ok := d.Section(slug)
	if !ok {
		return nil
	}
	var out []string
	for i, line := range strings.Split(string(d.Raw[s.Start:s.End]), "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, strings.TrimRight(line, "\r"))
	}
	return out
}

// splitRow splits a markdown table row on the pipes that are not escaped,
// and undoes the escapes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	var cells []string
	var cur strings.Builder
	for i := 1; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return cells
}

// Every table, column, meaning, JSON field path, join, rule definition and
// depends-on link of the seed compiler's bundles is also in ours.
func TestOursHoldEverythingTheSeedHolds(t *testing.T) {
	seedRoot := shareddata.Dir(t, "livesqlbench", "okf-sql-knowledge-bundles")
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			seed := bundleFacts(t, loadBundle(t, filepath.Join(seedRoot, name)))
			b := compileDir(t, dir, testOptions)
			out := t.TempDir()
			if err := compile.Write(out, compile.WriteOptions{}, b); err != nil {
				t.Fatal(err)
			}
			ours := bundleFacts(t, loadBundle(t, filepath.Join(out, name)))
			var missing []string
			kinds := map[string]int{}
			for fact := range seed {
				kinds[strings.Fields(fact)[0]]++
				if !ours[fact] {
					missing = append(missing, fact)
				}
			}
			slices.Sort(missing)
			for _, m := range missing {
				t.Errorf("missing from ours: %s", m)
			}
			for _, kind := range []string{"table", "column", "meaning", "json", "join", "rule", "depends"} {
				if kinds[kind] == 0 && kind != "json" && kind != "join" {
					t.Errorf("the seed bundle yielded no %q facts; is the parser reading it?", kind)
				}
			}
			t.Logf("%s: %d seed facts, all in ours (%v)", name, len(seed), kinds)
		})
	}
}
