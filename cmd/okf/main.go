// Command okf compiles database documentation into OKF knowledge bundles,
// validates them, and serves them to SQL agents. See "okf --help".
package main

import (
	"os"

	"github.com/okf-tools/okf/internal/cli"
	"github.com/okf-tools/okf/internal/gcdelay"
	// DuckDB's engine for the SQL guard and its catalog reader for okf
	// compile (duckdb: DSNs), linked here alone so that the packages'
	// tests do not link DuckDB.
	_ "github.com/okf-tools/okf/compile/catalog/duckdb"
	_ "github.com/okf-tools/okf/sqlguard/duckdb"
)

// startHeap is the heap below which okf does not collect: more than a
// command over a bundle or a query needs (BENCHMARKS.md, issue 17), so
// most runs never collect, and a server or a large import collects as
// GOGC says from its first collection on.
const startHeap = 32 << 20

func main() {
	gcdelay.Start(startHeap)
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
