package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// openAI speaks the chat-completions wire format, which OpenAI and most
// other providers (NIM, Groq, Ollama, vLLM, OpenRouter, Gemini) accept.
type openAI struct{ httpModel }

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaRequest struct {
	Model               string           `json:"model"`
	Messages            []oaMessage      `json:"messages"`
	Tools               []oaTool         `json:"tools,omitempty"`
	MaxTokens           int              `json:"max_tokens,omitempty"`
	MaxCompletionTokens int              `json:"max_completion_tokens,omitempty"`
	Temperature         *float64         `json:"temperature,omitempty"`
	Stream              bool             `json:"stream,omitempty"`
	StreamOptions       *oaStreamOptions `json:"stream_options,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaResponse struct {
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   *oaUsage   `json:"usage"`
}

type oaChoice struct {
	Message      oaReply `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// oaReply is a reply's message as servers write it: the content a string
// or a list of parts, and tool arguments a JSON string or, from some
// compatible servers, the object itself.
type oaReply struct {
	Content   json.RawMessage `json:"content"`
	ToolCalls []oaReplyCall   `json:"tool_calls"`
}

type oaReplyCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// text reads a reply's content: a string, null, or parts of which the
// text ones count.
func (r oaReply) text() (string, error) {
	raw := bytes.TrimSpace(r.Content)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor a list of parts: %w", err)
	}
	var text []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "output_text" {
			text = append(text, p.Text)
		}
	}
	return strings.Join(text, ""), nil
}

// arguments reads a tool call's arguments as the JSON text of an object.
func arguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return "{}", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case raw[0] == '{':
		var b bytes.Buffer
		err := json.Compact(&b, raw)
		return b.String(), err
	}
	return "", fmt.Errorf("tool arguments are %.40s, not an object", raw)
}

func (m *openAI) Chat(ctx context.Context, req *Request) (*Response, error) {
	body := m.body(req)
	stream := req.Stream != nil && !m.c.NoStream
	if stream {
		body.Stream, body.StreamOptions = true, &oaStreamOptions{IncludeUsage: true}
	}
	headers := map[string]string{}
	if m.c.APIKey != "" {
		headers["Authorization"] = "Bearer " + m.c.APIKey
	}
	acc := oaStream{stream: req.Stream, model: m.c.Name}
	x := exchange{path: "/chat/completions", headers: headers, body: body, reply: &acc.reply, parseErr: openAIError}
	if stream {
		x.stream = &acc
	}
	a, err := m.call(ctx, x)
	if err != nil {
		return nil, m.charge(err, acc.lost.Add(acc.reply.Usage.usage()))
	}
	out, err := m.response(&acc.reply, a)
	if err != nil {
		return nil, m.charge(a.failed(err), acc.lost.Add(acc.reply.Usage.usage()))
	}
	m.settle(out, acc.lost)
	if !stream || a.whole {
		req.Stream.replay(out.Message)
	}
	return out, nil
}

// body is the request for the chat-completions API.
func (m *openAI) body(req *Request) oaRequest {
	body := oaRequest{Model: m.c.Model, Temperature: m.c.Temperature}
	// OpenAI's own API wants max_completion_tokens (its reasoning models
	// refuse max_tokens); compatible servers know max_tokens.
	if strings.HasPrefix(m.c.BaseURL, DefaultOpenAIURL) {
		body.MaxCompletionTokens = m.c.MaxTokens
	} else {
		body.MaxTokens = m.c.MaxTokens
	}
	if req.System != "" {
		body.Messages = append(body.Messages, oaMessage{Role: "system", Content: &req.System})
	}
	for _, t := range req.Tools {
		var ot oaTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.Parameters
		body.Tools = append(body.Tools, ot)
	}
	for _, msg := range req.Messages {
		om := oaMessage{Role: string(msg.Role), ToolCallID: msg.ToolCallID}
		content := msg.Content
		om.Content = &content
		for _, tc := range msg.ToolCalls {
			var c oaToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
			om.ToolCalls = append(om.ToolCalls, c)
		}
		if msg.Role == Assistant && content == "" && len(om.ToolCalls) > 0 {
			om.Content = nil
		}
		body.Messages = append(body.Messages, om)
	}
	return body
}

// response reads a reply, whole or assembled from a stream.
func (m *openAI) response(r *oaResponse, a *attempt) (*Response, error) {
	if len(r.Choices) == 0 {
		// Some servers answer 200 with an error object: say what it says.
		if typ, msg := openAIError(a.body); msg != "" && bytes.Contains(a.body, []byte(`"error"`)) {
			return nil, fmt.Errorf("model %s: the server answered with an error: %s", m.c.Name, strings.TrimPrefix(typ+": "+msg, ": "))
		}
		if a.whole {
			return nil, fmt.Errorf("model %s: malformed reply: no choices, in one JSON object answering a streaming request (no_stream: true in okf.yaml, or --no-stream, asks for whole replies)", m.c.Name)
		}
		return nil, fmt.Errorf("model %s: malformed reply: no choices", m.c.Name)
	}
	ch := r.Choices[0]
	out := &Response{
		Model: r.Model, Finish: ch.FinishReason, RequestID: a.requestID,
		ModelTime: a.modelTime, Waited: a.waited, Retries: a.retries,
		Message: Message{Role: Assistant},
	}
	var err error
	if out.Message.Content, err = ch.Message.text(); err != nil {
		return nil, fmt.Errorf("model %s: malformed reply: %w", m.c.Name, err)
	}
	for i, tc := range ch.Message.ToolCalls {
		call, err := tc.call(i)
		if err != nil {
			return nil, fmt.Errorf("model %s: malformed reply: %s: %w", m.c.Name, tc.Function.Name, err)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, call)
	}
	if r.Usage == nil {
		return out, nil // no usage, no price: the cost is unknown, not 0
	}
	out.Usage = r.Usage.usage()
	out.Cost = m.c.Price.Cost(out.Usage)
	return out, nil
}

// usage is what the provider reported, none when it reported nothing.
func (u *oaUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.Cached = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.Reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// call is the i-th tool call of a reply.
func (tc oaReplyCall) call(i int) (ToolCall, error) {
	id := tc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d", i)
	}
	args, err := arguments(tc.Function.Arguments)
	return ToolCall{ID: id, Name: tc.Function.Name, Arguments: args}, err
}

// oaStream assembles a streamed reply (chat.completion.chunk events)
// into the reply the same answer gives whole, telling stream as it goes.
type oaStream struct {
	stream *Stream
	model  string
	// lost is what the attempts that broke off were billed.
	lost  Usage
	reply oaResponse
	text  strings.Builder
	calls []oaReplyCall
	args  []*strings.Builder
	told  int // tool calls already given to the stream
	// done is set by [DONE], finished by a finish reason.
	done, finished bool
}

type oaChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage   `json:"usage"`
	Error *wireError `json:"error"`
}

// maxStreamCalls bounds the tool calls of one streamed reply.
const maxStreamCalls = 128

// retry keeps what a broken attempt was billed and starts afresh.
func (s *oaStream) retry(err error) {
	s.lost = s.lost.Add(s.reply.Usage.usage())
	*s = oaStream{stream: s.stream, model: s.model, lost: s.lost}
	s.stream.retry(err)
}

// read assembles one attempt's reply. It is whole at [DONE], or, for
// servers that never send it, once it has its finish reason and the
// usage that comes after it; a stream that ends before either broke off,
// and its last tool call, perhaps cut short, is never told.
func (s *oaStream) read(r io.Reader) error {
	err := readEvents(r, func(_, data string) error {
		if strings.TrimSpace(data) == "[DONE]" {
			s.done = true
			return io.EOF
		}
		var c oaChunk
		if err := decodeEvent(s.model, data, &c); err != nil {
			return err
		}
		if c.Error != nil {
			return streamError(s.model, c.Error.Type, c.Error.Message)
		}
		if c.Model != "" {
			s.reply.Model = c.Model
		}
		if c.Usage != nil {
			s.reply.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			if t := ch.Delta.Content; t != nil {
				s.text.WriteString(*t)
				s.stream.text(*t)
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index < 0 || d.Index >= maxStreamCalls {
					return fmt.Errorf("model %s: malformed event: tool call index %d", s.model, d.Index)
				}
				if d.Index < s.told {
					return fmt.Errorf("model %s: malformed event: tool call %d goes on after a later one began", s.model, d.Index)
				}
				s.tell(d.Index)
				for len(s.calls) <= d.Index {
					s.calls, s.args = append(s.calls, oaReplyCall{}), append(s.args, &strings.Builder{})
				}
				if d.ID != "" {
					s.calls[d.Index].ID = d.ID
				}
				if d.Function.Name != "" {
					s.calls[d.Index].Function.Name = d.Function.Name
				}
				s.args[d.Index].WriteString(d.Function.Arguments)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				s.reply.Choices = []oaChoice{{FinishReason: *ch.FinishReason}}
				s.finished = true
				s.tell(len(s.calls))
			}
		}
		return nil
	})
	whole := s.done || s.finished && s.reply.Usage != nil
	if errors.Is(err, errMidEvent) && whole {
		err = nil // cut in the [DONE] after a reply already whole
	}
	if err != nil {
		return err
	}
	if !whole {
		return errUnfinished
	}
	s.tell(len(s.calls))
	if len(s.reply.Choices) == 0 && (s.text.Len() > 0 || len(s.calls) > 0) {
		s.reply.Choices = []oaChoice{{}}
	}
	if len(s.reply.Choices) > 0 {
		msg := &s.reply.Choices[0].Message
		msg.Content, _ = json.Marshal(s.text.String())
		msg.ToolCalls = s.calls
	}
	return nil
}

// tell gives the stream the tool calls before index n, which are whole:
// a later one has begun, or the reply has finished.
func (s *oaStream) tell(n int) {
	for ; s.told < min(n, len(s.calls)); s.told++ {
		raw, _ := json.Marshal(s.args[s.told].String())
		s.calls[s.told].Function.Arguments = raw
		if call, err := s.calls[s.told].call(s.told); err == nil {
			s.stream.toolCall(call)
		}
	}
}

// openAIError reads {"error": {"type": ..., "code": ..., "message": ...}}.
func openAIError(body []byte) (string, string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return "", strings.TrimSpace(truncate(string(body), 300))
	}
	typ := e.Error.Type
	if c, ok := e.Error.Code.(string); ok && c != "" {
		typ = c
	}
	return typ, e.Error.Message
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
