package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioPeer is a client of ServeStdio over pipes, reading each line the
// server writes as a JSON-RPC message.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	got  chan rpcReply
	done chan error // ServeStdio's result
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func startStdio(t *testing.T, srv *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, got: make(chan rpcReply, 256), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		p.done <- srv.ServeStdio(ctx, "acme", inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(p.got)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m rpcReply
				if json.Unmarshal(line, &m) != nil {
					m.raw = "not JSON: " + string(line)
				} else {
					m.raw = string(line)
				}
				p.got <- m
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing to okf's standard input: %v", err)
	}
}

// next is the next message the server wrote; the deadline only keeps a
// broken server from hanging the test.
func (p *stdioPeer) next() rpcReply {
	p.t.Helper()
	select {
	case m, ok := <-p.got:
		if !ok {
			p.t.Fatalf("the server's output ended (ServeStdio: %v)", <-p.done)
		}
		return m
	case <-time.After(20 * time.Second):
		p.t.Fatal("no answer from the server")
	}
	return rpcReply{}
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := p.next(); m.Result == nil {
		p.t.Fatalf("initialize: %s", m.raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestStdioMalformedLines sends okf mcp's standard input one malformed
// line after another, each followed by a ping: every bad line gets a
// JSON-RPC error (with its id when it has a valid one), every ping its
// answer, and the session serves to the end of the input, where
// ServeStdio returns nil.
func TestStdioMalformedLines(t *testing.T) {
	const limit = 64 << 10
	f := newFixture(t, fixtureOptions{maxBytes: limit})
	p := startStdio(t, f.srv)
	p.initialize()
	for i, tc := range []struct {
		name, line string
		code       int    // 0: a result
		id         string // the id the answer carries
		msg        string
	}{
		{"not JSON", `{not json`, codeParseError, "null", "not valid JSON"},
		{"cut short", `{"jsonrpc":"2.0","id":7,"method":"ping"`, codeParseError, "null", "not valid JSON"},
		{"a number", `42`, codeInvalidRequest, "null", "must be a JSON object"},
		{"a string", `"ping"`, codeInvalidRequest, "null", "must be a JSON object"},
		{"null", `null`, codeInvalidRequest, "null", "must be a JSON object"},
		{"an empty batch", `[]`, codeInvalidRequest, "null", "batches are not taken"},
		{"a batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, codeInvalidRequest, "null", "batches are not taken"},
		{"no jsonrpc", `{"id":7,"method":"ping"}`, codeInvalidRequest, "7", `"jsonrpc" must be "2.0"`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"x","method":"ping"}`, codeInvalidRequest, `"x"`, `"jsonrpc" must be "2.0"`},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, codeInvalidRequest, "null", "must be a string or a whole number"},
		{"an array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, codeInvalidRequest, "null", "must be a string or a whole number"},
		{"a boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, codeInvalidRequest, "null", "must be a string or a whole number"},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, codeInvalidRequest, "null", "whole number"},
		{"a huge id", `{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, codeInvalidRequest, "null", "at most 2^53"},
		{"a number method", `{"jsonrpc":"2.0","id":8,"method":5}`, codeInvalidRequest, "8", `"method" must be a non-empty string`},
		{"string params", `{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}`, codeInvalidRequest, "9", `"params" must be an object or an array`},
		{"a response without id", `{"jsonrpc":"2.0","result":{}}`, codeInvalidRequest, "null", "needs an id"},
		{"a response with a bad error", `{"jsonrpc":"2.0","id":10,"error":"bad"}`, codeInvalidRequest, "null", `"error" must be an object`},
		{"nested too deep", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, codeInvalidRequest, "null", "nests more than 1000 levels"},
		{"over the line limit", `{"jsonrpc":"2.0","id":12,"method":"ping","params":{"pad":"` + strings.Repeat("x", limit) + `"}}`, codeInvalidRequest, "null", "it was skipped"},
		{"an unknown method", `{"jsonrpc":"2.0","id":13,"method":"nope"}`, -32601, "13", "nope"},
		{"a tool call with bad arguments", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":5}}`, -32602, "14", ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", 0, "15", ""},
		{"null params", `{"jsonrpc":"2.0","id":17,"method":"ping","params":null}`, 0, "17", ""},
		{"an unknown member", `{"jsonrpc":"2.0","id":18,"method":"ping","extra":[1]}`, 0, "18", ""},
		{"a line ending in CRLF", `{"jsonrpc":"2.0","id":16,"method":"ping"}` + "\r", 0, "16", ""},
	} {
		p.send(tc.line)
		m := p.next()
		switch {
		case tc.code == 0 && m.Result == nil:
			t.Errorf("%s: answered %s, want a result", tc.name, m.raw)
		case tc.code != 0 && (m.Error == nil || m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.msg)):
			t.Errorf("%s: answered %s, want error %d saying %q", tc.name, m.raw, tc.code, tc.msg)
		case string(m.ID) != tc.id:
			t.Errorf("%s: answered with id %s, want %s: %s", tc.name, m.ID, tc.id, m.raw)
		}
		// A blank line is no message and gets no answer.
		p.send("  ")
		ping := fmt.Sprintf(`"ping-%d"`, i)
		p.send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
		if m := p.next(); string(m.ID) != ping || m.Result == nil {
			t.Fatalf("after %s, the ping was answered %s", tc.name, m.raw)
		}
	}
	p.in.Close()
	if err := <-p.done; err != nil {
		t.Errorf("ServeStdio at the end of the input: %v", err)
	}
}

// TestStdioAnswersEveryRequestAtEOF: requests written just before the
// client closes okf mcp's standard input are all answered, with results,
// before ServeStdio returns nil.
func TestStdioAnswersEveryRequestAtEOF(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	p := startStdio(t, f.srv)
	p.initialize()
	const calls = 24
	for i := range calls {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"context","arguments":{"question":"Which active customers ordered in %d?"}}}`, i, 2000+i))
	}
	p.in.Close()
	answered := map[string]bool{}
	for m := range p.got {
		if m.Result == nil {
			t.Errorf("answer without a result: %s", m.raw)
		}
		answered[string(m.ID)] = true
	}
	if err := <-p.done; err != nil {
		t.Errorf("ServeStdio at the end of the input: %v", err)
	}
	for i := range calls {
		if !answered[fmt.Sprint(i)] {
			t.Errorf("request %d was not answered (%d of %d were)", i, len(answered), calls)
		}
	}
}
