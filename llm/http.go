package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// httpModel holds what the HTTP providers share: posting JSON with
// retries on 429 and 5xx.
type httpModel struct{ c Config }

func (m *httpModel) Name() string { return m.c.Name }

// Provider is the wire format the model speaks.
func (m *httpModel) Provider() string { return m.c.Provider }

// StatusError is a reply with an HTTP error status.
type StatusError struct {
	Model  string
	Status int
	// Type and Message are the provider's error type and message, when
	// the body held them.
	Type, Message string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("model %s: the provider rejected the API key (%d): %s", e.Model, e.Status, msg)
	case http.StatusNotFound:
		return fmt.Sprintf("model %s: unknown model or endpoint (404): %s", e.Model, msg)
	}
	return fmt.Sprintf("model %s: HTTP %d: %s", e.Model, e.Status, msg)
}

// retryable reports whether a status is worth another attempt: rate
// limits, server errors and Anthropic's 529 "overloaded".
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// attempt is the outcome of posting a request, with retries.
type attempt struct {
	body      []byte
	modelTime time.Duration
	waited    time.Duration
	retries   int
}

// CallError is a call that failed, with the time it took: what a run
// records of the calls that never answered.
type CallError struct {
	Err error
	// Waited is the time spent on the failed attempts and between them.
	Waited  time.Duration
	Retries int
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// post sends body to url with headers, retrying on 429 and 5xx with the
// delay the server asks for (Retry-After) or an exponential backoff.
// parseErr turns an error body into a type and message. Its errors are
// *CallError.
func (m *httpModel) post(ctx context.Context, url string, headers map[string]string, body []byte, parseErr func([]byte) (string, string)) (*attempt, error) {
	var a attempt
	if err := m.tryPost(ctx, url, headers, body, parseErr, &a); err != nil {
		return nil, &CallError{Err: err, Waited: a.waited, Retries: a.retries}
	}
	return &a, nil
}

func (m *httpModel) tryPost(ctx context.Context, url string, headers map[string]string, body []byte, parseErr func([]byte) (string, string), a *attempt) error {
	for try := 0; ; try++ {
		start := time.Now()
		status, reply, hdr, err := m.once(ctx, url, headers, body)
		took := time.Since(start)
		if err == nil && status == http.StatusOK {
			a.body, a.modelTime = reply, took
			return nil
		}
		a.waited += took
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("model %s: %w", m.c.Name, ctx.Err())
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("model %s: no answer within %s (set timeout in okf.yaml)", m.c.Name, m.c.Timeout)
			}
		}
		var serr error = err
		if err == nil {
			typ, msg := parseErr(reply)
			serr = &StatusError{Model: m.c.Name, Status: status, Type: typ, Message: msg}
			if !retryable(status) {
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

func (m *httpModel) once(ctx context.Context, url string, headers map[string]string, body []byte) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, m.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := m.c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, reply, resp.Header, nil
}

// maxBackoff caps any single wait, the server's Retry-After included.
const maxBackoff = 5 * time.Minute

// backoff is the wait before attempt try+1: the server's Retry-After
// (seconds or an HTTP date) when given, else 1s, 2s, 4s, … up to a minute.
func backoff(try int, h http.Header) time.Duration {
	if h != nil {
		if v := h.Get("Retry-After"); v != "" {
			if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
				return min(time.Duration(s*float64(time.Second)), maxBackoff)
			}
			if t, err := http.ParseTime(v); err == nil {
				return min(max(time.Until(t), 0), maxBackoff)
			}
		}
	}
	return min(time.Second<<min(try, 6), time.Minute)
}
