package identwords

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for name, want := range map[string][]string{
		"PowerRatedW":        {"power", "rated", "w"},
		"MaintenanceCostUSD": {"maintenance", "cost", "usd"},
		"POAIrradianceWM2":   {"poa", "irradiance", "wm2"},
		"snake_case_name":    {"snake", "case", "name"},
	} {
		if got := Split(name); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", name, got, want)
		}
	}
}
