package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one tenant over MCP on a process's standard input and
// output (newline-delimited JSON-RPC) until the client hangs up or ctx
// ends. Every line is checked before the MCP server reads it: a line that
// is not a JSON-RPC message, or is longer than MaxRequestBytes, is
// answered with a JSON-RPC error and skipped, and the session goes on.
// When the input ends, every request already read is answered first.
func (s *Server) ServeStdio(ctx context.Context, tenant string, in io.Reader, out io.Writer) error {
	srv, _, err := s.MCPServer(ctx, tenant)
	if err != nil {
		return err
	}
	c := newStdioConn(in, out, int(s.opts.MaxRequestBytes))
	// The connection passes on lines of at most the limit, re-encoded no
	// longer, so the SDK's own bound is never what stops a line.
	t := &mcp.IOTransport{Reader: c, Writer: c, MaxLineLength: 2 * c.limit}
	return srv.Run(ctx, t)
}

// stdioConn stands between standard input and output and the SDK's
// transport: it reads one line at a time, answers a malformed one itself,
// passes the others on, and tracks the requests passed on until their
// responses are written.
type stdioConn struct {
	in    *bufio.Reader // holds at most one line within the limit
	limit int
	eof   error // what ended the input, once read
	next  []byte

	wmu sync.Mutex // one message written at a time, the SDK's or ours
	out io.Writer

	mu      sync.Mutex
	changed *sync.Cond
	pending map[string]bool // ids of requests passed on and not yet answered
	werr    error           // a failed write: nothing more can be answered
	closed  bool
}

func newStdioConn(in io.Reader, out io.Writer, limit int) *stdioConn {
	c := &stdioConn{in: bufio.NewReaderSize(in, limit+len("\r\n")), limit: limit, out: out, pending: map[string]bool{}}
	c.changed = sync.NewCond(&c.mu)
	return c
}

// Read gives the SDK the next well-formed message. At the end of the
// input it waits until every request passed on has been answered, so the
// SDK does not cancel them as it would on EOF.
func (c *stdioConn) Read(p []byte) (int, error) {
	for len(c.next) == 0 {
		line, long, err := c.nextLine()
		if err != nil {
			c.drain()
			return 0, err
		}
		c.next = c.check(line, long)
	}
	n := copy(p, c.next)
	c.next = c.next[n:]
	return n, nil
}

// nextLine reads a line without its line ending; long reports a line over
// the limit, which has been read past without keeping it.
func (c *stdioConn) nextLine() (line []byte, long bool, err error) {
	if c.eof != nil {
		return nil, false, c.eof
	}
	line, err = c.in.ReadSlice('\n')
	for errors.Is(err, bufio.ErrBufferFull) {
		long = true
		_, err = c.in.ReadSlice('\n')
	}
	if err != nil {
		c.eof = err
		if len(line) == 0 && !long {
			return nil, false, err
		}
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return line, long || len(line) > c.limit, nil
}

// check returns a line's message to pass on, or nil when the line is blank
// or has been answered with an error.
func (c *stdioConn) check(line []byte, long bool) []byte {
	if long {
		c.reply(invalid(nil, "the message is over %d bytes, the most a line may hold; it was skipped", c.limit))
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	msgs, _, rerr := parsePayload(line, 0)
	if rerr != nil {
		c.reply(rerr)
		return nil
	}
	m := msgs[0]
	if m.call {
		c.mu.Lock()
		dup := c.pending[m.key]
		c.pending[m.key] = true
		c.mu.Unlock()
		if dup {
			c.reply(invalid(nil, "id %s is already used by a request not yet answered", m.key))
			return nil
		}
	}
	return append(m.wire, '\n')
}

func (c *stdioConn) reply(e *rpcError) {
	c.write(append(e.response(), '\n'))
}

// Write writes one message of the SDK's; a response settles its request.
func (c *stdioConn) Write(p []byte) (int, error) {
	n, err := c.write(p)
	if key, ok := responseKey(p); ok {
		c.mu.Lock()
		delete(c.pending, key)
		c.changed.Broadcast()
		c.mu.Unlock()
	}
	return n, err
}

func (c *stdioConn) write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n, err := c.out.Write(p)
	if err != nil {
		c.mu.Lock()
		c.werr = err
		c.changed.Broadcast()
		c.mu.Unlock()
	}
	return n, err
}

// drain waits until every request passed on is answered, or cannot be.
func (c *stdioConn) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && c.werr == nil && !c.closed {
		c.changed.Wait()
	}
}

// Close is the SDK ending the session; it leaves standard input and
// output to the process.
func (c *stdioConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.changed.Broadcast()
	c.mu.Unlock()
	return nil
}

// responseKey reads the id of a response the SDK writes; requests and
// notifications have a method and are not responses.
func responseKey(p []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(p, &m) != nil || m.Method != nil {
		return "", false
	}
	key, err := idKey(m.ID)
	return key, err == nil && key != ""
}
