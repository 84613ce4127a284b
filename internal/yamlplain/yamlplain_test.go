package yamlplain

import (
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"
)

// readByYAMLV3 returns the tag yaml.v3 gives s as a plain value, or false
// when s is no plain value there.
func readByYAMLV3(s string) (string, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("k: "+s+"\n"), &doc); err != nil || len(doc.Content) != 1 {
		return "", false
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) != 2 {
		return "", false
	}
	v := m.Content[1]
	if v.Kind != yaml.ScalarNode || v.Style != 0 || v.Value != s {
		return "", false
	}
	return v.Tag, true
}

func checkReadsAs(t *testing.T, s string) {
	t.Helper()
	tag, ok := readByYAMLV3(s)
	if !ok {
		return
	}
	got := ReadsAs(s)
	switch {
	case tag == "!!str" && got == Other && !IsWord(s):
		t.Errorf("ReadsAs(%q) = Other; yaml.v3 reads a string", s)
	case tag != "!!str" && got == String:
		t.Errorf("ReadsAs(%q) = String; yaml.v3 reads %s", s, tag)
	}
}

func TestReadsAs(t *testing.T) {
	for _, s := range []string{
		"abc", "true", "True", "yes", "null", "~", "<<", ".5", ".inf", "+.inf", "-.INF", ".x", "1", "-1", "+1",
		"1_000", "0x1F", "0o17", "-0o17", "0b101", "-0b101", "0777", "1e3", "1.5e-3", "1.", "-.5", "12e45678",
		"6c19ffbe9e6ec232", "0x", "1:20", "2026-10-03", "2026-10-03T00:27:11+05:30", "2026-10-03 00:27:11",
		"2026-13-40", "2026-1-2x", "1 2", "+", "-", "9223372036854775808", "18446744073709551616", "0b2", "1__0",
		"0xFFFFFFFFFFFFFFFF", "-0x8000000000000000", "1e", "1e+", "--1", "0.0.1", "v1.2",
	} {
		checkReadsAs(t, s)
	}
}

// TestIsFloat holds isFloat to the expression of yaml.v3 it replaces.
func TestIsFloat(t *testing.T) {
	re := regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	for _, s := range []string{"", "1", "-1", "+.5", ".", "1.", "1.e5", ".e5", "1e", "1e-", "1e-5", "1E+5", "+", "1.5.5", "e5", "1ee5", "-.5e5"} {
		if got, want := isFloat(s), re.MatchString(s); got != want {
			t.Errorf("isFloat(%q) = %v, the expression says %v", s, got, want)
		}
	}
}

func FuzzReadsAs(f *testing.F) {
	for _, s := range []string{"1", "0x1F", "2026-10-03", "abc", "1e5", "-0b1"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || len(s) > 64 {
			return
		}
		if isFloat(s) != re.MatchString(s) {
			t.Fatalf("isFloat(%q) differs from the expression", s)
		}
		checkReadsAs(t, s)
	})
}
