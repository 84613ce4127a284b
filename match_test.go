package okf

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The expressions that hand-written matchers replace, each held to its
// matcher on chosen and random strings.
var replaced = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"hasScheme", regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*:`), hasScheme},
	{"isDate", regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`), isDate},
	{"isName", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), isName},
	{"nearMiss", regexp.MustCompile(`(?i)^(human|process)[^A-Za-z0-9_]`), nearMiss},
	{"prefixed", regexp.MustCompile(`^[^\s:/]+:\S+$`), func(s string) bool { return splitActor(s, ':', '/') }},
	{"producer", regexp.MustCompile(`^[^\s/:]+/\S+$`), func(s string) bool { return splitActor(s, '/', ':') }},
}

func TestMatchersAsTheirExpressions(t *testing.T) {
	chosen := []string{"", ":", "a:", "A1+.-:x", "1a:", "a b:", "mailto:x", "https://x", "tables/a.md", "a", "a-",
		"2026-11-29", "2026-11-29\n", "2026-1-29", "２026-11-29", "2026/11/29", "x2026-11-29", "_", "_a1", "a1_", "1a", "a-b", "é",
		"human:ada", "human ada", "Human-ada", "HUMAN.x", "human", "humans", "human_", "human\u017f", "human\u212a", "humanK", "proce\u017f\u017f x", "PROCE\u017fS-x", "PROCESS\n",
		"process\xff", "okf/1.2", "okf/", "/1.2", "a:b/c", "a/b:c", "a b/c", "a/b c", "a/b\tc", "human:", "process:"}
	r := rand.New(rand.NewPCG(17, 1))
	alphabet := "aZ09_-+.:/ \n\t2éhumanprocessHUMANPROCESS\u017f\u212a\xff"
	words := []string{"", "human", "process", "HuMaN", "proce\u017f\u017f", "proces\u017f", "hum", "okf", "human\u212a"}
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		chosen = append(chosen, words[r.IntN(len(words))]+string(b))
	}
	for _, m := range replaced {
		for _, s := range chosen {
			if got, want := m.match(s), m.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the expression says %v", m.name, s, got, want)
			}
		}
	}
}
