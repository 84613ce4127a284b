package compile

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/shareddata"
)

// The expressions the scanners replace.
var (
	wordRe   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`)
	pipeRe   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\|([A-Za-z_][A-Za-z0-9_]*)\|([A-Za-z_][A-Za-z0-9_]*)`)
	parenRe  = regexp.MustCompile(`\s*\(([^()]*)\)\s*$`)
	abbrevRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9&/-]*$`)
	symbolRe = regexp.MustCompile(`\s\(([A-Z][A-Za-z0-9]{1,11})\)`)
	formerRe = regexp.MustCompile(`\bwas '([A-Za-z_][A-Za-z0-9_]*)'`)
)

// sameScan compares every scanner with its expression on s.
func sameScan(t *testing.T, s string) {
	t.Helper()
	check := func(name string, got, want any) {
		t.Helper()
		if g, w := fmt.Sprintf("%q", got), fmt.Sprintf("%q", want); g != w {
			t.Errorf("%s(%q) = %s, the expression gives %s", name, s, g, w)
		}
	}
	wantWords := wordRe.FindAllString(s, -1)
	check("words", words(s), wantWords)
	first := ""
	if len(wantWords) > 0 {
		first = wantWords[0]
	}
	check("firstWord", firstWord(s), first)

	var gotRefs, wantRefs []string
	refs := pipeRefs(s)
	for _, r := range refs {
		gotRefs = append(gotRefs, fmt.Sprint(r.start, r.end, r.names))
	}
	for _, m := range pipeRe.FindAllStringSubmatchIndex(s, -1) {
		wantRefs = append(wantRefs, fmt.Sprint(m[0], m[1], [3]string{s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]]}))
	}
	check("pipeRefs", gotRefs, wantRefs)
	check("withoutPipeRefs", withoutPipeRefs(s, refs), pipeRe.ReplaceAllString(s, " "))

	start, inner, ok := trailingParen(s)
	want := "no match"
	if m := parenRe.FindStringSubmatchIndex(s); m != nil {
		want = fmt.Sprint(m[0], s[m[2]:m[3]], m[1] == len(s))
	}
	got := "no match"
	if ok {
		got = fmt.Sprint(start, inner, true)
	}
	check("trailingParen", got, want)

	check("abbrevShaped", abbrevShaped(s), abbrevRe.MatchString(s))

	var wantSyms, wantFormers []string
	for _, m := range symbolRe.FindAllStringSubmatch(s, -1) {
		wantSyms = append(wantSyms, m[1])
	}
	for _, m := range formerRe.FindAllStringSubmatch(s, -1) {
		wantFormers = append(wantFormers, m[1])
	}
	check("symbols", symbols(s), wantSyms)
	check("formerNames", formerNames(s), wantFormers)
}

var scanCases = []string{
	"", "a", "_", "9", "a.b.c", "a.", "a..b", ".a", "9abc.d1_e", "x.9y", "é.a",
	"db|t|c", "db|t|", "|t|c", "a|b|c|d|e|f", "9db|t|c", "db|t|9c", "x db|t|c y,db2|t2|c2", "a|b", "é|b|c",
	"Resource Utilization Ratio (RUR)", "Name  (X) ", "(only)", "a (b) (c)", "a (b(c))", "a (b) c", "a ()", " (x)\t\n", "a)",
	"RUR", "PM25", "A&B/C-D", "a_b", "1a", "-",
	"open-circuit voltage (Voc)", "references Panel(PaneMark)", " (Ab)", "\t(ABCDEFGHIJKL)", " (ABCDEFGHIJKLM)", " (A)", " (A1) (B2)", " (Ab_c)",
	"(was 'PowerRatedW')", "was 'x'", "swas 'x'", "_was 'x'", " was '9x'", "was 'a' was 'b'", "was 'a", "was 'a b'", "was ''",
}

func TestScannersAsTheirExpressions(t *testing.T) {
	for _, s := range scanCases {
		sameScan(t, s)
	}
	r := rand.New(rand.NewPCG(17, 3))
	alphabet := "aZ_9.|() \t'wasA&/-é\n"
	for range 30000 {
		b := make([]byte, r.IntN(16))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		sameScan(t, string(b))
	}
}

// TestScannersOnTheCorpora runs the scanners over the raw documentation
// the compilers read, line by line.
func TestScannersOnTheCorpora(t *testing.T) {
	data := shareddata.Find()
	if data == "" {
		t.Skip("no shared corpora")
	}
	lines := 0
	for _, dir := range []string{"livesqlbench/base-lite", "bird", "dbt"} {
		root := filepath.Join(data, dir)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !slices.Contains([]string{".json", ".jsonl", ".txt", ".csv", ".yml", ".md"}, filepath.Ext(p)) {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(b), "\n") {
				lines++
				sameScan(t, line)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if lines < 1000 {
		t.Errorf("scanned %d lines, expected the corpora's thousands", lines)
	}
}

func FuzzScanners(f *testing.F) {
	for _, s := range scanCases {
		f.Add(s)
	}
	f.Fuzz(sameScan)
}
