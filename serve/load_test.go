package serve

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/synth"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
)

// Load test knobs: OKF_LOAD_SECONDS (default 2; BENCHMARKS.md uses 60),
// OKF_LOAD_CLIENTS (default 32) and OKF_LOAD_CONCEPTS (default 2000).
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

// TestLoad runs okf serve on loopback with a synthetic catalogue and has
// clients call a mix of search (50%), get (30%) and context (20%) for a
// fixed time, first each with its own MCP session over streamable HTTP,
// then through the JSON API. It reports throughput, latency percentiles,
// errors and the server's peak RSS, and fails on any error.
func TestLoad(t *testing.T) {
	concepts := envInt(t, "OKF_LOAD_CONCEPTS", 2000)
	bundles := map[string]map[string][]byte{}
	for _, d := range synth.Generate(concepts, 1) {
		if bundles[d.Bundle] == nil {
			bundles[d.Bundle] = map[string][]byte{}
		}
		bundles[d.Bundle][d.Path] = d.Content
	}
	srv, token := loadServer(t, bundles)

	// The ids to read come from the manifest, as an agent's would.
	manifest, _ := call(t, mcpClient(t, srv.addr, token), "manifest", map[string]any{"bundle": "b000"})
	var ids []string
	for _, line := range strings.Split(manifest, "\n")[3:] {
		if id, _, ok := strings.Cut(line, "\t"); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no ids in the manifest:\n%.500s", manifest)
	}
	words := []string{"sales", "finance", "orders", "customers", "invoices", "payments", "refunds", "daily", "revenue",
		"region", "status", "currency", "amount", "net", "gross", "tax", "pipeline", "late", "arriving", "events"}
	loadRun(t, srv, token, fmt.Sprintf("%d concepts", concepts), func(r *rand.Rand) (string, map[string]any) {
		q := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		switch n := r.IntN(10); {
		case n < 5:
			return "search", map[string]any{"query": q}
		case n < 8:
			return "get", map[string]any{"ids": []string{ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]}, "section": "schema"}
		}
		return "context", map[string]any{"question": "total " + q + " by region"}
	})
}

// TestContextLoad serves every database of ../shared/data (the eight
// LiveSQLBench databases and BIRD superhero, 539 concepts) as one tenant
// and has the clients ask only for context packs of the LiveSQLBench train
// questions, naming no bundle, as agents on a shared server would.
func TestContextLoad(t *testing.T) {
	bundles, qs := sharedTenant(t)
	srv, token := loadServer(t, bundles)
	loadRun(t, srv, token, "the shared tenant", func(r *rand.Rand) (string, map[string]any) {
		return "context", map[string]any{"question": qs[r.IntN(len(qs))].Text}
	})
}

// sharedTenant compiles every database of ../shared/data that okf compile
// reads into bundles, and reads the LiveSQLBench train questions.
func sharedTenant(tb testing.TB) (map[string]map[string][]byte, []eval.Question) {
	tb.Helper()
	bundles := map[string]map[string][]byte{}
	for _, b := range compiletest.Shared(tb, "livesqlbench/base-lite", "bird") {
		bundles[b.Name] = b.Files
	}
	qs, err := eval.LoadQuestions(shareddata.Dir(tb, "livesqlbench", "questions", "lite_7db_train.jsonl"), shareddata.Dir(tb, "livesqlbench", "questions", "lite_3db_train.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return bundles, qs
}

// BenchmarkAPIContextShared is one JSON API context call on the shared
// tenant, in process: what TestContextLoad's server spends a call, without
// the loopback network and the clients.
func BenchmarkAPIContextShared(b *testing.B) {
	bundles, qs := sharedTenant(b)
	var docs []readmodel.Doc
	for _, name := range slices.Sorted(maps.Keys(bundles)) {
		for _, p := range slices.Sorted(maps.Keys(bundles[name])) {
			docs = append(docs, readmodel.Doc{Bundle: name, Path: p, Content: bundles[name][p]})
		}
	}
	lib, _ := engine.NewFolderLibrary("load", docs)
	g, err := NewGrant("load", "load", false, "load-token-0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Library: lib, Grants: []Grant{g}, RateLimit: 1e9, Burst: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	ask := func(i int) {
		r := httptest.NewRequest(http.MethodGet, "/v1/load/context?"+url.Values{"q": {qs[i%len(qs)].Text}}.Encode(), nil)
		r.Header.Set("Authorization", "Bearer load-token-0123456789abcdef")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%d: %s", w.Code, w.Body)
		}
	}
	for i := range qs {
		ask(i)
	}
	i := 0
	for b.Loop() {
		ask(i)
		i++
	}
}

// loadServer imports bundles as the tenant "load" into a fresh embedded
// store and starts okf serve on it with no rate limit; it returns the
// server and a read token.
func loadServer(t *testing.T, bundles map[string]map[string][]byte) (*server, string) {
	t.Helper()
	okf := okfBinary(t)
	data := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(ctx, "load", bundles, "load test"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cfg := filepath.Join(data, "okf.yaml")
	if err := os.WriteFile(cfg, []byte("serve:\n  rate_limit: 1000000\n  burst: 1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	token, err := MintToken(filepath.Join(data, TokensFile), Grant{Name: "load", Tenant: "load"})
	if err != nil {
		t.Fatal(err)
	}
	return startServe(t, okf, "--data", data, "--config", cfg), token
}

// loadRun has OKF_LOAD_CLIENTS clients call what pick draws for
// OKF_LOAD_SECONDS, first each with its own MCP session, then through the
// JSON API, and logs what they got.
func loadRun(t *testing.T, srv *server, token, tenant string, pick func(*rand.Rand) (string, map[string]any)) {
	seconds := envInt(t, "OKF_LOAD_SECONDS", 2)
	clients := envInt(t, "OKF_LOAD_CLIENTS", 32)
	ctx := context.Background()
	// Each transport turns a call into one request; "" means it succeeded.
	viaMCP := func() func(string, map[string]any) string {
		cs := mcpClient(t, srv.addr, token)
		return func(tool string, args map[string]any) string {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			switch {
			case err != nil:
				return err.Error()
			case res.IsError:
				return fmt.Sprint(res.Content)
			}
			return ""
		}
	}
	viaAPI := func() func(string, map[string]any) string {
		client := &http.Client{Transport: bearer{token, &http.Transport{MaxIdleConnsPerHost: 4}}}
		return func(tool string, args map[string]any) string {
			q := url.Values{}
			for name, v := range args {
				param := map[string]string{"query": "q", "question": "q", "ids": "id"}[name]
				if param == "" {
					param = name
				}
				switch v := v.(type) {
				case string:
					q.Set(param, v)
				case []string:
					q[param] = v
				default:
					return fmt.Sprintf("%s: argument %s is %T", tool, name, v)
				}
			}
			resp, err := client.Get("http://" + srv.addr + "/v1/load/" + tool + "?" + q.Encode())
			if err != nil {
				return err.Error()
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				return err.Error()
			}
			if resp.StatusCode != http.StatusOK {
				return resp.Status
			}
			return ""
		}
	}

	for _, via := range []struct {
		name    string
		connect func() func(string, map[string]any) string
	}{{"mcp", viaMCP}, {"api", viaAPI}} {
		t.Run(via.name, func(t *testing.T) {
			type sample struct {
				op  string
				dur time.Duration
				err string
			}
			var (
				mu      sync.Mutex
				samples []sample
				wg      sync.WaitGroup
			)
			callers := make([]func(string, map[string]any) string, clients)
			for c := range callers {
				callers[c] = via.connect()
			}
			deadline := time.Now().Add(time.Duration(seconds) * time.Second)
			cpu0 := cpuTime(t, srv.cmd.Process.Pid)
			start := time.Now()
			for c, do := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(c), 7))
					var local []sample
					for time.Now().Before(deadline) {
						tool, args := pick(r)
						t0 := time.Now()
						msg := do(tool, args)
						local = append(local, sample{op: tool, dur: time.Since(t0), err: msg})
					}
					mu.Lock()
					samples = append(samples, local...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			cpu := cpuTime(t, srv.cmd.Process.Pid) - cpu0

			var durs []time.Duration
			byOp := map[string]int{}
			errs := map[string]int{}
			for _, s := range samples {
				durs = append(durs, s.dur)
				byOp[s.op]++
				if s.err != "" {
					errs[s.err]++
				}
			}
			if len(durs) == 0 {
				t.Fatal("no call was made")
			}
			slices.Sort(durs)
			pct := func(p float64) time.Duration { return durs[min(len(durs)-1, int(p*float64(len(durs))))] }
			// The clients share the cores with the server: what the server
			// spent a call says what it serves with the cores to itself.
			t.Logf("load via %s: %d clients, %s, %.1f s: %d calls (search %d, get %d, context %d), %.0f calls/s, p50 %v, p99 %v, max %v, errors %d; server CPU %.2f s, %.2f ms a call (%.0f calls/s on %d cores of its own), peak RSS so far %d MiB",
				via.name, clients, tenant, elapsed.Seconds(), len(durs), byOp["search"], byOp["get"], byOp["context"],
				float64(len(durs))/elapsed.Seconds(), pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond),
				durs[len(durs)-1].Round(10*time.Microsecond), sum(errs), cpu.Seconds(), 1000*cpu.Seconds()/float64(len(durs)),
				float64(runtime.NumCPU())*float64(len(durs))/cpu.Seconds(), runtime.NumCPU(), peakRSS(t, srv.cmd.Process.Pid)>>20)
			for e, n := range errs {
				t.Errorf("%d calls failed: %s", n, e)
			}
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// mcpClient opens an MCP session with okf serve at addr.
func mcpClient(t *testing.T, addr, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{
		Endpoint:             "http://" + addr + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{token, &http.Transport{MaxIdleConnsPerHost: 4}}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "okf-load"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// cpuTime reads the user and system CPU time a process has used (Linux),
// or 0.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Logf("CPU time unknown: %v", err)
		return 0
	}
	// The fields after the command, which is bracketed and may hold
	// spaces: utime and stime are the 12th and 13th, in clock ticks (100
	// a second on Linux).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// peakRSS reads a process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Logf("peak RSS unknown: %v", err)
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestServeMemoryBound (OKF_MEMORY_BOUND=1; BENCHMARKS.md): okf serve with a
// PostgreSQL table of 100 rows of 16 MB each, which 8 clients read whole at
// once through the JSON API. Every row is read, each value is cut to
// sqlguard.MaxCellBytes and the result to sqlguard.MaxResultBytes, so the
// server's peak RSS stays under the bound docs/security.md gives.
func TestServeMemoryBound(t *testing.T) {
	if os.Getenv("OKF_MEMORY_BOUND") != "1" {
		t.Skip("set OKF_MEMORY_BOUND=1 to measure okf serve's peak memory under huge results")
	}
	const clients = 8
	ctx := context.Background()
	admin := pgtest.Shared(t).NewDatabase(t)
	if err := pgExec(ctx, admin, `CREATE TABLE big (id int, v text);
INSERT INTO big SELECT i, repeat(md5(i::text), 500000) FROM generate_series(1, 100) i`); err != nil {
		t.Fatal(err)
	}
	agent := strings.Replace(admin, "postgres@", fmt.Sprintf("okf_big_%d:agentpw@", time.Now().UnixNano()), 1)
	if _, err := sqlguard.PreparePostgres(ctx, admin, agent, sqlguard.Options{}); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	seedStore(t, data).Close()
	cfg := filepath.Join(data, "okf.yaml")
	yaml := fmt.Sprintf("databases:\n  - name: big\n    dsn: %s\n    guard:\n      max_conns: %d\n      timeout: 2m\nserve:\n  tenants:\n    - name: acme\n      databases: [big]\n", agent, clients)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	token, err := MintToken(filepath.Join(data, TokensFile), Grant{Name: "big", Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, okfBinary(t), "--data", data, "--config", cfg)
	idle := peakRSS(t, srv.cmd.Process.Pid)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for range clients {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", "http://"+srv.addr+"/v1/acme/sql", strings.NewReader(`{"database":"big","sql":"SELECT id, v FROM big"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"total":100`) {
				errs <- fmt.Errorf("%d %.200s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	peak := peakRSS(t, srv.cmd.Process.Pid)
	bound := int64(memoryBaseBytes) + clients*int64(sqlguard.QueryMemoryBytes)
	t.Logf("%d clients each read 100 rows of 16 MB in %v: peak RSS %d MB (idle %d MB); bound %d MB",
		clients, time.Since(start).Round(time.Millisecond), peak>>20, idle>>20, bound>>20)
	if peak > bound {
		t.Errorf("peak RSS %d MB is over the bound of %d MB", peak>>20, bound>>20)
	}
}

// memoryBaseBytes is okf serve's own memory before any query: the read
// model, the servers, the runtime.
const memoryBaseBytes = 64 << 20
