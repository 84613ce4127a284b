package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/sqlshapes"
	"github.com/okf-tools/okf/sqlguard"
)

// TestServeToken mints tokens into the data directory's tokens file.
func TestServeToken(t *testing.T) {
	data := t.TempDir()
	code, out, errOut := run(t, "serve", "token", "--data", data, "--tenant", "acme", "--write")
	if code != 0 || !strings.HasPrefix(out, "okf_") || !strings.Contains(errOut, "token acme-write (read and write, tenant acme)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(data, "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), strings.TrimSpace(out)) {
		t.Error("the tokens file holds the token itself")
	}
	var doc struct {
		Tokens []struct {
			Name, Tenant string
			Write        bool
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Tokens) != 1 || doc.Tokens[0].Name != "acme-write" || !doc.Tokens[0].Write {
		t.Errorf("tokens file = %s (%v)", raw, err)
	}
	if info, err := os.Stat(filepath.Join(data, "tokens.json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode = %v (%v)", info.Mode(), err)
	}
	if code, _, errOut := run(t, "serve", "token", "--data", data, "--tenant", "acme", "--write"); code != 1 || !strings.Contains(errOut, `already has a token called "acme-write"`) {
		t.Errorf("a second token of the same name: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, "serve", "token", "--data", data, "--tenant", "Bad Name"); code != 2 || !strings.Contains(errOut, "--tenant") {
		t.Errorf("a bad tenant: exit %d, %s", code, errOut)
	}
}

// TestServeRefuses: bad invocations fail before listening, with a clear
// error and exit status 2.
func TestServeRefuses(t *testing.T) {
	data := t.TempDir()
	bundles := writeBundle(t, map[string]string{"sales/orders.md": "---\ntype: Table\n---\nOrders.\n"})
	if code, _, errOut := run(t, "serve", "--data", data); code != 2 || !strings.Contains(errOut, "no tokens") {
		t.Errorf("no tokens: exit %d, %s", code, errOut)
	}
	if code, _, _ := run(t, "serve", "token", "--data", data); code != 0 {
		t.Fatal("minting a token failed")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:7777"}, "beyond loopback"},
		{[]string{"--addr", ":7777"}, "every interface"},
		{[]string{"--addr", "127.0.0.1:7777", "--tls-cert", "c.pem"}, "give both --tls-cert and --tls-key"},
		{[]string{"--dir", bundles, "--watch", bundles}, "--dir and --watch both name a folder"},
		{[]string{"--config", writeConfig(t, "serve:\n  tokens:\n    - {name: a, token: literal-secret, tenant: acme}\n")}, "token must name an environment variable"},
		{[]string{"--config", writeConfig(t, "serve:\n  tenants:\n    - {name: acme, databases: [nope]}\n")}, `no database is called "nope"`},
		{[]string{"--config", writeConfig(t, "serve:\n  rate: 5\n")}, `unknown key "rate" in serve`},
	} {
		code, _, errOut := run(t, append([]string{"serve", "--data", data}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestMCPStdio runs okf mcp in-process on a folder and talks to it with
// the Go SDK's client over its standard input and output.
func TestMCPStdio(t *testing.T) {
	bundles := writeBundle(t, map[string]string{
		"sales/orders.md":    "---\ntype: Table\ndescription: One row per order.\n---\n# Schema\n\nordid, grossamt\n",
		"sales/customers.md": "---\ntype: Table\ndescription: One row per customer.\n---\nSee [orders](orders.md).\n",
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "--dir", bundles, "--config", filepath.Join(t.TempDir(), "none.yaml")}, inR, outW, &stderr)
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "order"}})
	if err != nil {
		t.Fatal(err)
	}
	text := toolText(t, res)
	if !strings.Contains(text, "orders\tsales\ttable\t") {
		t.Errorf("search over stdio:\n%s", text)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("okf mcp exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tenant default: snapshot ") || !strings.Contains(stderr.String(), "read it whole once") {
		t.Errorf("stderr = %s", stderr.String())
	}
}

// lockedBuffer is a stderr a test reads while the server writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPReportsAuditFailures: okf mcp says at once, on stderr, that the
// audit log could not be written, once, and goes on serving.
func TestMCPReportsAuditFailures(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	bundles := writeBundle(t, map[string]string{"heroes/hero.md": "---\ntype: Table\n---\nOne row per hero.\n"})
	cfg := writeConfig(t, fmt.Sprintf("databases:\n  - name: heroes\n    dsn: sqlite:%s\n", sqliteDB(t)))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "--dir", bundles, "--config", cfg, "--audit", "/dev/full"}, inR, outW, &stderr)
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const report = "okf: writing the audit log: write /dev/full: no space left on device"
	for i := range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_sql", Arguments: map[string]any{"database": "heroes", "sql": "SELECT count(*) FROM hero"}})
		if err != nil || res.IsError {
			t.Fatalf("run_sql %d: %v %v", i, err, res)
		}
		if n := strings.Count(stderr.String(), report); n != 1 {
			t.Errorf("after run_sql %d, stderr reports the failure %d times:\n%s", i, n, stderr.String())
		}
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("okf mcp exited %d: %s", code, stderr.String())
	}
}

// TestMCPStdioHugeQueries: run_sql over okf mcp's standard input with a
// query of every hostile shape, at the largest size the guard accepts and
// at 1 MB: each gets an answer, and okf mcp goes on serving.
func TestMCPStdioHugeQueries(t *testing.T) {
	bundles := writeBundle(t, map[string]string{"heroes/hero.md": "---\ntype: Table\ndescription: One row per hero.\n---\n# Schema\n\nid, name\n"})
	cfg := writeConfig(t, fmt.Sprintf("databases:\n  - name: heroes\n    dsn: sqlite:%s\n    guard:\n      max_sql_bytes: %d\n", sqliteDB(t), sqlguard.MaxSQLBytesLimit))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "--dir", bundles, "--config", cfg}, inR, outW, &stderr)
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sqlshapes.Shapes {
		for _, size := range []int{sqlguard.MaxSQLBytesLimit - 64, 1_000_000} {
			// A frame over okf mcp's 1 MiB line limit is refused with a
			// JSON-RPC error, so the text is cut until its JSON fits in a
			// million bytes.
			sql := s.Text(size)
			for quoted, _ := json.Marshal(sql); len(quoted) > 1_000_000; quoted, _ = json.Marshal(sql) {
				size -= size / 10
				sql = s.Text(size)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_sql", Arguments: map[string]any{"database": "heroes", "sql": sql}})
			if err != nil {
				t.Fatalf("%s at %d bytes: %v (stderr: %s)", s.Name, size, err, stderr.String())
			}
			if len(res.Content) == 0 {
				t.Errorf("%s at %d bytes: no answer", s.Name, size)
			}
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_sql", Arguments: map[string]any{"database": "heroes", "sql": "SELECT count(*) FROM hero"}})
	if err != nil || res.IsError {
		t.Fatalf("after the huge queries: %v %v", err, res)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("okf mcp exited %d: %s", code, stderr.String())
	}
}

// TestServeTokenPolicy: a token minted with --policy records it; serving it
// needs okf.yaml to define that policy.
func TestServeTokenPolicy(t *testing.T) {
	data := t.TempDir()
	code, _, errOut := run(t, "serve", "token", "--data", data, "--tenant", "acme", "--name", "support-bot", "--policy", "support")
	if code != 0 || !strings.Contains(errOut, "token support-bot (read, policy support, tenant acme)") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(data, "tokens.json"))
	if err != nil || !strings.Contains(string(raw), `"policy": "support"`) {
		t.Fatalf("tokens file %s (%v)", raw, err)
	}
	without, err := config.Parse([]byte("serve: {}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadGrants(without, "", data); err == nil || !strings.Contains(err.Error(), `token support-bot is held to policy "support", which okf.yaml does not define`) {
		t.Errorf("a policy okf.yaml lacks: %v", err)
	}
	with, err := config.Parse([]byte("policies:\n  - {name: support, masked_columns: [customers.email]}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if gs, err := loadGrants(with, "", data); err != nil || len(gs) != 1 || gs[0].Policy != "support" {
		t.Errorf("grants %+v, %v", gs, err)
	}
}
