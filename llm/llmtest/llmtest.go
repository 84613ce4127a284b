// Package llmtest is a scripted model server for tests: an httptest
// server that speaks the OpenAI chat-completions and the Anthropic
// Messages wire formats, whole or streamed as server-sent events,
// answering each request with the next scripted turn (text, tool calls
// and usage, a reply cut at the token limit, an HTTP error with its
// headers, a raw body such as a malformed reply, a stream that ends
// before the reply does, or a whole reply to a streaming request), and
// keeping every request it got. With Caching, it reports Anthropic usage as the API's
// prompt cache would: what the request's cache breakpoints wrote before
// is read.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Call is a scripted tool call; Arguments is sent as written.
type Call struct {
	Name, Arguments string
}

// Turn is one scripted reply.
type Turn struct {
	Text  string
	Calls []Call
	// Usage: prompt tokens (cached ones included), cached, output and
	// reasoning tokens, written in each format's own fields.
	Input, Cached, Output, Reasoning int
	// Status, when set, answers with that HTTP status and a provider-shaped
	// error body instead; RetryAfter sets the Retry-After header.
	Status     int
	RetryAfter string
	// Header is sent with the reply, whatever its status (x-request-id,
	// x-should-retry, retry-after-ms).
	Header map[string]string
	// Raw, when set, is sent as the 200 body verbatim.
	Raw string
	// Truncated sends the reply as stopped by the output token limit
	// (finish_reason length, stop_reason max_tokens).
	Truncated bool
	// CutAfter, when above 0, ends a streamed reply cleanly after its
	// first CutAfter events (OpenAI's [DONE] counts as one), as a proxy
	// or a server that fails mid-reply may.
	CutAfter int
	// IgnoreStream answers a streaming request with the whole JSON reply,
	// as endpoints that do not stream do.
	IgnoreStream bool
}

// Server is a running scripted server.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	turns    []Turn
	reply    func(req map[string]any) Turn
	requests []map[string]any
	headers  []http.Header

	// Delay is the pause before each event of a streamed reply, to show
	// a reply arriving word by word.
	Delay time.Duration
	// Caching makes Anthropic usage that of the API's prompt cache; the
	// turns' Input and Cached are then ignored. PrefixOnly honours only
	// the breakpoints of the system prompt and the tools, as a client that
	// marks nothing in the conversation would be served.
	Caching, PrefixOnly bool
	cached              map[string]int // a cached prefix → its tokens
}

// New starts a server that plays turns in order; it is closed when the
// test ends. A request beyond the script fails the test.
func New(t testing.TB, turns ...Turn) *Server {
	s := &Server{turns: turns}
	s.start(t)
	return s
}

// NewReplier starts a server that answers each request with the turn
// reply makes of its decoded body, so that a model can answer by what it
// is asked rather than in a fixed order (several runs at once, a question
// set asked in any order). reply may be called concurrently.
func NewReplier(t testing.TB, reply func(req map[string]any) Turn) *Server {
	s := &Server{reply: reply}
	s.start(t)
	return s
}

// UserText is the text of a request's first user message, in either wire
// format: the question a run asks.
func UserText(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		switch c := msg["content"].(type) {
		case string:
			return c
		case []any:
			for _, block := range c {
				if b, _ := block.(map[string]any); b["type"] == "text" {
					text, _ := b["text"].(string)
					return text
				}
			}
		}
	}
	return ""
}

// At is the value at path in a decoded request (a string is a key of an
// object, an int an index into an array) as a T; a test that finds
// anything else there stops, saying where and what it found, instead of
// panicking.
func At[T any](t testing.TB, v any, path ...any) T {
	t.Helper()
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: %T where an object with %q was wanted", path[:i], v, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k < 0 || k >= len(a) {
				t.Fatalf("%v: %T of %d where an array with index %d was wanted", path[:i], v, len(a), k)
			}
			v = a[k]
		default:
			t.Fatalf("path %v: %T is neither a key nor an index", path, p)
		}
	}
	x, ok := v.(T)
	if !ok {
		t.Fatalf("%v: %T, want %T", path, v, x)
	}
	return x
}

func (s *Server) start(t testing.TB) {
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("llmtest: request body is not JSON: %v", err)
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.headers = append(s.headers, r.Header.Clone())
		n := len(s.requests)
		s.mu.Unlock()
		if s.reply == nil && n > len(s.turns) {
			t.Errorf("llmtest: request %d beyond the %d scripted turns", n, len(s.turns))
			http.Error(w, "no more turns", http.StatusGone)
			return
		}
		anthropic := r.URL.Path == "/v1/messages"
		if !anthropic && r.URL.Path != "/v1/chat/completions" {
			t.Errorf("llmtest: unexpected path %s", r.URL.Path)
		}
		var turn Turn
		if s.reply != nil {
			turn = s.reply(req)
		} else {
			turn = s.turns[n-1]
		}
		var u *usage
		if anthropic && s.Caching && turn.Status == 0 && turn.Raw == "" {
			u = s.cacheUsage(body)
		}
		if stream, _ := req["stream"].(bool); stream && turn.Status == 0 && turn.Raw == "" && !turn.IgnoreStream {
			s.streamTurn(w, turn, anthropic, n, u)
			return
		}
		writeTurn(w, turn, anthropic, n, u)
	}))
	t.Cleanup(s.Close)
}

// OpenAIURL is the base URL for the openai provider.
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// Requests returns the decoded request bodies received so far.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

// Headers returns the headers of the requests received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func writeTurn(w http.ResponseWriter, t Turn, anthropic bool, n int, u *usage) {
	w.Header().Set("Content-Type", "application/json")
	for k, v := range t.Header {
		w.Header().Set(k, v)
	}
	if t.Status != 0 {
		if t.RetryAfter != "" {
			w.Header().Set("Retry-After", t.RetryAfter)
		}
		w.WriteHeader(t.Status)
		if anthropic {
			fmt.Fprintf(w, `{"type":"error","error":{"type":"rate_limit_error","message":"scripted status %d"}}`, t.Status)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"scripted status %d","type":"requests","code":"rate_limit_exceeded"}}`, t.Status)
		}
		return
	}
	if t.Raw != "" {
		io.WriteString(w, t.Raw)
		return
	}
	var body any
	if anthropic {
		content := []map[string]any{}
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		for i, c := range t.Calls {
			// Anthropic sends input as an object; broken arguments cannot
			// occur on this wire, so they are sent as a string field.
			var input any = json.RawMessage(c.Arguments)
			if !json.Valid([]byte(c.Arguments)) {
				input = map[string]any{"raw": c.Arguments}
			}
			content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + strconv.Itoa(n) + "_" + strconv.Itoa(i), "name": c.Name, "input": input})
		}
		body = map[string]any{
			"id": "msg_" + strconv.Itoa(n), "type": "message", "role": "assistant", "model": "scripted",
			"content": content, "stop_reason": t.anthropicStop(), "usage": t.anthropicUsage(u),
		}
	} else {
		msg := map[string]any{"role": "assistant", "content": nil}
		if t.Text != "" {
			msg["content"] = t.Text
		}
		var calls []map[string]any
		for i, c := range t.Calls {
			calls = append(calls, map[string]any{"id": "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		body = map[string]any{
			"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion", "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": t.openAIFinish()}},
			"usage":   t.openAIUsage(),
		}
	}
	json.NewEncoder(w).Encode(body)
}

func (t Turn) openAIFinish() string {
	switch {
	case t.Truncated:
		return "length"
	case len(t.Calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (t Turn) anthropicStop() string {
	switch {
	case t.Truncated:
		return "max_tokens"
	case len(t.Calls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func (t Turn) openAIUsage() map[string]any {
	return map[string]any{"prompt_tokens": t.Input, "completion_tokens": t.Output, "total_tokens": t.Input + t.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": t.Cached},
		"completion_tokens_details": map[string]any{"reasoning_tokens": t.Reasoning}}
}

// startUsage is the usage of a stream's message_start: the input, and
// one output token, the final count coming with message_delta.
func (t Turn) startUsage(u *usage) map[string]any {
	m := t.anthropicUsage(u)
	m["output_tokens"] = 1
	return m
}

// usage is Anthropic's input split: read from the cache, written to it,
// and neither.
type usage struct{ read, write, plain int }

func (t Turn) anthropicUsage(u *usage) map[string]any {
	if u == nil {
		u = &usage{read: t.Cached, plain: t.Input - t.Cached}
	}
	return map[string]any{"input_tokens": u.plain, "output_tokens": t.Output,
		"cache_read_input_tokens": u.read, "cache_creation_input_tokens": u.write}
}

// cacheUsage splits a Messages request's input as the prompt cache does:
// the prompt is the system blocks, the tools, then every message block in
// order, a token being four bytes of their JSON without cache_control.
// The longest prefix ending at a block that an earlier request cached is
// read; the rest up to the request's last breakpoint is written, and each
// of its breakpoints caches the prefix it ends.
func (s *Server) cacheUsage(body []byte) *usage {
	var req struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	var blocks []map[string]any
	blocks = append(blocks, req.System...)
	blocks = append(blocks, req.Tools...)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			b["role"] = m.Role
			if s.PrefixOnly {
				delete(b, "cache_control")
			}
			blocks = append(blocks, b)
		}
	}
	var prefix []byte
	ends := make([]string, len(blocks))
	marked := make([]bool, len(blocks))
	for i, b := range blocks {
		_, marked[i] = b["cache_control"]
		delete(b, "cache_control")
		data, _ := json.Marshal(b)
		prefix = append(prefix, data...)
		ends[i] = string(prefix)
	}
	tokens := func(i int) int { return (len(ends[i]) + 3) / 4 }
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached == nil {
		s.cached = map[string]int{}
	}
	u := &usage{}
	for i := len(ends) - 1; i >= 0; i-- {
		if n, ok := s.cached[ends[i]]; ok {
			u.read = n
			break
		}
	}
	last := -1
	for i := range ends {
		if marked[i] {
			s.cached[ends[i]] = tokens(i)
			last = i
		}
	}
	total := 0
	if len(ends) > 0 {
		total = tokens(len(ends) - 1)
	}
	if last >= 0 && tokens(last) > u.read {
		u.write = tokens(last) - u.read
	}
	u.plain = total - u.read - u.write
	return u
}

// streamTurn writes a turn as server-sent events in the format's own
// shape: text a word at a time, tool arguments in two pieces.
func (s *Server) streamTurn(w http.ResponseWriter, t Turn, anthropic bool, n int, u *usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	for k, v := range t.Header {
		w.Header().Set(k, v)
	}
	flusher, _ := w.(http.Flusher)
	sent := 0
	cut := func() bool {
		sent++
		return t.CutAfter > 0 && sent > t.CutAfter
	}
	send := func(event string, data any) {
		if cut() {
			return
		}
		if s.Delay > 0 {
			time.Sleep(s.Delay)
		}
		b, _ := json.Marshal(data)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	words := splitWords(t.Text)
	if anthropic {
		send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_" + strconv.Itoa(n), "type": "message",
			"role": "assistant", "model": "scripted", "content": []any{}, "usage": t.startUsage(u)}})
		send("ping", map[string]any{"type": "ping"})
		i := 0
		if t.Text != "" {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, w := range words {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": w}})
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
			i++
		}
		for k, c := range t.Calls {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use",
				"id": "toolu_" + strconv.Itoa(n) + "_" + strconv.Itoa(k), "name": c.Name, "input": map[string]any{}}})
			half := len(c.Arguments) / 2
			for _, part := range []string{c.Arguments[:half], c.Arguments[half:]} {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			i++
		}
		send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": t.anthropicStop()}, "usage": map[string]any{"output_tokens": t.Output}})
		send("message_stop", map[string]any{"type": "message_stop"})
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion.chunk", "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, w := range words {
		send("", chunk(map[string]any{"content": w}, nil))
	}
	for k, c := range t.Calls {
		id := "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(k)
		half := len(c.Arguments) / 2
		send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "id": id, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments[:half]}}}}, nil))
		send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "function": map[string]any{"arguments": c.Arguments[half:]}}}}, nil))
	}
	send("", chunk(map[string]any{}, t.openAIFinish()))
	send("", map[string]any{"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion.chunk", "model": "scripted", "choices": []any{}, "usage": t.openAIUsage()})
	if !cut() {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// splitWords cuts a text before each space, so the pieces join back to it.
func splitWords(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
