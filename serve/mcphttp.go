package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// mcpGate admits a request to the SDK's streamable HTTP handler at /mcp.
// A POST's body is read and checked first: a malformed payload gets a
// JSON-RPC error, and every message of a batch counts against the token's
// rate limit (the guard counted the first). A POST that opens a session
// must find room under the session caps; a request of a session must find
// it in the session table, held by its token, and marks it busy while it
// runs. Event streams (GET) end when stopping does, so that they do not
// hold a shutdown up. Whatever the SDK refuses in plain text reaches the
// client as a JSON-RPC error.
func (s *Server) mcpGate(stopping context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := grantFrom(r.Context())
		var callID json.RawMessage
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) {
			id, status, err := s.checkMCPBody(r, g)
			if err != nil {
				if status == http.StatusTooManyRequests {
					w.Header().Set("Retry-After", "1")
				}
				writeRPCError(w, status, err)
				return
			}
			callID = id
		}
		switch id := r.Header.Get("Mcp-Session-Id"); {
		case id != "":
			if !s.sessions.enter(id, g.Name) {
				writeRPCError(w, http.StatusNotFound, &rpcError{code: codeSessionNotFound, id: callID,
					msg: "session not found: it ended, timed out or was replaced by a newer one; initialize a new session"})
				return
			}
			defer s.sessions.leave(id)
			if s.sessions.admitted != nil {
				s.sessions.admitted(id)
			}
		case r.Method == http.MethodPost:
			slot, herr := s.sessions.reserve(g.Name)
			if herr != nil {
				w.Header().Set("Retry-After", strconv.Itoa(int(s.opts.SessionIdleTimeout/time.Second)))
				writeRPCError(w, herr.status, &rpcError{code: codeRefused, msg: herr.msg, id: callID})
				return
			}
			defer s.sessions.settle(slot)
			r = r.WithContext(context.WithValue(r.Context(), slotKey{}, slot))
		}
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(stopping, cancel)()
			r = r.WithContext(ctx)
		}
		rw := &rpcRefusals{ResponseWriter: w, id: callID}
		defer rw.finish()
		next.ServeHTTP(rw, r)
	})
}

// rpcRefusals turns the SDK's plain-text refusals (http.Error: a 4xx or
// 5xx with a text body) into JSON-RPC errors, the form MCP clients read
// on any status; everything else passes as written.
type rpcRefusals struct {
	http.ResponseWriter
	id     json.RawMessage // the request's one call, nil for none or a batch
	status int             // a refusal being rewritten, 0 otherwise
	text   []byte
}

// maxRefusalText bounds the text of a refusal kept for its message.
const maxRefusalText = 1 << 10

func (w *rpcRefusals) WriteHeader(status int) {
	if status >= 400 && w.status == 0 && !isJSON(w.Header().Get("Content-Type")) {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rpcRefusals) Write(b []byte) (int, error) {
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	w.text = append(w.text, b[:min(len(b), maxRefusalText-len(w.text))]...)
	return len(b), nil
}

// Flush lets event streams through as they are written.
func (w *rpcRefusals) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *rpcRefusals) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error of a refusal. The SDK's refusals of a
// message name the error by its text: an unknown method and missing
// params get their own codes, any other bad request -32600.
func (w *rpcRefusals) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(strings.ToValidUTF8(string(w.text), ""))
	code := codeInvalidRequest
	switch {
	case w.status == http.StatusNotFound:
		code = codeSessionNotFound
	case w.status >= 500:
		code = codeInternal
	case strings.HasPrefix(msg, "JSON RPC not handled"):
		code = codeMethodNotFound
	case strings.Contains(msg, `missing required "params"`):
		code = codeInvalidParams
	}
	w.Header().Del("X-Content-Type-Options")
	writeRPCError(w.ResponseWriter, w.status, &rpcError{code: code, msg: msg, id: w.id})
}

// checkMCPBody reads a POST's JSON-RPC payload, checks it, charges a
// batch's further messages to the grant's limiter and hands the checked
// payload on, returning the id of its call when it holds one call alone;
// it returns the status and error to answer otherwise.
func (s *Server) checkMCPBody(r *http.Request, g *grantState) (json.RawMessage, int, *rpcError) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		status, msg := s.bodyError(err)
		code := codeInvalidRequest
		if status == http.StatusRequestEntityTooLarge || status == http.StatusRequestTimeout {
			code = codeRefused // a limit, as the guard's
		}
		return nil, status, &rpcError{code: code, msg: msg}
	}
	msgs, batch, rerr := parsePayload(body, MaxBatch)
	if rerr != nil {
		return nil, http.StatusBadRequest, rerr
	}
	if n := len(msgs) - 1; n > 0 && !g.limiter.AllowN(time.Now(), n) {
		return nil, http.StatusTooManyRequests, &rpcError{code: codeRefused,
			msg: fmt.Sprintf("token %s is over its rate limit of %g requests a second (burst %d): each message of a batch counts", g.Name, s.opts.RateLimit, s.opts.Burst)}
	}
	payload := encodePayload(msgs, batch)
	r.Body = io.NopCloser(bytes.NewReader(payload))
	r.ContentLength = int64(len(payload))
	if batch || !msgs[0].call {
		return nil, 0, nil
	}
	return msgs[0].id, 0, nil
}

// bodyError is the status and text for a request body that could not be
// read whole.
func (s *Server) bodyError(err error) (int, string) {
	var me *http.MaxBytesError
	switch {
	case errors.As(err, &me):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", me.Limit)
	case isTimeout(err):
		return http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %v", s.opts.ReadTimeout)
	}
	return http.StatusBadRequest, "reading the request body: " + err.Error()
}

// isTimeout reports a read that passed its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// writeRPCError answers a request to /mcp with a JSON-RPC error, the form
// MCP clients read on any status.
func writeRPCError(w http.ResponseWriter, status int, e *rpcError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(e.response(), '\n'))
}
