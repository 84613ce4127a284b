package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSessionFigures (OKF_SESSION_FIGURES=1; docs/serve.md): okf serve
// on the fixture's store while clients open 20,000 MCP sessions over
// streamable HTTP and abandon each after initialize, first all with one
// token, then spread over 100 tokens; it logs the server's RSS after each.
func TestSessionFigures(t *testing.T) {
	if os.Getenv("OKF_SESSION_FIGURES") != "1" {
		t.Skip("set OKF_SESSION_FIGURES=1 to measure okf serve's memory under abandoned MCP sessions")
	}
	const sessions, workers = 20_000, 8
	data := t.TempDir()
	seedStore(t, data).Close()
	cfg := filepath.Join(data, "okf.yaml")
	if err := os.WriteFile(cfg, []byte("serve:\n  rate_limit: 1000000\n  burst: 1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for i := range 100 {
		tok, err := MintToken(filepath.Join(data, TokensFile), Grant{Name: fmt.Sprintf("abandon-%d", i), Tenant: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	srv := startServe(t, okfBinary(t), "--data", data, "--config", cfg)
	t.Logf("idle: RSS %d MiB", currentRSS(t, srv.cmd.Process.Pid)>>20)
	open := func(token string) (string, error) {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abandon","version":"1"}}}`
		req, _ := http.NewRequest("POST", "http://"+srv.addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("initialize: %s", resp.Status)
		}
		return resp.Header.Get("Mcp-Session-Id"), nil
	}
	for _, run := range []struct {
		name   string
		tokens []string
	}{{"one token", tokens[:1]}, {"100 tokens", tokens}} {
		var (
			next, failed atomic.Int64
			wg           sync.WaitGroup
		)
		for range workers {
			wg.Go(func() {
				for i := next.Add(1); i <= sessions; i = next.Add(1) {
					if _, err := open(run.tokens[int(i)%len(run.tokens)]); err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%s: %d sessions opened and abandoned (%d refused): RSS %d MiB, peak %d MiB", run.name, sessions,
			failed.Load(), currentRSS(t, srv.cmd.Process.Pid)>>20, peakRSS(t, srv.cmd.Process.Pid)>>20)
	}
	// A silent client: headers promising a body, then nothing, on /mcp and
	// the JSON API, against the default read timeout.
	for _, path := range []string{"/mcp", "/v1/acme/sql"} {
		conn, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n", path, srv.addr, tokens[0])
		conn.SetReadDeadline(time.Now().Add(5 * time.Minute))
		status, _ := bufio.NewReader(conn).ReadString('\n')
		t.Logf("silent client on %s: answered %q after %.1f s", path, strings.TrimSpace(status), time.Since(start).Seconds())
		conn.Close()
	}
}

// currentRSS reads a process's resident set size (VmRSS), in bytes.
func currentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Logf("RSS unknown: %v", err)
		return 0
	}
	var kb int64
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), "kB"), &kb)
		}
	}
	return kb << 10
}
