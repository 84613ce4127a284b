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
// form, and the one-word ones by length, for typos.
type valueIndex struct {
	byForm   map[string][]int // folded form → values
	values   []storedValue
	oneWord  map[int][]string // length → one-word folded forms
	maxWords int
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
	vi := &valueIndex{byForm: map[string][]int{}, oneWord: map[int][]string{}}
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
				vi.byForm[form] = append(vi.byForm[form], len(vi.values))
				vi.values = append(vi.values, storedValue{table: int(i), column: cv.Column, value: v, words: len(words)})
				vi.maxWords = max(vi.maxWords, len(words))
			}
		}
	}
	return vi
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
	take := func(form string, typo bool, at, n int) {
		for _, k := range vi.byForm[form] {
			out = append(out, valueMatch{vi.values[k], typo})
		}
		for j := at; j < at+n; j++ {
			used[j] = true
		}
	}
	for n := min(vi.maxWords, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) {
				continue
			}
			form := strings.Join(words[i:i+n], " ")
			if _, ok := vi.byForm[form]; ok {
				take(form, false, i, n)
				continue
			}
			if n == 1 && len(form) >= typoLength && !questionWords.Get()[form] {
				if near := vi.nearest(form); near != "" {
					take(near, true, i, 1)
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].words > out[b].words })
	return out
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
