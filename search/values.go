package search

import (
	"slices"
	"sort"
	"strings"
)

// A question says "female heroes published by Marvel"; the database
// stores 'Female' and 'Marvel Comics', and compares text exactly. The
// values a table concept lists (its Values and Enum values sections) are
// matched against the question's words, folded (case, accents, plurals,
// one typo in a long word) and as phrases, so that a pack shows the
// stored spelling of what the question filters on.

// storedValue is one value a column stores.
type storedValue struct {
	table  int
	column string
	value  string // as stored
	words  int    // in its folded form
}

// valueIndex holds the values of one bundle's tables by their folded
// form, the one-word ones by length, for typos, the values a question may
// name by their distinctive words alone, and the values of several words
// by their first.
type valueIndex struct {
	byForm   map[string][]int // folded form → values
	values   []storedValue
	oneWord  map[int][]string // length → one-word folded forms
	maxWords int
	// byShort maps the distinctive words of a value of several, those no
	// other value of its column has ("marvel" of "Marvel Comics"), to it:
	// "published by Marvel" means 'Marvel Comics'.
	byShort map[string][]int
	// byFirst maps the first word of each value of several words to them
	// and their words.
	byFirst map[string][]wordsOf
}

// wordsOf is a value of several words and its folded words.
type wordsOf struct {
	value int
	words []string
}

// valueIndex returns the value index of a bundle.
func (ix *Index) valueIndex(bundle string) *valueIndex {
	return perBundle(&ix.packs, &ix.packs.values, bundle, func() *valueIndex { return ix.buildValueIndex(bundle) })
}

// Bounds of value matching: a value of more words is no phrase a
// question writes, and one of fewer letters matches too much ("no", "a").
const (
	maxValueWords   = 6
	minValueLetters = 3
	// typoLength is the fewest letters a word needs for one typo to be
	// forgiven: "colour"/"color", not "male"/"mole".
	typoLength = 5
)

func (ix *Index) buildValueIndex(bundle string) *valueIndex {
	vi := &valueIndex{byForm: map[string][]int{}, oneWord: map[int][]string{}, byShort: map[string][]int{}, byFirst: map[string][]wordsOf{}}
	sp, ok := ix.span(bundle)
	if !ok {
		return vi
	}
	for i := sp.lo; i < sp.hi; i++ {
		c := &ix.snap.Concepts[i]
		if !c.IsTable() {
			continue
		}
		facts := c.Table()
		if facts == nil {
			continue
		}
		for _, cv := range facts.Values {
			var column []wordsOf   // this column's values, with their words
			df := map[string]int{} // the column's values holding each word
			for _, at := range cv.Values {
				v := ix.snap.Value(c, at)
				words := valueWords(v)
				form := strings.Join(words, " ")
				if len(words) == 0 || len(words) > maxValueWords || len(strings.ReplaceAll(form, " ", "")) < minValueLetters || questionWords.Get()[form] {
					continue
				}
				if _, seen := vi.byForm[form]; !seen && len(words) == 1 {
					vi.oneWord[len(form)] = append(vi.oneWord[len(form)], form)
				}
				for _, w := range uniq(words) {
					df[w]++
				}
				column = append(column, wordsOf{len(vi.values), words})
				if len(words) > 1 {
					vi.byFirst[words[0]] = append(vi.byFirst[words[0]], wordsOf{len(vi.values), words})
				}
				vi.byForm[form] = append(vi.byForm[form], len(vi.values))
				vi.values = append(vi.values, storedValue{table: int(i), column: cv.Column, value: v, words: len(words)})
				vi.maxWords = max(vi.maxWords, len(words))
			}
			for _, w := range column {
				if short := distinctive(w.words, df); short != "" {
					vi.byShort[short] = append(vi.byShort[short], w.value)
				}
			}
		}
	}
	return vi
}

// distinctive is the phrase of a value's words that no other value of its
// column holds, when that is not all of them and names it well enough:
// two letters or more, not a framing word; "" otherwise.
func distinctive(words []string, df map[string]int) string {
	if len(words) < 2 {
		return ""
	}
	var short []string
	for _, w := range words {
		if df[w] == 1 {
			short = append(short, w)
		}
	}
	phrase := strings.Join(short, " ")
	if len(short) == 0 || len(short) == len(words) || len(strings.ReplaceAll(phrase, " ", "")) < 2 || len(short) == 1 && questionWords.Get()[phrase] {
		return ""
	}
	return phrase
}

// uniq returns words without repeats, in order.
func uniq(words []string) []string {
	var out []string
	for _, w := range words {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// valueWords folds a text into the words values are matched by:
// lower case, accents folded, singular.
func valueWords(s string) []string {
	words := Tokens(s)
	for i, w := range words {
		words[i] = singular(w)
	}
	return words
}

// valueMatch is a stored value a question names.
type valueMatch struct {
	storedValue
	typo bool // matched with one letter wrong
}

// match returns the stored values a question names, longest phrases
// first: a word that is part of a longer matched value is not matched
// again on its own ("Marvel Comics", not also "Marvel" of another
// column).
func (vi *valueIndex) match(question string) []valueMatch {
	if len(vi.values) == 0 {
		return nil
	}
	words := valueWords(question)
	used := make([]bool, len(words))
	var out []valueMatch
	add := func(ks []int, typo bool) {
		for _, k := range ks {
			out = append(out, valueMatch{vi.values[k], typo})
		}
	}
	phrases(words, used, vi.maxWords, func(form string, n int) bool {
		if ks, ok := vi.byForm[form]; ok {
			add(ks, false)
			return true
		}
		if n == 1 && len(form) >= typoLength && !questionWords.Get()[form] {
			if near := vi.nearest(form); near != "" {
				add(vi.byForm[near], true)
				return true
			}
		}
		return false
	})
	// A value of several words written loosely: its first word, then each
	// other word, or one typo of a long one, in a run of the question at
	// most two words longer ("no eye color" for 'No Colour').
	for i, w := range words {
		for _, s := range vi.byFirst[w] {
			if used[i] {
				break
			}
			if n, typo, ok := loosely(words[i:], used[i:], s.words); ok {
				add([]int{s.value}, typo)
				for j := i; j < i+n; j++ {
					used[j] = true
				}
			}
		}
	}
	// A value named by its distinctive words alone ("DC" for 'DC
	// Comics'), as a phrase of words not matched yet.
	phrases(words, used, vi.maxWords, func(form string, _ int) bool {
		ks, ok := vi.byShort[form]
		add(ks, false)
		return ok
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].words > out[b].words })
	return out
}

// phrases calls f with each run of words not used yet, of at most most
// words, the longest first, and marks the run used when f takes it.
func phrases(words []string, used []bool, most int, f func(form string, n int) bool) {
	for n := min(most, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) || !f(strings.Join(words[i:i+n], " "), n) {
				continue
			}
			for j := i; j < i+n; j++ {
				used[j] = true
			}
		}
	}
}

// loosely reports whether the words of a value of several, the first
// being words[0], stand in the run of words not used that starts there, at
// most two words longer than the value, and returns the run's length.
func loosely(words []string, used []bool, value []string) (n int, typo, ok bool) {
	n = min(len(words), len(value)+2)
	for _, w := range value[1:] {
		hit := false
		for j := 1; j < n && !hit; j++ {
			switch {
			case used[j]:
			case words[j] == w:
				hit = true
			case len(w) >= typoLength && oneEdit(words[j], w):
				hit, typo = true, true
			}
		}
		if !hit {
			return 0, false, false
		}
	}
	return n, typo, true
}

// nearest is the one-word value one edit from w (a letter added, dropped
// or changed), the first in sorted order when several are; "" when none
// is.
func (vi *valueIndex) nearest(w string) string {
	var best string
	for n := len(w) - 1; n <= len(w)+1; n++ {
		for _, f := range vi.oneWord[n] {
			if f != w && oneEdit(w, f) && (best == "" || f < best) {
				best = f
			}
		}
	}
	return best
}

// oneEdit reports whether a and b differ by one letter added, dropped or
// changed.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}

// valueLine is a pack's line for a stored value the question names.
func (ix *Index) valueLine(m valueMatch) string {
	return "* " + code(tableName(&ix.snap.Concepts[m.table])+"."+m.column) + " = '" + strings.ReplaceAll(m.value, "'", "''") + "'\n"
}

// valueRef is the ref of a stored value a pack shows.
func (ix *Index) valueRef(m valueMatch) string {
	return ref(&ix.snap.Concepts[m.table]) + "." + m.column + "=" + m.value
}
