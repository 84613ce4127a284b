// Package embed adds dense similarity to okf's search, optionally: a
// client of any OpenAI-compatible /v1/embeddings endpoint, the one text
// embedded for each concept of a snapshot, and the vectors of a snapshot
// computed once per text and kept in a cache (a tenant's in the store, or
// memory for a folder), so that a changed concept is embedded again and
// an unchanged one never. Search fuses the similarity of a question's
// vector with BM25 (search/dense.go); without an embeddings model okf
// ranks by BM25 alone, as it always has.
//
// Everything an endpoint replies is checked before it is used: the size
// of the body, the number, order and dimensions of the vectors, and their
// values.
package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/okf-tools/okf/store"
)

// Defaults and bounds of a client.
const (
	// DefaultBatch is the most texts one request carries when Config.Batch
	// is 0; MaxBatch is the most any may (OpenAI's limit).
	DefaultBatch = 64
	MaxBatch     = 2048
	// DefaultTimeout bounds one attempt when Config.Timeout is 0.
	DefaultTimeout = time.Minute
	// DefaultRetries is how many times a request is tried again when
	// Config.Retries is 0.
	DefaultRetries = 3
	// MaxReplyBytes bounds a reply's body: 2,048 vectors of 3,072
	// dimensions written as JSON numbers take about 40 MiB.
	MaxReplyBytes = 64 << 20
	// MaxDimensions bounds a vector, as the store does.
	MaxDimensions = store.MaxEmbeddingBytes / 4
	// maxBackoff caps one wait between attempts, the server's Retry-After
	// included: a longer one is a server asking to be left alone, which an
	// import waiting on it cannot tell from one that is down.
	maxBackoff = time.Minute
)

// Config is an embeddings endpoint and the model asked of it.
type Config struct {
	// URL is the API's base, such as https://api.openai.com/v1 or
	// http://localhost:11434/v1; requests go to URL/embeddings.
	URL string
	// Model is the model's id at the endpoint.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Batch is the most texts a request carries; 0 means DefaultBatch.
	Batch int
	// Dimensions, when above 0, asks a model that can shorten its vectors
	// (text-embedding-3-*) for that many; replies of another length are
	// refused.
	Dimensions int
	// Timeout bounds one attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a request that failed as a busy server
	// fails (408, 409, 429, 5xx, a failed connection) is tried again: 0
	// means DefaultRetries, a negative number never.
	Retries int
	// HTTP sends the requests; nil means a client of its own.
	HTTP *http.Client
	// Sleep waits between attempts; nil waits on a timer. Tests record
	// the waits instead of waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Usage is what embedding cost: the requests the endpoint answered, the
// input tokens it reported, the texts it embedded, and, for Fill, the
// texts whose vectors came from the cache instead.
type Usage struct {
	Calls  int `json:"calls"`
	Tokens int `json:"tokens"`
	Texts  int `json:"texts"`
	Reused int `json:"reused"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Calls + v.Calls, u.Tokens + v.Tokens, u.Texts + v.Texts, u.Reused + v.Reused}
}

// Client embeds texts with one model of one endpoint. It is safe for
// concurrent use.
type Client struct {
	c        Config
	endpoint string // URL/embeddings
	shown    string // the endpoint as errors name it, without a password
}

// New checks a configuration and returns its client.
func New(c Config) (*Client, error) {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return nil, errors.New("embeddings: url is missing (the API's base, such as http://localhost:11434/v1)")
	case err != nil:
		return nil, fmt.Errorf("embeddings: url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("embeddings: url %q: want http:// or https:// and a host", u.Redacted())
	case c.Model == "":
		return nil, errors.New("embeddings: model is missing (the model's id at the endpoint)")
	case c.Batch < 0 || c.Batch > MaxBatch:
		return nil, fmt.Errorf("embeddings: batch %d: give 1 to %d texts a request", c.Batch, MaxBatch)
	case c.Dimensions < 0 || c.Dimensions > MaxDimensions:
		return nil, fmt.Errorf("embeddings: dimensions %d: give 1 to %d, or leave it out", c.Dimensions, MaxDimensions)
	case c.Timeout < 0:
		return nil, fmt.Errorf("embeddings: timeout %s is negative", c.Timeout)
	}
	cl := &Client{c: c}
	if err := store.ValidateModel(cl.Name()); err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	if cl.c.Batch == 0 {
		cl.c.Batch = DefaultBatch
	}
	if cl.c.Timeout == 0 {
		cl.c.Timeout = DefaultTimeout
	}
	switch {
	case cl.c.Retries == 0:
		cl.c.Retries = DefaultRetries
	case cl.c.Retries < 0:
		cl.c.Retries = 0
	}
	if cl.c.HTTP == nil {
		cl.c.HTTP = &http.Client{}
	}
	if cl.c.Sleep == nil {
		cl.c.Sleep = sleep
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/embeddings"
	cl.endpoint, cl.shown = u.String(), u.Redacted()
	return cl, nil
}

// Name is what the vectors are kept under in a cache: the model, and the
// dimensions asked for when set ("text-embedding-3-small@256"), since a
// model shortened to other dimensions gives other vectors.
func (c *Client) Name() string {
	if c.c.Dimensions > 0 {
		return c.c.Model + "@" + strconv.Itoa(c.c.Dimensions)
	}
	return c.c.Model
}

// Endpoint is the URL requests go to, without a password.
func (c *Client) Endpoint() string { return c.shown }

// Embed returns a unit vector for each text, in order, in requests of at
// most Config.Batch texts, all of one dimension. A text must not be
// empty (endpoints refuse one).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, Usage, error) {
	var u Usage
	for i, t := range texts {
		if t == "" {
			return nil, u, fmt.Errorf("embeddings %s: text %d is empty", c.shown, i)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.c.Batch {
		batch := texts[start:min(start+c.c.Batch, len(texts))]
		vecs, tokens, err := c.post(ctx, batch)
		if err != nil {
			return nil, u, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, u, fmt.Errorf("embeddings %s (model %s): a reply of %d-dimension vectors after one of %d", c.shown, c.c.Model, len(vecs[0]), len(out[0]))
		}
		u.Calls++
		u.Tokens += tokens
		u.Texts += len(batch)
		out = append(out, vecs...)
	}
	return out, u, nil
}

// request is the body of an OpenAI embeddings request.
type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// reply is the body of an OpenAI embeddings reply, as far as okf reads
// it. An embedding is a list of numbers, or, from an endpoint that
// ignores encoding_format, a base64 string of little-endian float32s.
type reply struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// post sends one batch, with retries, and returns its checked vectors
// and the tokens the endpoint reported.
func (c *Client) post(ctx context.Context, texts []string) ([][]float32, int, error) {
	body, err := json.Marshal(request{Model: c.c.Model, Input: texts, EncodingFormat: "float", Dimensions: c.c.Dimensions})
	if err != nil {
		return nil, 0, fmt.Errorf("embeddings %s: encoding the request: %w", c.shown, err)
	}
	for try := 0; ; try++ {
		status, header, data, err := c.once(ctx, body)
		if err == nil && status == http.StatusOK {
			return c.read(data, len(texts))
		}
		if errors.Is(err, errTooLarge) {
			// Not retried: the same request gets the same reply.
			return nil, 0, fmt.Errorf("embeddings %s (model %s): %w", c.shown, c.c.Model, err)
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("embeddings %s: %w", c.shown, ctx.Err())
		}
		var cause error
		switch {
		case err != nil:
			cause = fmt.Errorf("embeddings %s: %w", c.shown, err)
		default:
			cause = fmt.Errorf("embeddings %s (model %s): HTTP %d: %s", c.shown, c.c.Model, status, errorMessage(status, data))
			if !retryable(status) {
				return nil, 0, cause
			}
		}
		if try >= c.c.Retries {
			if try > 0 {
				return nil, 0, fmt.Errorf("giving up after %d attempts: %w", try+1, cause)
			}
			return nil, 0, cause
		}
		if err := c.c.Sleep(ctx, backoff(try, header)); err != nil {
			return nil, 0, fmt.Errorf("embeddings %s: waiting to retry: %w", c.shown, err)
		}
	}
}

// once makes one attempt. An error is a failed connection or a body
// that broke off, both worth another attempt.
func (c *Client) once(ctx context.Context, body []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.c.APIKey)
	}
	resp, err := c.c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	limit := int64(MaxReplyBytes)
	if resp.StatusCode != http.StatusOK {
		limit = 64 << 10 // an error's message is all okf shows of it
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, resp.Header, nil, fmt.Errorf("reading the reply: %w", err)
	}
	if int64(len(data)) > limit {
		if resp.StatusCode == http.StatusOK {
			return resp.StatusCode, resp.Header, nil, errTooLarge
		}
		data = data[:limit]
	}
	return resp.StatusCode, resp.Header, data, nil
}

// errTooLarge is a reply larger than MaxReplyBytes.
var errTooLarge = errors.New("the reply is larger than 64 MiB")

// read checks a 200 reply: n vectors, each index once, of one dimension
// (Config.Dimensions when set), finite and not all zero; and returns them
// normalised to unit length, with the tokens reported.
func (c *Client) read(data []byte, n int) ([][]float32, int, error) {
	fail := func(format string, args ...any) ([][]float32, int, error) {
		return nil, 0, fmt.Errorf("embeddings %s (model %s): %s", c.shown, c.c.Model, fmt.Sprintf(format, args...))
	}
	var r reply
	if err := json.Unmarshal(data, &r); err != nil {
		return fail("malformed reply: %v", err)
	}
	if len(r.Data) != n {
		return fail("%d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	dim := c.c.Dimensions
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		switch {
		case i < 0 || i >= n:
			return fail("vector index %d is out of range for %d texts", i, n)
		case out[i] != nil:
			return fail("vector index %d comes twice", i)
		}
		v, err := decodeEmbedding(d.Embedding)
		if err != nil {
			return fail("vector %d: %v", i, err)
		}
		switch {
		case len(v) == 0:
			return fail("vector %d is empty", i)
		case len(v) > MaxDimensions:
			return fail("vector %d has %d dimensions, at most %d", i, len(v), MaxDimensions)
		case dim == 0:
			dim = len(v)
		case len(v) != dim && c.c.Dimensions > 0:
			return fail("vector %d has %d dimensions, %d were asked for", i, len(v), c.c.Dimensions)
		case len(v) != dim:
			return fail("vector %d has %d dimensions, the others %d", i, len(v), dim)
		}
		if err := normalize(v); err != nil {
			return fail("vector %d: %v", i, err)
		}
		out[i] = v
	}
	tokens := r.Usage.PromptTokens
	if tokens == 0 {
		tokens = r.Usage.TotalTokens
	}
	if tokens < 0 {
		return fail("usage of %d tokens", tokens)
	}
	return out, tokens, nil
}

// decodeEmbedding reads a list of numbers, or a base64 string of
// little-endian float32s.
func decodeEmbedding(raw json.RawMessage) ([]float32, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("base64: %w", err)
		}
		return DecodeVector(b)
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not a list of numbers: %w", err)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
		if math.IsInf(float64(out[i]), 0) {
			return nil, fmt.Errorf("value %d (%g) is out of float32's range", i, x)
		}
	}
	return out, nil
}

// normalize scales v to unit length in place, refusing NaN, infinities
// and the zero vector, whose direction is no meaning.
func normalize(v []float32) error {
	var sum float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %d is %g", i, x)
		}
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) {
		return fmt.Errorf("no direction (length %g)", math.Sqrt(sum))
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return nil
}

// EncodeVector writes a vector as the store keeps it: little-endian
// float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads EncodeVector's bytes, refusing a length that is no
// whole number of float32s and values that are not finite.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is no whole number of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(v[i])) || math.IsInf(float64(v[i]), 0) {
			return nil, fmt.Errorf("value %d is %g", i, v[i])
		}
	}
	return v, nil
}

// errorMessage is the message of an error reply ({"error":{"message":…}}
// as OpenAI writes it, or {"error":"…"} as others do), else its start,
// else the status's text.
func errorMessage(status int, body []byte) string {
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &r) == nil && len(r.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(r.Error, &obj) == nil && obj.Message != "":
			return clip(obj.Message)
		case json.Unmarshal(r.Error, &s) == nil && s != "":
			return clip(s)
		}
	}
	if t := strings.TrimSpace(string(body)); t != "" {
		return clip(t)
	}
	return http.StatusText(status)
}

// clip keeps an endpoint's message to one line of reasonable length.
func clip(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// retryable reports whether a status is worth another attempt, as
// package llm decides: timeouts, conflicts, rate limits, server errors.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict || status == http.StatusTooManyRequests || status >= 500
}

// backoff is the wait before attempt try+1: the server's retry-after-ms
// or Retry-After (seconds or an HTTP date) when given, else 1s, 2s, 4s, …
// each less up to a quarter at random, so that clients refused together
// do not come back together; never more than maxBackoff.
func backoff(try int, h http.Header) time.Duration {
	if h != nil {
		if v := h.Get("Retry-After-Ms"); v != "" {
			if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
				return min(time.Duration(min(ms, float64(maxBackoff/time.Millisecond))*float64(time.Millisecond)), maxBackoff)
			}
		}
		if v := h.Get("Retry-After"); v != "" {
			if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && !math.IsInf(s, 0) {
				return min(time.Duration(min(s, float64(maxBackoff/time.Second))*float64(time.Second)), maxBackoff)
			}
			if t, err := http.ParseTime(v); err == nil {
				return min(max(time.Until(t), 0), maxBackoff)
			}
		}
	}
	d := min(time.Second<<min(try, 6), maxBackoff)
	return d - time.Duration(rand.Float64()*float64(d)/4)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
