package gcdelay

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestTheFirstCollectionEndsTheDelay(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	Start(64 << 20)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("during the delay the percent is %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 64<<20 {
		t.Errorf("during the delay the limit is %d, want 64 MiB", l)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := !armed
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delay outlived a collection")
		}
		runtime.Gosched()
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("after the delay the percent is %d, want the 100 before it", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("after the delay the limit is %d, want none", l)
	}
}

func TestStopRestoresAndTheEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Start(64 << 20)
	Stop()
	if p := debug.SetGCPercent(100); p == -1 {
		t.Error("Stop left collection off")
	}
	Stop() // a second Stop, or the cleanup after it, changes nothing
	t.Setenv("GOGC", "50")
	Start(64 << 20)
	mu.Lock()
	defer mu.Unlock()
	if armed {
		t.Error("Start ran though GOGC is set")
	}
}
