package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpModel holds what the HTTP providers share: posting JSON with
// retries on 429 and 5xx.
type httpModel struct{ c Config }

func (m *httpModel) Name() string { return m.c.Name }

// Provider is the wire format the model speaks.
func (m *httpModel) Provider() string { return m.c.Provider }

// ModelID is the model's id at the provider.
func (m *httpModel) ModelID() string { return m.c.Model }

// StatusError is a reply with an HTTP error status.
type StatusError struct {
	Model  string
	Status int
	// Type and Message are the provider's error type and message, when
	// the body held them.
	Type, Message string
	// RequestID is the provider's id of the request (x-request-id,
	// request-id), to quote to the provider.
	RequestID string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("model %s: the provider rejected the API key (%d): %s", e.Model, e.Status, msg)
	case http.StatusNotFound:
		return fmt.Sprintf("model %s: unknown model or endpoint (404): %s", e.Model, msg)
	}
	return fmt.Sprintf("model %s: HTTP %d: %s", e.Model, e.Status, msg)
}

// retryable reports whether a reply is worth another attempt, as the
// official SDKs decide: the server's x-should-retry when it says, else
// timeouts (408), lock conflicts (409), rate limits (429) and server
// errors, Anthropic's 529 "overloaded" among them.
func retryable(status int, h http.Header) bool {
	switch strings.ToLower(h.Get("X-Should-Retry")) {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusConflict || status == http.StatusTooManyRequests || status >= 500
}

// requestID is the provider's id of a request, from its reply's headers.
func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id"} {
		if v := h.Get(k); v != "" {
			return truncate(v, 200)
		}
	}
	return ""
}

// attempt is the outcome of posting a request, with retries.
type attempt struct {
	body      []byte // the reply, when read whole
	modelTime time.Duration
	waited    time.Duration
	retries   int
	requestID string
}

// CallError is a call that failed, with the time it took: what a run
// records of the calls that never answered.
type CallError struct {
	Err error
	// Waited is the time spent on the failed attempts and between them.
	Waited  time.Duration
	Retries int
	// RequestID is the provider's id of the last failed attempt, if it
	// gave one.
	RequestID string
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// exchange sends a request body to the endpoint's path and decodes the
// reply into reply: read whole, or, when streamed is set, assembled by it
// from the stream of events (into reply too).
func (m *httpModel) exchange(ctx context.Context, path string, headers map[string]string, body any, streamed func(io.Reader) error,
	reply any, parseErr func([]byte) (string, string)) (*attempt, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("model %s: encoding the request: %w", m.c.Name, err)
	}
	a, err := m.post(ctx, strings.TrimSuffix(m.c.BaseURL, "/")+path, headers, data, streamed, parseErr)
	if err != nil {
		return nil, err
	}
	if streamed == nil {
		if err := json.Unmarshal(a.body, reply); err != nil {
			return nil, fmt.Errorf("model %s: malformed reply: %w", m.c.Name, err)
		}
	}
	return a, nil
}

// post sends body to url with headers, retrying as retryable says with
// the delay the server asks for (retry-after-ms, Retry-After) or a
// jittered exponential backoff. consume, when set, reads a 200 reply's
// body as a stream of events as they arrive, and a stream that fails once
// it has begun is not retried, since what it gave may already be shown;
// without it the reply is read whole into the attempt's body.
// parseErr turns an error body into a type and message. Its errors are
// *CallError.
func (m *httpModel) post(ctx context.Context, url string, headers map[string]string, body []byte, consume func(io.Reader) error,
	parseErr func([]byte) (string, string)) (*attempt, error) {
	var a attempt
	if err := m.tryPost(ctx, url, headers, body, consume, parseErr, &a); err != nil {
		return nil, &CallError{Err: err, Waited: a.waited, Retries: a.retries, RequestID: a.requestID}
	}
	return &a, nil
}

// maxReply bounds a reply body read whole, and an error body.
const maxReply = 32 << 20

func (m *httpModel) tryPost(ctx context.Context, url string, headers map[string]string, body []byte, consume func(io.Reader) error,
	parseErr func([]byte) (string, string), a *attempt) error {
	for try := 0; ; try++ {
		start := time.Now()
		status, reply, hdr, streamed, err := m.once(ctx, url, headers, body, consume)
		took := time.Since(start)
		if err == nil && status == http.StatusOK {
			a.body, a.modelTime, a.requestID = reply, took, requestID(hdr)
			return nil
		}
		a.waited += took
		if hdr != nil {
			a.requestID = requestID(hdr)
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("model %s: %w", m.c.Name, ctx.Err())
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("model %s: no answer within %s (set timeout in okf.yaml)", m.c.Name, m.c.Timeout)
			}
			if streamed {
				return fmt.Errorf("model %s: the reply broke off: %w", m.c.Name, err)
			}
		}
		var serr error = err
		if err == nil {
			typ, msg := parseErr(reply)
			serr = &StatusError{Model: m.c.Name, Status: status, Type: typ, Message: msg, RequestID: requestID(hdr)}
			if !retryable(status, hdr) {
				return serr
			}
		} else {
			serr = fmt.Errorf("model %s: %w", m.c.Name, err)
		}
		if try >= m.c.MaxRetries {
			if m.c.MaxRetries > 0 {
				return fmt.Errorf("giving up after %d attempts: %w", try+1, serr)
			}
			return serr
		}
		d := backoff(try, hdr)
		if err := m.c.Sleep(ctx, d); err != nil {
			return fmt.Errorf("model %s: waiting to retry: %w", m.c.Name, err)
		}
		a.waited += d
		a.retries++
	}
}

// once makes one attempt: a 200 reply goes to consume when there is one
// (streamed reports that it began); any other reply comes back with its
// body.
func (m *httpModel) once(ctx context.Context, url string, headers map[string]string, body []byte, consume func(io.Reader) error) (status int, reply []byte, h http.Header, streamed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, m.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := m.c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || consume == nil {
		reply, err = io.ReadAll(io.LimitReader(resp.Body, maxReply))
		return resp.StatusCode, reply, resp.Header, false, err
	}
	return resp.StatusCode, nil, resp.Header, true, consume(resp.Body)
}

// maxBackoff caps any single wait, the server's Retry-After included.
const maxBackoff = 5 * time.Minute

// backoff is the wait before attempt try+1: the server's retry-after-ms
// or Retry-After (seconds or an HTTP date) when given, else 1s, 2s, 4s, …
// up to a minute, each less up to a quarter at random, so that clients
// refused together do not come back together.
func backoff(try int, h http.Header) time.Duration {
	if h != nil {
		if v := h.Get("Retry-After-Ms"); v != "" {
			if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
				return min(time.Duration(ms*float64(time.Millisecond)), maxBackoff)
			}
		}
		if v := h.Get("Retry-After"); v != "" {
			if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
				return min(time.Duration(s*float64(time.Second)), maxBackoff)
			}
			if t, err := http.ParseTime(v); err == nil {
				return min(max(time.Until(t), 0), maxBackoff)
			}
		}
	}
	d := min(time.Second<<min(try, 6), time.Minute)
	return d - time.Duration(rand.Float64()*float64(d)/4)
}
