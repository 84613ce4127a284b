package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/okf-tools/okf/embed/embedtest"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

// waits records the waits between attempts instead of waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func client(t *testing.T, c Config) (*Client, *waits) {
	t.Helper()
	w := &waits{}
	if c.Model == "" {
		c.Model = "test-embed"
	}
	c.Sleep = w.sleep
	cl, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return cl, w
}

func near(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

func TestWireFormat(t *testing.T) {
	srv := embedtest.New(t)
	srv.APIKey = "sk-test"
	c, _ := client(t, Config{URL: srv.URL() + "/", APIKey: "sk-test"})
	vecs, u, err := c.Embed(context.Background(), []string{"orders by region", "refund amount"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if want := `{"model":"test-embed","input":["orders by region","refund amount"],"encoding_format":"float"}`; reqs[0].Body != want {
		t.Errorf("request body\n%s\nwant\n%s", reqs[0].Body, want)
	}
	if reqs[0].Authorization != "Bearer sk-test" {
		t.Errorf("authorization %q", reqs[0].Authorization)
	}
	if u != (Usage{Calls: 1, Tokens: 5, Texts: 2}) {
		t.Errorf("usage %+v, want 1 call, 5 tokens, 2 texts", u)
	}
	for i, text := range []string{"orders by region", "refund amount"} {
		if !near(vecs[i], embedtest.Vector(text, embedtest.DefaultDim)) {
			t.Errorf("vector %d is not the server's for %q", i, text)
		}
	}

	// Without a key, no Authorization header; dimensions only when set.
	srv.APIKey = ""
	c, _ = client(t, Config{URL: srv.URL(), Dimensions: 16})
	if c.Name() != "test-embed@16" {
		t.Errorf("name %q, want test-embed@16", c.Name())
	}
	vecs, _, err = c.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	last := srv.Requests()[1]
	if want := `{"model":"test-embed","input":["x"],"encoding_format":"float","dimensions":16}`; last.Body != want || last.Authorization != "" {
		t.Errorf("request %s with authorization %q, want %s and none", last.Body, last.Authorization, want)
	}
	if len(vecs[0]) != 16 {
		t.Errorf("%d dimensions, want 16", len(vecs[0]))
	}
}

func TestBatches(t *testing.T) {
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL(), Batch: 64})
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = strings.Repeat("word ", i%7+1) + string(rune('a'+i%26))
	}
	vecs, u, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	if len(sizes) != 3 || sizes[0] != 64 || sizes[1] != 64 || sizes[2] != 22 {
		t.Errorf("batches of %v, want 64, 64, 22", sizes)
	}
	tokens := 0
	for i, text := range texts {
		tokens += i%7 + 2
		if !near(vecs[i], embedtest.Vector(text, embedtest.DefaultDim)) {
			t.Fatalf("vector %d is not the server's for %q", i, text)
		}
	}
	if u != (Usage{Calls: 3, Tokens: tokens, Texts: 150}) {
		t.Errorf("usage %+v, want 3 calls, %d tokens, 150 texts", u, tokens)
	}
	if vecs, u, err := c.Embed(context.Background(), nil); err != nil || len(vecs) != 0 || u != (Usage{}) || srv.Calls() != 3 {
		t.Errorf("no texts: %v, %+v, %v, %d calls; want nothing asked", vecs, u, err, srv.Calls())
	}
	if _, _, err := c.Embed(context.Background(), []string{"a", ""}); err == nil || !strings.Contains(err.Error(), "text 1 is empty") || srv.Calls() != 3 {
		t.Errorf("an empty text: %v after %d calls", err, srv.Calls())
	}
}

// TestHostileReplies checks each way a reply can be wrong is refused,
// naming the endpoint and the cause.
func TestHostileReplies(t *testing.T) {
	nan := base64LE(float32(math.NaN()), 1)
	cases := []struct {
		name  string
		fault embedtest.Fault
		dims  int
		want  string
	}{
		{"broken JSON", embedtest.Fault{Raw: `{"object":"list","data":[`}, 0, "malformed reply"},
		{"a vector missing", embedtest.Fault{Drop: 1}, 0, "1 vectors for 2 texts"},
		{"index out of range", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[1]}]}`}, 0, "vector index 2 is out of range for 2 texts"},
		{"negative index", embedtest.Fault{Raw: `{"data":[{"index":-1,"embedding":[1]},{"index":0,"embedding":[1]}]}`}, 0, "vector index -1 is out of range"},
		{"index repeated", embedtest.Fault{Raw: `{"data":[{"index":1,"embedding":[1]},{"index":1,"embedding":[1]}]}`}, 0, "vector index 1 comes twice"},
		{"dimensions differ", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`}, 0, "vector 1 has 2 dimensions, the others 1"},
		{"dimensions not asked", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`}, 3, "vector 0 has 2 dimensions, 3 were asked for"},
		{"empty vector", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`}, 0, "vector 0 is empty"},
		{"zero vector", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[1,0]}]}`}, 0, "vector 0: no direction"},
		{"beyond float32", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[1e39]},{"index":1,"embedding":[1]}]}`}, 0, "out of float32's range"},
		{"NaN", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":"` + nan + `"},{"index":1,"embedding":[1,1]}]}`}, 0, "vector 0: value 0 is NaN"},
		{"not numbers", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":{"a":1}},{"index":1,"embedding":[1]}]}`}, 0, "not a list of numbers"},
		{"bad base64", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":"@@@"},{"index":1,"embedding":[1]}]}`}, 0, "base64"},
		{"negative usage", embedtest.Fault{Raw: `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1]}],"usage":{"prompt_tokens":-5}}`}, 0, "usage of -5 tokens"},
		{"too large", embedtest.Fault{Pad: MaxReplyBytes}, 0, "larger than 64 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := embedtest.New(t)
			srv.Fail(tc.fault)
			c, _ := client(t, Config{URL: srv.URL(), Dimensions: tc.dims})
			vecs, _, err := c.Embed(context.Background(), []string{"one", "two"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL()+"/embeddings") {
				t.Fatalf("got %v, %v; want an error naming %s/embeddings and %q", vecs, err, srv.URL(), tc.want)
			}
			if srv.Calls() != 1 {
				t.Errorf("%d calls: a wrong reply is not asked again", srv.Calls())
			}
		})
	}
}

func base64LE(x float32, n int) string {
	v := make([]float32, n)
	for i := range v {
		v[i] = x
	}
	return base64.StdEncoding.EncodeToString(EncodeVector(v))
}

func TestRepliesAreNormalisedAndMayBeBase64(t *testing.T) {
	srv := embedtest.New(t)
	srv.Fail(embedtest.Fault{Raw: `{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}],"usage":{"total_tokens":9}}`},
		embedtest.Fault{Base64: true})
	c, _ := client(t, Config{URL: srv.URL()})
	vecs, u, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// In the order of the indexes, not of the list; unit length.
	if !near(vecs[0], []float32{0.6, 0.8}) || !near(vecs[1], []float32{0, 1}) || u.Tokens != 9 {
		t.Errorf("vectors %v, %d tokens; want [0.6 0.8] [0 1], 9", vecs, u.Tokens)
	}
	vecs, _, err = c.Embed(context.Background(), []string{"sales by region"})
	if err != nil || !near(vecs[0], embedtest.Vector("sales by region", embedtest.DefaultDim)) {
		t.Errorf("a base64 reply: %v, %v", vecs, err)
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	srv.Fail(embedtest.Fault{Status: 429, RetryAfter: "7"}, embedtest.Fault{Status: 503}, embedtest.Fault{Status: 500})
	c, w := client(t, Config{URL: srv.URL()})
	vecs, u, err := c.Embed(ctx, []string{"a"})
	if err != nil || len(vecs) != 1 {
		t.Fatalf("after three busy replies: %v, %v", vecs, err)
	}
	if srv.Calls() != 4 || u.Calls != 1 {
		t.Errorf("%d requests, %d answered; want 4 and 1", srv.Calls(), u.Calls)
	}
	// The server's Retry-After, then 2s and 4s less up to a quarter.
	if len(w.d) != 3 || w.d[0] != 7*time.Second || w.d[1] < 1500*time.Millisecond || w.d[1] > 2*time.Second ||
		w.d[2] < 3*time.Second || w.d[2] > 4*time.Second {
		t.Errorf("waits %v, want 7s, 1.5–2s, 3–4s", w.d)
	}

	// Bounded: after Retries more attempts, it gives up, saying why.
	srv.Fail(embedtest.Fault{Status: 500}, embedtest.Fault{Status: 502}, embedtest.Fault{Status: 503})
	c, _ = client(t, Config{URL: srv.URL(), Retries: 2})
	if _, _, err := c.Embed(ctx, []string{"a"}); err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "HTTP 503: scripted status 503") {
		t.Errorf("three failures with two retries: %v", err)
	}
	srv.Fail(embedtest.Fault{Status: 503})
	c, _ = client(t, Config{URL: srv.URL(), Retries: -1})
	before := srv.Calls()
	if _, _, err := c.Embed(ctx, []string{"a"}); err == nil || srv.Calls() != before+1 {
		t.Errorf("no retries: %v after %d calls", err, srv.Calls()-before)
	}

	// A request the endpoint refuses is not asked again.
	srv.APIKey = "right"
	c, w = client(t, Config{URL: srv.URL(), APIKey: "wrong"})
	before = srv.Calls()
	if _, _, err := c.Embed(ctx, []string{"a"}); err == nil || !strings.Contains(err.Error(), "HTTP 401: Incorrect API key provided") || srv.Calls() != before+1 || len(w.d) != 0 {
		t.Errorf("a wrong key: %v after %d calls, waits %v", err, srv.Calls()-before, w.d)
	}
	if strings.Contains(err2s(c.Embed(ctx, []string{"a"})), "wrong") {
		t.Error("the error shows the key")
	}

	// A cancelled wait ends the call.
	srv.APIKey = ""
	srv.Fail(embedtest.Fault{Status: 429})
	cctx, cancel := context.WithCancel(ctx)
	cl, err := New(Config{URL: srv.URL(), Model: "m", Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return context.Canceled }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Embed(cctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: %v", err)
	}
}

func err2s(_ [][]float32, _ Usage, err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestBrokenConnectionsAreRetried puts the server behind a handler that
// drops the first two connections mid-request.
func TestBrokenConnectionsAreRetried(t *testing.T) {
	srv := embedtest.New(t)
	var mu sync.Mutex
	dropped := 0
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		drop := dropped < 2
		if drop {
			dropped++
		}
		mu.Unlock()
		if drop {
			panic(http.ErrAbortHandler)
		}
		srv.ServeHTTP(w, r)
	}))
	defer front.Close()
	c, w := client(t, Config{URL: front.URL + "/v1"})
	vecs, u, err := c.Embed(context.Background(), []string{"a"})
	if err != nil || len(vecs) != 1 || u.Calls != 1 || len(w.d) != 2 || dropped != 2 {
		t.Fatalf("after two broken connections: %v, %+v, %v, waits %v", vecs, u, err, w.d)
	}
	// A server that is not there fails after the retries, naming itself.
	front.Close()
	c, w = client(t, Config{URL: front.URL + "/v1", Retries: 1})
	if _, _, err := c.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), front.URL+"/v1/embeddings") || len(w.d) != 1 {
		t.Errorf("no server: %v, waits %v", err, w.d)
	}
}

func TestBackoff(t *testing.T) {
	h := func(k, v string) http.Header { return http.Header{http.CanonicalHeaderKey(k): {v}} }
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{h("Retry-After", "3"), 3 * time.Second},
		{h("Retry-After", "0.5"), 500 * time.Millisecond},
		{h("Retry-After-Ms", "250"), 250 * time.Millisecond},
		{h("Retry-After", "99999999999"), maxBackoff},
		{h("Retry-After-Ms", "1e308"), maxBackoff},
		{h("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"), 0},
	}
	for _, tc := range cases {
		if got := backoff(0, tc.h); got != tc.want {
			t.Errorf("backoff with %v = %s, want %s", tc.h, got, tc.want)
		}
	}
	for try, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if got := backoff(try, h("Retry-After", "soon")); got > want || got < want*3/4 {
			t.Errorf("backoff(%d) = %s, want %s less up to a quarter", try, got, want)
		}
	}
	if got := backoff(30, nil); got > maxBackoff {
		t.Errorf("backoff(30) = %s, more than %s", got, maxBackoff)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []Config{
		{Model: "m"},
		{URL: "ftp://host/v1", Model: "m"},
		{URL: "http:///v1", Model: "m"},
		{URL: "http://host/v1"},
		{URL: "http://host/v1", Model: "my model"},
		{URL: "http://host/v1", Model: "m", Batch: MaxBatch + 1},
		{URL: "http://host/v1", Model: "m", Batch: -1},
		{URL: "http://host/v1", Model: "m", Dimensions: MaxDimensions + 1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) took it", c)
		}
	}
	c, err := New(Config{URL: "https://user:secret@host/v1", Model: "m"})
	if err != nil || strings.Contains(c.Endpoint(), "secret") || c.Endpoint() != "https://user:xxxxx@host/v1/embeddings" {
		t.Errorf("endpoint %q, %v; want it without the password", c.Endpoint(), err)
	}
}

func TestVectorBytes(t *testing.T) {
	v := []float32{1, -2.5, 0}
	b := EncodeVector(v)
	if want := []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0, 0}; !bytes.Equal(b, want) {
		t.Errorf("EncodeVector = % x, want % x", b, want)
	}
	back, err := DecodeVector(b)
	if err != nil || !near(back, v) {
		t.Errorf("DecodeVector: %v, %v", back, err)
	}
	if _, err := DecodeVector(b[:5]); err == nil {
		t.Error("5 bytes decoded")
	}
	if _, err := DecodeVector(EncodeVector([]float32{float32(math.Inf(1))})); err == nil {
		t.Error("an infinity decoded")
	}
}
