// Package embedtest is a scripted embeddings server for tests and for okf
// bench: a loopback HTTP server that speaks the OpenAI /v1/embeddings wire
// format and embeds deterministically, with no model. A text's vector is
// a hashed bag of its lower-cased words and of their stems (their first
// five letters), so texts that share words are similar and texts that
// share none are nearly orthogonal. It counts the requests and texts it
// got, and plays scripted faults (an HTTP status with Retry-After, a raw
// body such as broken JSON, a reply with vectors missing, one padded past
// any sane size) before answering normally again.
//
// It uses net/http rather than httptest, so that okf bench can start one
// in its own process.
package embedtest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"unicode"
)

// DefaultDim is the dimension of the vectors when a request asks for none.
const DefaultDim = 64

// StemLen is how many letters of a word make its stem.
const StemLen = 5

// Fault is one scripted misbehaviour, played for one request.
type Fault struct {
	// Status answers with this HTTP status and an OpenAI-shaped error
	// body; RetryAfter sets the Retry-After header.
	Status     int
	RetryAfter string
	// Raw answers 200 with this body verbatim.
	Raw string
	// Drop answers with this many vectors fewer than texts.
	Drop int
	// Pad writes this many spaces before a correct reply's body.
	Pad int64
	// Base64 writes the vectors as base64 strings of little-endian
	// float32s, as for encoding_format "base64".
	Base64 bool
}

// Server is a running scripted server.
type Server struct {
	// APIKey, when set, is the bearer token every request must carry.
	APIKey string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	faults   []Fault
	calls    int
	texts    int
	requests []Request
}

// Request is what a request asked for.
type Request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions"`
	// Authorization is the header as sent, and Body the body.
	Authorization string `json:"-"`
	Body          string `json:"-"`
}

// Start starts a server on a free loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedtest: %w", err)
	}
	s := &Server{ln: ln}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// TB is what New needs of a test.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// New starts a server that is closed when the test ends.
func New(t TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Shutdown(context.Background()) }

// URL is the API's base, as okf.yaml's embeddings.url takes it.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Fail scripts faults for the next requests, one each, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Calls returns how many requests it got, faults included.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Texts returns how many texts the requests it answered carried.
func (s *Server) Texts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts
}

// Requests returns the requests it got, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ServeHTTP answers one request, so that a test may put the server behind
// a handler of its own (one that breaks connections, say).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var raw struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error())
		return
	}
	req := Request{Model: raw.Model, EncodingFormat: raw.EncodingFormat, Dimensions: raw.Dimensions, Authorization: r.Header.Get("Authorization"), Body: string(body)}
	// input is a string or a list of strings.
	var one string
	if json.Unmarshal(raw.Input, &one) == nil {
		req.Input = []string{one}
	} else if err := json.Unmarshal(raw.Input, &req.Input); err != nil {
		writeError(w, http.StatusBadRequest, "input is neither a string nor a list of strings")
		return
	}
	s.mu.Lock()
	s.calls++
	s.requests = append(s.requests, req)
	var f Fault
	if len(s.faults) > 0 {
		f, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	switch {
	case s.APIKey != "" && req.Authorization != "Bearer "+s.APIKey:
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided")
		return
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, f.Status, fmt.Sprintf("scripted status %d", f.Status))
		return
	case f.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, f.Raw)
		return
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "you must provide a model parameter")
		return
	case len(req.Input) == 0:
		writeError(w, http.StatusBadRequest, "input must not be empty")
		return
	case req.Dimensions < 0:
		writeError(w, http.StatusBadRequest, "dimensions must be positive")
		return
	}
	for i, t := range req.Input {
		if t == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("input[%d] is empty", i))
			return
		}
	}
	dim := DefaultDim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	s.mu.Lock()
	s.texts += len(req.Input)
	s.mu.Unlock()
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, 0, len(req.Input))
	tokens := 0
	for i, t := range req.Input {
		if i >= len(req.Input)-f.Drop {
			break
		}
		v := Vector(t, dim)
		tokens += len(words(t))
		var e any = v
		if f.Base64 || req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			e = base64.StdEncoding.EncodeToString(b)
		}
		data = append(data, item{Object: "embedding", Index: i, Embedding: e})
	}
	out, _ := json.Marshal(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
	w.Header().Set("Content-Type", "application/json")
	if f.Pad > 0 {
		spaces := []byte(strings.Repeat(" ", 64<<10))
		for n := f.Pad; n > 0; n -= int64(len(spaces)) {
			if _, err := w.Write(spaces[:min(n, int64(len(spaces)))]); err != nil {
				return
			}
		}
	}
	w.Write(out)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}})
	w.Write(out)
}

// words are a text's lower-cased words: runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Vector is the unit vector the server gives a text at a dimension: each
// word adds 1 at a hashed coordinate, with a hashed sign, and its stem
// (its first StemLen letters, for a longer word) 0.5 at another; a text
// without words is the first axis.
func Vector(text string, dim int) []float32 {
	v := make([]float64, dim)
	add := func(kind byte, w string, weight float64) {
		h := fnv.New64a()
		h.Write([]byte{kind})
		h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dim)] += sign * weight
	}
	for _, w := range words(text) {
		add('w', w, 1)
		if r := []rune(w); len(r) > StemLen {
			add('s', string(r[:StemLen]), 0.5)
		} else {
			add('s', w, 0.5)
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, dim)
	if sum == 0 {
		out[0] = 1
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}
