// Package llm is okf's one way to talk to a chat model: a request of
// messages and tools in, an assistant message with tool calls out, with the
// usage the provider measured (input, output, reasoning and cached tokens),
// the cost from a price table (unknown stays unknown), the time the model
// took and the time spent waiting out rate limits, kept apart.
//
// Providers speak the wire formats themselves over net/http: any
// OpenAI-compatible chat-completions endpoint (OpenAI, NVIDIA NIM, Groq,
// Ollama, vLLM, OpenRouter, Gemini's compatible endpoint), Anthropic's
// Messages API, and "script", which replays a conversation file so a run
// can be reproduced with no network.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Role is who wrote a message.
type Role string

// The roles of a conversation. The system prompt is not a message: it is
// Request.System.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the tools an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one tool an assistant asked for. Arguments are the raw text
// the model wrote, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool offered to the model; Parameters is a JSON Schema object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one call to the model. System and Tools come first on the
// wire and should stay the same across a run's calls, so provider prompt
// caches hit.
type Request struct {
	System   string
	Tools    []Tool
	Messages []Message
	// Stream, when set, hears the reply as it is written (Config.NoStream
	// turns the wire's streaming off; the stream then hears the whole
	// reply at once).
	Stream *Stream
}

// Usage is what the provider reported for a call. Input counts every prompt
// token, cached ones included; Cached is the part read from the provider's
// prompt cache and CacheWrite the part written to it (Anthropic). Output
// counts every generated token, reasoning included; Reasoning is the part
// spent thinking, when the provider says.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	Reasoning  int `json:"reasoning"`
	Cached     int `json:"cached"`
	CacheWrite int `json:"cache_write"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.Reasoning + v.Reasoning, u.Cached + v.Cached, u.CacheWrite + v.CacheWrite}
}

// Response is the model's answer to a Request.
type Response struct {
	Message Message
	Usage   Usage
	// Cost is in US dollars, nil when the model's price is unknown.
	Cost *float64
	// ModelTime is how long the successful attempt took; Waited is the time
	// spent on failed attempts and waiting before retries.
	ModelTime, Waited time.Duration
	// Retries counts the attempts that failed before this one.
	Retries int
	// Model is the model the provider says answered.
	Model string
	// Finish is the provider's stop reason, as it wrote it.
	Finish string
	// RequestID is the provider's id of the request, when it gave one.
	RequestID string
}

// Truncated reports whether the reply stopped at the output token limit
// (MaxTokens): its text or its last tool call may be cut short.
func (r *Response) Truncated() bool {
	return r.Finish == "length" || r.Finish == "max_tokens"
}

// Client is a chat model.
type Client interface {
	Chat(ctx context.Context, req *Request) (*Response, error)
	// Name is the model as configured, e.g. "openai/gpt-4.1-mini".
	Name() string
}

// Providers.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Script    = "script"
)

// Config describes one model endpoint.
type Config struct {
	// Name labels the model in traces; defaults to Provider/Model.
	Name     string
	Provider string // openai (any compatible endpoint), anthropic or script
	Model    string // the model's id at the provider
	BaseURL  string // default https://api.openai.com/v1 or https://api.anthropic.com
	// APIKey is the secret; KeyEnv names where it was looked for, for
	// error messages.
	APIKey, KeyEnv string
	// Script is the conversation file the script provider replays.
	Script     string
	Timeout    time.Duration // per attempt; default 2m
	MaxRetries int           // on 429 and 5xx; default 5, negative for none
	MaxTokens  int           // output cap; default 4096
	// NoStream asks for whole replies even when a Request has a Stream,
	// for endpoints that do not stream.
	NoStream    bool
	Temperature *float64
	// Price overrides the built-in price table.
	Price *Price
	// HTTP is the client to use; default http.DefaultClient.
	HTTP *http.Client
	// Sleep waits between retries; default a timer honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Default endpoints.
const (
	DefaultOpenAIURL    = "https://api.openai.com/v1"
	DefaultAnthropicURL = "https://api.anthropic.com"
)

// New returns a client for c. A missing key is an error naming where it
// was looked for, except for endpoints on this machine (Ollama, vLLM),
// which need none.
func New(c Config) (Client, error) {
	if c.Model == "" && c.Provider != Script {
		return nil, errors.New("no model id: set model in okf.yaml or pass --model provider/model")
	}
	if c.Name == "" {
		c.Name = c.Provider + "/" + c.Model
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 5
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 4096
	}
	if c.HTTP == nil {
		c.HTTP = http.DefaultClient
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Price == nil {
		if p, ok := LookupPrice(c.Model); ok {
			c.Price = &p
		}
	}
	switch c.Provider {
	case OpenAI:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOpenAIURL
		}
		if err := needKey(c, "OPENAI_API_KEY"); err != nil {
			return nil, err
		}
		return &openAI{httpModel{c}}, nil
	case Anthropic:
		if c.BaseURL == "" {
			c.BaseURL = DefaultAnthropicURL
		}
		if err := needKey(c, "ANTHROPIC_API_KEY"); err != nil {
			return nil, err
		}
		return &anthropic{httpModel{c}}, nil
	case Script:
		return newScript(c)
	case "":
		return nil, fmt.Errorf("model %s: no provider (one of openai, anthropic, script)", c.Name)
	}
	return nil, fmt.Errorf("model %s: unknown provider %q (one of openai, anthropic, script)", c.Name, c.Provider)
}

func needKey(c Config, env string) error {
	if c.APIKey != "" || isLocal(c.BaseURL) {
		return nil
	}
	if c.KeyEnv != "" {
		env = c.KeyEnv
	}
	return fmt.Errorf("model %s: no API key: set %s in the environment or in .env", c.Name, env)
}

// isLocal reports whether a base URL points at this machine.
func isLocal(base string) bool {
	rest, ok := strings.CutPrefix(base, "http://")
	if !ok {
		rest, _ = strings.CutPrefix(base, "https://")
	}
	host, _, _ := strings.Cut(rest, "/")
	if h, _, ok := strings.Cut(host, "]:"); ok {
		host = h + "]"
	} else if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	return host == "localhost" || host == "127.0.0.1" || host == "[::1]"
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
