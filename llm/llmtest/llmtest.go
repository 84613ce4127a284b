// Package llmtest is a scripted model server for tests: an httptest
// server that speaks the OpenAI chat-completions and the Anthropic
// Messages wire formats, answering each request with the next scripted
// turn (text, tool calls and usage, an HTTP error with Retry-After, or a
// raw body such as a malformed reply), and keeping every request it got.
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
	// Raw, when set, is sent as the 200 body verbatim.
	Raw string
}

// Server is a running scripted server.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	turns    []Turn
	requests []map[string]any
	headers  []http.Header
}

// New starts a server that plays turns in order; it is closed when the
// test ends. A request beyond the script fails the test.
func New(t testing.TB, turns ...Turn) *Server {
	s := &Server{turns: turns}
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
		if n > len(s.turns) {
			t.Errorf("llmtest: request %d beyond the %d scripted turns", n, len(s.turns))
			http.Error(w, "no more turns", http.StatusGone)
			return
		}
		anthropic := r.URL.Path == "/v1/messages"
		if !anthropic && r.URL.Path != "/v1/chat/completions" {
			t.Errorf("llmtest: unexpected path %s", r.URL.Path)
		}
		writeTurn(w, s.turns[n-1], anthropic, n)
	}))
	t.Cleanup(s.Close)
	return s
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

func writeTurn(w http.ResponseWriter, t Turn, anthropic bool, n int) {
	w.Header().Set("Content-Type", "application/json")
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
		stop := "end_turn"
		if len(t.Calls) > 0 {
			stop = "tool_use"
		}
		body = map[string]any{
			"id": "msg_" + strconv.Itoa(n), "type": "message", "role": "assistant", "model": "scripted",
			"content": content, "stop_reason": stop,
			"usage": map[string]any{"input_tokens": t.Input - t.Cached, "output_tokens": t.Output,
				"cache_read_input_tokens": t.Cached, "cache_creation_input_tokens": 0},
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
		finish := "stop"
		if len(calls) > 0 {
			msg["tool_calls"] = calls
			finish = "tool_calls"
		}
		body = map[string]any{
			"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion", "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage": map[string]any{"prompt_tokens": t.Input, "completion_tokens": t.Output, "total_tokens": t.Input + t.Output,
				"prompt_tokens_details":     map[string]any{"cached_tokens": t.Cached},
				"completion_tokens_details": map[string]any{"reasoning_tokens": t.Reasoning}},
		}
	}
	json.NewEncoder(w).Encode(body)
}
