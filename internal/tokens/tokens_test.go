package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/tokens/vocab"
)

// o200kSplit is the pre-tokenizer expression nextPiece implements.
const o200kSplit = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var splitRe = regexp2.MustCompile(o200kSplit, regexp2.None)

func reference(t testing.TB) tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// samePieces fails t unless nextPiece splits s as the expression does.
func samePieces(t *testing.T, s string) {
	t.Helper()
	var want []string
	m, _ := splitRe.FindStringMatch(s)
	for m != nil {
		want = append(want, m.String())
		m, _ = splitRe.FindNextMatch(m)
	}
	var got []string
	for i := 0; i < len(s); {
		e := nextPiece(s, i)
		if e == i {
			i++
			continue
		}
		got = append(got, s[i:e])
		i = e
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("split of %q:\n got %q\nwant %q", s, got, want)
	}
}

func sameCount(t *testing.T, ref tokenizer.Codec, s string) {
	t.Helper()
	want, err := ref.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := Count(s); got != want {
		t.Fatalf("Count(%.200q) = %d, tiktoken-go counts %d", s, got, want)
	}
}

var samples = []string{
	"", "hello world", "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks", "I'm here, they'll go; we've DONE it's", "HELLO'S World'S",
	"  leading and trailing  ", "a\n\nb\r\n\r\nc \n  d", "   \n   ", "x   ", "x\t\ty", "3.14159 12345678 1,000,000", "ab123cd", "¹²³ ⅓ ٣٤٥",
	"naïve café Straße ÉCOLE İstanbul", "日本語のテキスト 你好世界 한국어", "ǅungla ǈ ǋ", "a\u0301e\u0301 \u0301x \u0301", "\u0301\u0301",
	"👍🏽 emoji 🇺🇸 family 👨‍👩‍👧", "--> <-- ::= //comment /* */ ///", "!!!\n\n///", "a/b/c", "x '\n'  's 'S 'Ll 'LL 're 'RE",
	"\u00a0\u2003spaces\u3000", "tab\u000bvertical\u000cfeed", "\u2028line\u2029para", "\x85next", "Kelvin \u212a 'ſ", "Ḁḁẞßʼnǰΐΰ",
	"SELECT count(*) FROM orders WHERE total > 100 -- rule", "```sql\nSELECT 1;\n```", "| a | b |\n|---|---|\n| 1 | 2 |",
	"x\x7fy \x7f\x7f\n\x7f", "\xff\xfe invalid \xc3 bytes \xe2\x82", strings.Repeat("=", 300), strings.Repeat("ab", 200), strings.Repeat("x ", 100) + "\n",
}

func TestSplitMatchesTheExpression(t *testing.T) {
	for _, s := range samples {
		if utf8.ValidString(s) {
			samePieces(t, s)
		}
	}
}

func TestCountMatchesTiktoken(t *testing.T) {
	ref := reference(t)
	for _, s := range samples {
		sameCount(t, ref, s)
	}
	// Random text over every class the expression tells apart.
	alphabet := []rune("aZ9 \t\n\r'sStTrReEvVmMlLdD.,/-_!(\u00e9\u00c9\u0301\u02b0\u05d0\u0660\u2003\u00a0\u3000\u4e2d\u01c5\u2160\u00b2😀ſ\u212a")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		samePieces(t, b.String())
		sameCount(t, ref, b.String())
	}
}

// TestEveryRune splits every rune alone and beside a letter and a space
// as the expression does.
func TestEveryRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		samePieces(t, string(r))
		if r%7 == 0 {
			samePieces(t, "a"+string(r)+" ")
		}
	}
}

// TestCountOnTheCorpora counts every document of the shared corpora and
// the repository's own both ways.
func TestCountOnTheCorpora(t *testing.T) {
	ref := reference(t)
	files, total := 0, 0
	for _, root := range []string{shareddata.Find(), "../../examples", "../../docs"} {
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".csv") || strings.HasSuffix(path, ".txt") || strings.HasSuffix(path, ".sql")) {
				return nil
			}
			raw, err := os.ReadFile(path)
			if err != nil || len(raw) > 2<<20 {
				return nil
			}
			sameCount(t, ref, string(raw))
			files++
			total += len(raw)
			return nil
		})
	}
	t.Logf("%d files, %d bytes: the same counts", files, total)
	if os.Getenv(shareddata.EnvRequire) != "" && files < 500 {
		t.Fatalf("counted %d files: the shared corpora are missing", files)
	}
}

// TestVocabularyFile holds the committed o200k.bin to what gen builds from
// tiktoken-go now.
func TestVocabularyFile(t *testing.T) {
	want, err := vocab.Build()
	if err != nil {
		t.Fatal(err)
	}
	if blob != string(want) {
		t.Fatal("o200k.bin differs from what internal/tokens/gen builds: run go generate ./internal/tokens")
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	ref := reference(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2000 {
			return
		}
		if utf8.ValidString(s) {
			samePieces(t, s)
		}
		sameCount(t, ref, s)
	})
}
