package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"time"
)

// mcpGate admits a request to the SDK's streamable HTTP handler at /mcp.
// A POST's body is read and checked first: a malformed payload gets a
// JSON-RPC error, and every message of a batch counts against the token's
// rate limit (the guard counted the first). A POST that opens a session
// must find room under the session caps; a request of a session marks it
// busy while it runs. Event streams (GET) end when stopping does, so that
// they do not hold a shutdown up.
func (s *Server) mcpGate(stopping context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := grantFrom(r.Context())
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) {
			status, err := s.checkMCPBody(r, g)
			if err != nil {
				if status == http.StatusTooManyRequests {
					w.Header().Set("Retry-After", "1")
				}
				writeRPCError(w, status, err)
				return
			}
		}
		switch id := r.Header.Get("Mcp-Session-Id"); {
		case id != "":
			s.sessions.use(id, 1)
			defer s.sessions.use(id, -1)
		case r.Method == http.MethodPost:
			slot, herr := s.sessions.reserve(g.Name)
			if herr != nil {
				w.Header().Set("Retry-After", strconv.Itoa(int(s.opts.SessionIdleTimeout/time.Second)))
				writeRPCError(w, herr.status, &rpcError{code: codeRefused, msg: herr.msg})
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
		next.ServeHTTP(w, r)
	})
}

// checkMCPBody reads a POST's JSON-RPC payload, checks it, charges a
// batch's further messages to the grant's limiter and hands the checked
// payload on; it returns the status and error to answer otherwise.
func (s *Server) checkMCPBody(r *http.Request, g *grantState) (int, *rpcError) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		status, msg := s.bodyError(err)
		return status, &rpcError{code: codeInvalidRequest, msg: msg}
	}
	msgs, batch, rerr := parsePayload(body, MaxBatch)
	if rerr != nil {
		return http.StatusBadRequest, rerr
	}
	if n := len(msgs) - 1; n > 0 && !g.limiter.AllowN(time.Now(), n) {
		return http.StatusTooManyRequests, &rpcError{code: codeRefused,
			msg: fmt.Sprintf("token %s is over its rate limit of %g requests a second (burst %d): each message of a batch counts", g.Name, s.opts.RateLimit, s.opts.Burst)}
	}
	payload := encodePayload(msgs, batch)
	r.Body = io.NopCloser(bytes.NewReader(payload))
	r.ContentLength = int64(len(payload))
	return 0, nil
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
