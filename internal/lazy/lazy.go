// Package lazy holds package-level values that are built on first use
// rather than when the program starts. Every package of the okf binary is
// initialised before any command runs, so a table or expression built at
// init is paid for by okf version as much as by the command that reads it;
// declared with this package, it costs nothing until then.
//
// Its types are meant for package-level variables declared with a
// composite literal of constants, which the compiler lays out statically:
//
//	var wordRe = lazy.Regexp{Expr: `[a-z]+`}
//	var reserved = lazy.Set{Names: []string{"index", "log"}}
//	var table = lazy.Value[map[string]int]{New: buildTable}
//
// They are safe for concurrent use and must not be copied.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on the first call to Get.
type Regexp struct {
	// Expr is the expression; it must compile (Get panics otherwise, as
	// regexp.MustCompile does).
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}

// Value is a value that New builds on the first call to Get.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns the value, building it on the first call.
func (v *Value[T]) Get() T {
	v.once.Do(func() { v.v = v.New() })
	return v.v
}

// Set is a set of strings, built from Names on first use.
type Set struct {
	Names []string
	once  sync.Once
	m     map[string]bool
}

// Get returns the set as a map; callers must not change it.
func (s *Set) Get() map[string]bool {
	s.once.Do(func() {
		s.m = make(map[string]bool, len(s.Names))
		for _, n := range s.Names {
			s.m[n] = true
		}
	})
	return s.m
}

// Has reports whether name is in the set.
func (s *Set) Has(name string) bool { return s.Get()[name] }
