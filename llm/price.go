package llm

import "strings"

// Price is what a model costs, in US dollars per million tokens. A zero
// CachedInput or CacheWrite means those tokens cost the Input price.
type Price struct {
	Input       float64 `yaml:"input" json:"input"`
	CachedInput float64 `yaml:"cached_input" json:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write" json:"cache_write"`
	Output      float64 `yaml:"output" json:"output"`
}

// prices are the built-in list prices (standard tier, USD per million
// tokens, as published by the providers in 2025). okf.yaml overrides
// them; a model not listed has no price, and its cost stays unknown. A
// table rather than a map, so that nothing is built when okf starts.
var prices = [...]struct {
	id    string
	price Price
}{
	{"gpt-4o", Price{Input: 2.50, CachedInput: 1.25, Output: 10}},
	{"gpt-4o-mini", Price{Input: 0.15, CachedInput: 0.075, Output: 0.60}},
	{"gpt-4.1", Price{Input: 2.00, CachedInput: 0.50, Output: 8}},
	{"gpt-4.1-mini", Price{Input: 0.40, CachedInput: 0.10, Output: 1.60}},
	{"gpt-4.1-nano", Price{Input: 0.10, CachedInput: 0.025, Output: 0.40}},
	{"o4-mini", Price{Input: 1.10, CachedInput: 0.275, Output: 4.40}},
	{"gpt-5", Price{Input: 1.25, CachedInput: 0.125, Output: 10}},
	{"gpt-5-mini", Price{Input: 0.25, CachedInput: 0.025, Output: 2}},
	{"gpt-5-nano", Price{Input: 0.05, CachedInput: 0.005, Output: 0.40}},
	{"claude-sonnet-4", Price{Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15}},
	{"claude-sonnet-4-5", Price{Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15}},
	{"claude-haiku-4-5", Price{Input: 1, CachedInput: 0.10, CacheWrite: 1.25, Output: 5}},
	{"claude-opus-4-1", Price{Input: 15, CachedInput: 1.50, CacheWrite: 18.75, Output: 75}},
}

// LookupPrice finds a model's built-in price: by its exact id, or by an id
// followed by a dated snapshot ("gpt-4o-2024-08-06",
// "claude-sonnet-4-5-20250929"). A provider prefix ("openai/gpt-4o", as
// OpenRouter writes) is ignored.
func LookupPrice(model string) (Price, bool) {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, e := range prices {
		if e.id == model {
			return e.price, true
		}
	}
	best, found := Price{}, false
	bestLen := 0
	for _, e := range prices {
		rest, ok := strings.CutPrefix(model, e.id+"-")
		if ok && datedSnapshot(rest) && len(e.id) > bestLen {
			best, found, bestLen = e.price, true, len(e.id)
		}
	}
	return best, found
}

// Cost prices a usage; nil when p is nil.
func (p *Price) Cost(u Usage) *float64 {
	if p == nil {
		return nil
	}
	cached, write := p.CachedInput, p.CacheWrite
	if cached == 0 {
		cached = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := max(u.Input-u.Cached-u.CacheWrite, 0)
	c := (float64(plain)*p.Input + float64(u.Cached)*cached + float64(u.CacheWrite)*write + float64(u.Output)*p.Output) / 1e6
	return &c
}

// datedSnapshot reports whether s starts with a year: "2024-08-06",
// "20250929".
func datedSnapshot(s string) bool {
	if len(s) < 4 {
		return false
	}
	for _, r := range s[:4] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
