package lazy

import (
	"sync"
	"testing"
)

var (
	digits = Regexp{Expr: `^[0-9]+$`}
	built  int
	table  = Value[map[string]int]{New: func() map[string]int { built++; return map[string]int{"one": 1} }}
)

func TestRegexpCompilesOnce(t *testing.T) {
	if digits.re != nil {
		t.Fatal("compiled before first use")
	}
	first := digits.Get()
	if !first.MatchString("2026") || first.MatchString("20x6") {
		t.Errorf("%s matches wrongly", first)
	}
	if digits.Get() != first {
		t.Error("compiled twice")
	}
}

func TestValueBuildsOnceUnderConcurrency(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if table.Get()["one"] != 1 {
				t.Error("wrong table")
			}
		})
	}
	wg.Wait()
	if built != 1 {
		t.Errorf("built %d times, want 1", built)
	}
}

func TestRegexpPanicsOnABadExpression(t *testing.T) {
	bad := Regexp{Expr: `(`}
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	bad.Get()
}

func TestSet(t *testing.T) {
	s := Set{Names: []string{"index", "log"}}
	if s.m != nil {
		t.Fatal("built before first use")
	}
	if !s.Has("log") || s.Has("concept") || len(s.Get()) != 2 {
		t.Errorf("set %v", s.Get())
	}
}
