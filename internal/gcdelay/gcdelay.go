// Package gcdelay holds the garbage collector off while a process's heap is
// small, then hands it back to GOGC. Most okf commands are short processes
// over small inputs (validate a bundle, compile a folder, run a query); on
// two cores the collections the default policy starts at a 4 MB heap cost
// them a tenth to a fifth of their CPU time (BENCHMARKS.md, issue 17) to
// free memory that the process gives back anyway when it exits. It also
// holds a server's collector policy (ForServer): the binary's, not the
// knowledge engine's.
package gcdelay

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

var (
	mu      sync.Mutex
	armed   bool
	percent int   // the GOGC percent to restore
	limit   int64 // the memory limit to restore
)

// Start turns collection off until the runtime's memory reaches heap
// bytes (as GOMEMLIMIT counts it); the first collection then restores the
// collector's percent and limit. It does nothing when the environment sets
// GOGC or GOMEMLIMIT, or when a delay is already running.
func Start(heap int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if armed {
		return
	}
	armed = true
	limit = debug.SetMemoryLimit(heap)
	percent = debug.SetGCPercent(-1)
	// The sentinel is unreachable once Start returns, so its cleanup runs
	// after the first collection. It holds a pointer so that it is never
	// batched into a tiny allocation, whose cleanups may not run.
	sentinel := &struct{ p *byte }{}
	runtime.AddCleanup(sentinel, func(struct{}) { Stop() }, struct{}{})
}

// Stop ends the delay Start began, if it is still running, restoring the
// collector as it was: for a process about to set its own policy (okf
// serve) and for the first collection.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if !armed {
		return
	}
	armed = false
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}

// ServerPercent is the collector setting a server runs with unless GOGC
// is set. A server holds a large heap that rarely changes (snapshots and
// their indexes) and allocates little per request, so collecting at 50%
// growth instead of Go's default 100% keeps its peak memory lower for
// little CPU; the figures are in BENCHMARKS.md.
const ServerPercent = 50

// ForServer ends the start-up delay and applies ServerPercent unless the
// environment sets GOGC: for okf serve and okf mcp, long processes.
func ForServer() {
	Stop()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(ServerPercent)
	}
}
