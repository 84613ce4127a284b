package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/okf-tools/okf/serve/oauth/oauthtest"
)

// EnvRequireNode makes a missing Node.js a test failure instead of a loud
// skip; CI sets it.
const EnvRequireNode = "OKF_REQUIRE_NODE"

// clientDir holds the node MCP client and its locked dependencies.
const clientDir = "testdata/mcpclient"

// nodeClient returns the node binary once the client's dependencies are
// installed (npm ci, only when they are not), skipping the test loudly
// when Node.js is missing unless OKF_REQUIRE_NODE=1.
func nodeClient(t *testing.T) string {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNPM := exec.LookPath("npm")
	if errNode != nil || errNPM != nil {
		msg := "SKIP: node and npm are needed for the MCP client test (set " + EnvRequireNode + "=1 to make this a failure)"
		if os.Getenv(EnvRequireNode) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = clientDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", clientDir, err, out)
		}
	}
	return node
}

// okfBinary builds cmd/okf into the test's temporary folder (linked from
// the build cache after the first time).
func okfBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	path := filepath.Join(t.TempDir(), "okf")
	cmd := exec.Command(goBin, "build", "-o", path, "github.com/okf-tools/okf/cmd/okf")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building okf: %v\n%s", err, out)
	}
	return path
}

// e2eData writes a data folder (the store, a tokens file) and an okf.yaml
// giving acme the shop database; it returns the folder, the configuration
// and acme's read token.
func e2eData(t *testing.T) (data, cfg, token string) {
	t.Helper()
	data = t.TempDir()
	seedStore(t, data).Close()
	db := shopDB(t, data)
	cfg = filepath.Join(data, "okf.yaml")
	yaml := fmt.Sprintf(`databases:
  - name: shop
    dsn: sqlite:%s
    bundle: bundles/sales
    guard:
      denied_columns: [orders.secret_note]
serve:
  tenants:
    - name: acme
      databases: [shop]
  rate_limit: 100000
  burst: 100000
`, db)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	token, err := MintToken(filepath.Join(data, TokensFile), Grant{Name: "e2e", Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return data, cfg, token
}

// server is an okf serve process.
type server struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	logs bytes.Buffer
}

// startServe runs okf serve on a free loopback port and waits until it
// listens.
func startServe(t *testing.T, okf string, args ...string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(okf, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "okf serve: listening on http://"); ok {
				addr, _, _ := strings.Cut(rest, " ")
				ready <- addr
			}
		}
		close(ready)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
	})
	addr, ok := <-ready
	if !ok {
		s.cmd.Wait()
		t.Fatalf("okf serve did not start:\n%s", s.log())
	}
	s.addr = addr
	return s
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// e2eReport is what the node client prints.
type e2eReport struct {
	Server struct{ Name, Version string }
	Tools  []struct {
		Name, Description string
		ReadOnly          bool
	}
	Calls []struct {
		Tool    string
		IsError bool
		Text    string
	}
	Resource struct {
		URI, MimeType, Text string
	}
}

// e2eCalls call every tool once, run_sql twice (a query and an attack)
// and values as a model would.
var e2eCalls = []map[string]any{
	{"tool": "manifest", "arguments": map[string]any{}},
	{"tool": "search", "arguments": map[string]any{"query": "active customer", "k": 2}},
	{"tool": "get", "arguments": map[string]any{"ids": []string{"tables/orders#schema", "nope"}}},
	{"tool": "context", "arguments": map[string]any{"question": "Which customers are active?", "budget": 800}},
	{"tool": "list_databases", "arguments": map[string]any{}},
	{"tool": "run_sql", "arguments": map[string]any{"database": "shop", "sql": "SELECT count(*) AS n FROM orders WHERE custref = 10"}},
	{"tool": "run_sql", "arguments": map[string]any{"database": "shop", "sql": "DROP TABLE orders"}},
	// The stored spelling: in lower case, misspelt; a hidden column; a
	// value longer than the cap.
	{"tool": "values", "arguments": map[string]any{"database": "shop", "column": "carriers.name", "text": "parcelco"}},
	{"tool": "values", "arguments": map[string]any{"database": "shop", "column": "carriers.name", "text": "Swfit Post"}},
	{"tool": "values", "arguments": map[string]any{"database": "shop", "column": "orders.secret_note", "text": "vip"}},
	{"tool": "values", "arguments": map[string]any{"database": "shop", "column": "carriers.name", "text": "xxxxx"}},
}

func runNodeClient(t *testing.T, node string, env []string, args ...string) e2eReport {
	t.Helper()
	return runNodeCalls(t, node, env, e2eCalls, args...)
}

func runNodeCalls(t *testing.T, node string, env []string, list []map[string]any, args ...string) e2eReport {
	t.Helper()
	calls, _ := json.Marshal(list)
	cmd := exec.Command(node, append([]string{"client.mjs"}, args...)...)
	cmd.Dir = clientDir
	cmd.Env = append(os.Environ(), append(env, "OKF_CALLS="+string(calls))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client %v: %v\n%s", args, err, stderr.String())
	}
	var r e2eReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	return r
}

// checkReport checks what the node client saw, whatever the transport.
func checkReport(t *testing.T, how string, r e2eReport) {
	t.Helper()
	if r.Server.Name != "okf" {
		t.Errorf("%s: server = %+v", how, r.Server)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		if !tool.ReadOnly {
			t.Errorf("%s: %s has no read-only hint", how, tool.Name)
		}
	}
	if got := strings.Join(names, " "); got != "context get list_databases manifest run_sql search values" {
		t.Errorf("%s: tools = %s", how, got)
	}
	want := []struct {
		isError bool
		has     string
	}{
		{false, "knowledge/old-margin\tsales\tbusiness_rule\tstale\t"},
		{false, "knowledge/active-customer\tsales\t"},
		{false, "@@ sales/tables/orders#schema [0.."},
		{false, "Active Customer"},
		{false, "shop\tsqlite\tsales\tall\n"},
		{false, "n\n2\n(1 row)"},
		{true, "refused by the validator"},
		{false, "<values>\n'ParcelCo'\n"},
		{false, "<values>\n'Swift Post'\n"},
		{true, "secret_note"},
		{false, "[cut at 200 characters]"},
	}
	if len(r.Calls) != len(want) {
		t.Fatalf("%s: %d calls answered, want %d", how, len(r.Calls), len(want))
	}
	for i, w := range want {
		c := r.Calls[i]
		if c.IsError != w.isError || !strings.Contains(c.Text, w.has) {
			t.Errorf("%s: %s: error %v, text %q; want error %v and %q", how, c.Tool, c.IsError, c.Text, w.isError, w.has)
		}
	}
	if !strings.HasSuffix(r.Calls[2].Text, "@@ missing nope\n") {
		t.Errorf("%s: get did not list the missing id: %q", how, r.Calls[2].Text)
	}
	if r.Resource.URI != ManifestURI || r.Resource.MimeType != "text/tab-separated-values" || r.Resource.Text != r.Calls[0].Text {
		t.Errorf("%s: resource = %+v", how, r.Resource)
	}
}

// TestNodeClient drives okf mcp (stdio) and okf serve (streamable HTTP)
// with the official TypeScript SDK's client from npm.
func TestNodeClient(t *testing.T) {
	node := nodeClient(t)
	okf := okfBinary(t)
	data, cfg, token := e2eData(t)

	r := runNodeClient(t, node, nil, "stdio", okf, "mcp", "--data", data, "--tenant", "acme", "--config", cfg)
	checkReport(t, "stdio", r)

	srv := startServe(t, okf, "--data", data, "--config", cfg)
	mustContain(t, "okf serve's log", srv.log(), "tenant acme: snapshot ", "read it whole once")
	r = runNodeClient(t, node, []string{"OKF_TOKEN=" + token}, "http", "http://"+srv.addr+"/mcp")
	checkReport(t, "http", r)

	// A wrong token is refused before any MCP message is read.
	cmd := exec.Command(node, "client.mjs", "http", "http://"+srv.addr+"/mcp")
	cmd.Dir = clientDir
	cmd.Env = append(os.Environ(), "OKF_TOKEN=wrong-token-wrong-token-wrong")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "401") {
		t.Errorf("the node client with a wrong token: %v\n%s", err, out)
	}

	// The server stops cleanly on an interrupt.
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("okf serve exited with %v:\n%s", err, srv.log())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("okf serve did not stop on an interrupt:\n%s", srv.log())
	}
}

// TestServeWatch runs okf serve --watch and edits the folder: the next
// search over the API sees the change, and writes are refused. The tokens
// file also grants another tenant, which the folder is not: okf serve
// warns and serves the folder's tenant.
func TestServeWatch(t *testing.T) {
	okf := okfBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sales", "orders.md"), "---\ntype: Table\ndescription: Orders.\n---\nOne row per order.\n")
	tokens := filepath.Join(t.TempDir(), TokensFile)
	token, err := MintToken(tokens, Grant{Name: "watcher", Tenant: "acme", Write: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := MintToken(tokens, Grant{Name: "globex-reader", Tenant: "globex"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, okf, "--watch", dir, "--tenant", "acme", "--tokens", tokens, "--debounce", "50ms",
		"--config", filepath.Join(dir, "none.yaml"))
	mustContain(t, "okf serve's log", srv.log(), "warn: tenant globex is not served ("+dir+" is served as tenant acme, --tenant): ignoring its tokens globex-reader")
	globex, _ := http.NewRequest("GET", "http://"+srv.addr+"/v1/globex/manifest", nil)
	globex.Header.Set("Authorization", "Bearer "+other)
	if resp, err := http.DefaultClient.Do(globex); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("another tenant's token on a folder: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	search := func() string {
		req, _ := http.NewRequest("GET", "http://"+srv.addr+"/v1/acme/search?q=refund", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if strings.Contains(search(), "refunds") {
		t.Fatal("found refunds before they were written")
	}
	writeFile(t, filepath.Join(dir, "sales", "refunds.md"), "---\ntype: Table\ndescription: Refunds.\n---\nOne row per refund.\n")
	// The deadline only keeps a broken watcher from hanging the test.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(search(), `"id":"refunds"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the search never saw the new file; server log:\n%s", srv.log())
		}
	}
	mustContain(t, "okf serve's log", srv.log(), "watch: snapshot ")

	req, _ := http.NewRequest("PUT", "http://"+srv.addr+"/v1/acme/source/sales/x.md", strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("If-None-Match", "*")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a write to a watched folder: %d, want 409", resp.StatusCode)
	}
}

// TestNodeClientOAuth: the npm MCP client connects to okf serve with an
// access token of an issuer okf trusts, and reads and queries as a token
// okf minted would; an expired one, and one signed by another key, get 401
// and reach no tool.
func TestNodeClientOAuth(t *testing.T) {
	node := nodeClient(t)
	okf := okfBinary(t)
	data, cfg, _ := e2eData(t)
	is := oauthtest.Start(t)
	const resource = "http://okf.test/mcp"
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "  oauth:\n    issuer: %s\n    audience: %s\n    tenant: acme\n", is.URL, resource)
	f.Close()
	srv := startServe(t, okf, "--data", data, "--config", cfg)
	now := time.Now()
	claims := func(exp time.Time) map[string]any {
		return map[string]any{"iss": is.URL, "aud": resource, "sub": "ana", "exp": exp.Unix()}
	}
	r := runNodeClient(t, node, []string{"OKF_TOKEN=" + is.Mint(t, claims(now.Add(time.Hour)), oauthtest.Token{Alg: "ES256"})}, "http", "http://"+srv.addr+"/mcp")
	checkReport(t, "oauth", r)
	for name, token := range map[string]string{
		"expired":   is.Mint(t, claims(now.Add(-time.Hour)), oauthtest.Token{}),
		"wrong key": is.Mint(t, claims(now.Add(time.Hour)), oauthtest.Token{ForeignKey: true}),
	} {
		cmd := exec.Command(node, "client.mjs", "http", "http://"+srv.addr+"/mcp")
		cmd.Dir = clientDir
		cmd.Env = append(os.Environ(), "OKF_TOKEN="+token, `OKF_CALLS=[{"tool":"list_databases","arguments":{}}]`)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "401") || strings.Contains(string(out), "shop") {
			t.Errorf("the node client with an %s token: %v\n%s", name, err, out)
		}
	}
	if !strings.Contains(srv.log(), "acme") {
		t.Errorf("okf serve's log:\n%s", srv.log())
	}
}
