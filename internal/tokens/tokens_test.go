package tokens

import "testing"

func TestCount(t *testing.T) {
	cases := map[string]int{
		"":            0,
		"hello world": 2,
		"id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks": 12,
	}
	for s, want := range cases {
		if got := Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
}
