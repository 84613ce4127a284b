package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every package linked into okf is initialised before any command runs,
// so what a package builds at init, okf version and every other command
// pay for (issue 17). okf's own packages build nothing there: their
// tables and expressions wait for first use (internal/lazy). These tests
// read the runtime's own account of initialisation (GODEBUG=inittrace=1)
// and count allocations, never time.

const module = "github.com/okf-tools/okf"

// thirdPartyBytes is what a package of another module may allocate at init
// without an entry in heavyInit.
const thirdPartyBytes = 32 << 10

// heavyInit are the dependencies that allocate more at init, and why okf
// cannot avoid them: each is imported for a command okf has.
var heavyInit = map[string]string{
	"github.com/yuin/goldmark/util": "builds its table of HTML entities; the document parser reads markdown with goldmark",
	"github.com/yuin/goldmark/parser": "builds its block and inline parser tables and the default parser; " +
		"the same",
	"github.com/google/jsonschema-go/jsonschema": "builds its meta-schemas; the MCP SDK (okf mcp, okf serve) " +
		"describes tools with it",
	"github.com/dlclark/regexp2/v2/syntax": "builds its Unicode category tables; the o200k tokenizer " +
		"(token counts in packs and manifests) splits text with regexp2",
}

// totalBytes bounds what initialisation allocates in all, every module
// together: 1.1 MB when this was written, 0.55 MB once pg_query_go's
// protobuf types were no longer linked (internal/pgast).
const totalBytes = 768 << 10

type initCost struct {
	pkg           string
	bytes, allocs int
}

// initTrace builds okf, runs it with args under GODEBUG=inittrace=1 and
// returns each initialised package's allocations.
func initTrace(t *testing.T, bin string, args ...string) []initCost {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("okf %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var out []initCost
	sc := bufio.NewScanner(bytes.NewReader(stderr.Bytes()))
	for sc.Scan() {
		// init github.com/x/y @1.2 ms, 0.03 ms clock, 1024 bytes, 12 allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		out = append(out, initCost{pkg: f[1], bytes: b, allocs: a})
	}
	if len(out) < 50 {
		t.Fatalf("read %d packages from the inittrace of okf %s, expected the runtime's hundred and more:\n%s",
			len(out), strings.Join(args, " "), stderr.String())
	}
	return out
}

func buildOkf(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "okf")
	if out, err := exec.Command(goBin, "build", "-o", bin, module+"/cmd/okf").CombinedOutput(); err != nil {
		t.Fatalf("building okf: %v\n%s", err, out)
	}
	return bin
}

func TestNoPackageWorksAtInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds okf")
	}
	bin := buildOkf(t)
	for _, args := range [][]string{{"version"}, {"--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			costs := initTrace(t, bin, args...)
			total := 0
			var heavy []string
			for _, c := range costs {
				total += c.bytes
				own := c.pkg == module || strings.HasPrefix(c.pkg, module+"/")
				switch {
				case own && c.allocs > 0:
					t.Errorf("%s allocates %d bytes in %d allocations at init: build it on first use (internal/lazy)",
						c.pkg, c.bytes, c.allocs)
				case !own && c.bytes > thirdPartyBytes:
					heavy = append(heavy, c.pkg)
					if heavyInit[c.pkg] == "" {
						t.Errorf("%s allocates %d bytes at init, more than %d: import it only where a command needs it, "+
							"or say in heavyInit why it cannot be avoided", c.pkg, c.bytes, thirdPartyBytes)
					}
				}
			}
			if total > totalBytes {
				t.Errorf("initialisation allocates %d bytes in all, more than %d", total, totalBytes)
			}
			// A package known to allocate at init guards the reading of
			// the trace.
			if !slices.Contains(heavy, "github.com/yuin/goldmark/util") {
				t.Errorf("goldmark/util does not show allocating at init: is the inittrace read right?")
			}
			sort.Strings(heavy)
			t.Logf("%d packages, %d bytes in all; above %d bytes: %v", len(costs), total, thirdPartyBytes, heavy)
		})
	}
	t.Run("dynamic symbols", func(t *testing.T) { checkDynamicSymbols(t, bin) })
}

// maxDynamicSymbols bounds the symbols okf exports to the dynamic loader:
// 476 when this was written, against 62,373 while DuckDB's link flags
// exported all of them, which the loader then searched on every start
// (internal/duckdblink).
const maxDynamicSymbols = 2000

func checkDynamicSymbols(t *testing.T, bin string) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Skipf("no dynamic symbols: %v", err)
	}
	if len(syms) > maxDynamicSymbols {
		t.Errorf("okf exports %d dynamic symbols, more than %d: is a library's -rdynamic back?", len(syms), maxDynamicSymbols)
	}
}
