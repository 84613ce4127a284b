package engine

import (
	"os"
	"runtime/debug"

	"github.com/okf-tools/okf/internal/gcdelay"
)

// GCPercent is the collector setting a server runs with unless GOGC is
// set. A server holds a large heap that rarely changes (snapshots and their
// indexes) and allocates little per request, so collecting at 50% growth
// instead of Go's default 100% keeps its peak memory lower for little CPU;
// the figures are in BENCHMARKS.md.
const GCPercent = 50

// TuneGC applies GCPercent unless the environment sets GOGC, ending the
// start-up delay of the collector that short commands run with.
func TuneGC() {
	gcdelay.Stop()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
