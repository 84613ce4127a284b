package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
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
	Model string
	// Endpoint is the base URL the call went to; KeyEnv names the
	// variable the API key was read from, when it is known.
	Endpoint, KeyEnv string
	Status           int
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
		endpoint, key := "the provider", "the API key"
		if e.Endpoint != "" {
			endpoint = e.Endpoint
		}
		if e.KeyEnv != "" {
			key += " in " + e.KeyEnv
		}
		return fmt.Sprintf("model %s: %s rejected %s (%d): %s", e.Model, endpoint, key, e.Status, msg)
	case http.StatusNotFound:
		at := ""
		if e.Endpoint != "" {
			at = " at " + e.Endpoint
		}
		return fmt.Sprintf("model %s: unknown model or endpoint%s (404): %s", e.Model, at, msg)
	}
	return fmt.Sprintf("model %s: HTTP %d: %s", e.Model, e.Status, msg)
}

// Permanent reports whether a call failed as every call to the endpoint
// will: the provider rejected the key (401, 403), or knows no such model
// or endpoint (404). Work of many calls stops at the first.
func Permanent(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden || se.Status == http.StatusNotFound)
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

// endpoint is a base URL as an error shows it: without the credentials
// it may hold.
func endpoint(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
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
	body []byte // the reply, when read whole
	// whole is set when an endpoint answered a streaming request with
	// the whole reply.
	whole     bool
	modelTime time.Duration
	waited    time.Duration
	retries   int
	// answered counts the failed attempts the endpoint answered (200):
	// replies that broke off, which the provider may have billed.
	answered  int
	requestID string
}

// failed is the CallError of a call whose reply, once answered, could
// not be read.
func (a *attempt) failed(err error) *CallError {
	return &CallError{Err: err, Waited: a.waited + a.modelTime, Retries: a.retries, RequestID: a.requestID, Answered: a.answered + 1}
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
	// Answered counts the attempts the endpoint answered with a reply
	// that broke off or could not be read: model calls, perhaps billed.
	// Usage is what the provider reported of them, and Cost its price
	// (nil when unknown).
	Answered int
	Usage    Usage
	Cost     *float64
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// streamReader reads the 200 replies of a streaming request, one attempt
// at a time.
type streamReader interface {
	// read assembles one attempt's events, from the start. An error that
	// is a *brokeOff is worth asking again.
	read(r io.Reader) error
	// retry hears that the attempt broke off and is made again.
	retry(err error)
}

// brokeOff is a streamed reply that ended before it was whole: the
// connection failed, or the stream ended, cleanly, before its last event
// (a proxy's timeout, a server that died mid-reply). Like a connection
// refused, it is asked again; unlike a model's error, it is never read as
// an answer.
type brokeOff struct{ err error }

func (e *brokeOff) Error() string { return "the reply broke off: " + e.err.Error() }
func (e *brokeOff) Unwrap() error { return e.err }

// exchange is one call: its request, the endpoint's path and headers,
// and where the reply goes.
type exchange struct {
	path    string
	headers map[string]string
	body    any
	// stream, when set, reads a streamed reply (into reply); an endpoint
	// that answers whole is decoded into reply as without it.
	stream   streamReader
	reply    any
	parseErr func([]byte) (typ, msg string)
}

// call sends an exchange's request and decodes the reply.
func (m *httpModel) call(ctx context.Context, x exchange) (*attempt, error) {
	data, err := json.Marshal(x.body)
	if err != nil {
		return nil, fmt.Errorf("model %s: encoding the request: %w", m.c.Name, err)
	}
	a, err := m.post(ctx, strings.TrimSuffix(m.c.BaseURL, "/")+x.path, x.headers, data, x.stream, x.parseErr)
	if err != nil {
		return nil, err
	}
	if x.stream == nil || a.whole {
		if err := json.Unmarshal(a.body, x.reply); err != nil {
			return nil, a.failed(fmt.Errorf("model %s: malformed reply: %w", m.c.Name, err))
		}
	}
	return a, nil
}

// post sends body to url with headers, retrying as retryable says with
// the delay the server asks for (retry-after-ms, Retry-After) or a
// jittered exponential backoff. stream, when set, reads a 200 reply's
// events as they arrive; a reply that breaks off is asked again as a
// failed connection is, the stream told first, and one that fails
// otherwise (the provider's error event, a malformed event) is not.
// Without it, or when the endpoint answers one JSON object all the same,
// the reply is read whole into the attempt's body. parseErr turns an
// error body into a type and message. Its errors are *CallError.
func (m *httpModel) post(ctx context.Context, url string, headers map[string]string, body []byte, stream streamReader,
	parseErr func([]byte) (string, string)) (*attempt, error) {
	var a attempt
	if err := m.tryPost(ctx, url, headers, body, stream, parseErr, &a); err != nil {
		return nil, &CallError{Err: err, Waited: a.waited, Retries: a.retries, RequestID: a.requestID, Answered: a.answered}
	}
	return &a, nil
}

// maxReply bounds a reply body read whole, and an error body.
const maxReply = 32 << 20

func (m *httpModel) tryPost(ctx context.Context, url string, headers map[string]string, body []byte, stream streamReader,
	parseErr func([]byte) (string, string), a *attempt) error {
	for try := 0; ; try++ {
		start := time.Now()
		r, err := m.once(ctx, url, headers, body, stream)
		took := time.Since(start)
		if err == nil && r.status == http.StatusOK {
			a.body, a.whole, a.modelTime, a.requestID = r.body, r.whole, took, requestID(r.header)
			return nil
		}
		a.waited += took
		if r.header != nil {
			a.requestID = requestID(r.header)
		}
		if r.streamed {
			a.answered++
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("model %s: %w", m.c.Name, ctx.Err())
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("model %s: no answer within %s (set timeout in okf.yaml)", m.c.Name, m.c.Timeout)
			}
			var broke *brokeOff
			if r.streamed && !errors.As(err, &broke) {
				return err
			}
		}
		var serr error = err
		if err == nil {
			typ, msg := parseErr(r.body)
			serr = &StatusError{Model: m.c.Name, Endpoint: endpoint(m.c.BaseURL), KeyEnv: m.c.KeyEnv, Status: r.status, Type: typ, Message: msg, RequestID: requestID(r.header)}
			if !retryable(r.status, r.header) {
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
		if r.streamed {
			stream.retry(serr)
		}
		d := backoff(try, r.header)
		if err := m.c.Sleep(ctx, d); err != nil {
			return fmt.Errorf("model %s: waiting to retry: %w", m.c.Name, err)
		}
		a.waited += d
		a.retries++
	}
}

// charge puts on a failed call's error what the provider reported its
// answered attempts used, priced.
func (m *httpModel) charge(err error, u Usage) error {
	var ce *CallError
	if errors.As(err, &ce) && u != (Usage{}) {
		ce.Usage, ce.Cost = u, m.c.Price.Cost(u)
	}
	return err
}

// settle adds to a reply what the attempts before it that broke off
// were billed; a cost unknown stays unknown.
func (m *httpModel) settle(out *Response, lost Usage) {
	if lost == (Usage{}) {
		return
	}
	out.Usage = out.Usage.Add(lost)
	if out.Cost != nil {
		out.Cost = m.c.Price.Cost(out.Usage)
	}
}

// reply is what one attempt got back.
type reply struct {
	status int
	body   []byte // read whole: an error, or a reply not streamed
	header http.Header
	// streamed is set when a 200 reply went to the stream reader; whole
	// when a streaming request was answered with one JSON object.
	streamed, whole bool
}

// once makes one attempt: a 200 reply goes to stream when there is one,
// unless it is one JSON object; any other reply comes back with its body.
func (m *httpModel) once(ctx context.Context, url string, headers map[string]string, body []byte, stream streamReader) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, m.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := m.c.HTTP.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	var rd io.Reader = resp.Body
	if r.status == http.StatusOK && stream != nil {
		br := bufio.NewReader(resp.Body)
		if !oneObject(br) {
			r.streamed = true
			return r, stream.read(br)
		}
		r.whole, rd = true, br
	}
	r.body, err = io.ReadAll(io.LimitReader(rd, maxReply))
	return r, err
}

// oneObject reports whether a reply to a streaming request is one JSON
// object instead, from endpoints that ignore stream: true. Server-sent
// events begin with a field name or a colon, never a brace.
func oneObject(br *bufio.Reader) bool {
	for n := 1; n <= 4096; n++ {
		b, err := br.Peek(n)
		if err != nil {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
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
