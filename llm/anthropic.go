package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// anthropic speaks the Messages API. The system prompt, the tools and the
// conversation's last user turns are marked as cache breakpoints, so each
// later call of a run reads what came before from the provider's prompt
// cache.
type anthropic struct{ httpModel }

// anthropicVersion is the API version the wire format follows.
const anthropicVersion = "2023-06-01"

type anBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      string          `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *anCache        `json:"cache_control,omitempty"`
}

type anCache struct {
	Type string `json:"type"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *anCache        `json:"cache_control,omitempty"`
}

type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      []anBlock   `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Tools       []anTool    `json:"tools,omitempty"`
	Temperature *float64    `json:"temperature,omitempty"`
	Stream      bool        `json:"stream,omitempty"`
}

type anResponse struct {
	Model      string    `json:"model"`
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      *anUsage  `json:"usage"`
	// Error is set when a server answered 200 with an error object.
	Error *wireError `json:"error"`
}

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (m *anthropic) Chat(ctx context.Context, req *Request) (*Response, error) {
	body := m.body(req)
	stream := req.Stream != nil && !m.c.NoStream
	body.Stream = stream
	headers := map[string]string{"anthropic-version": anthropicVersion}
	if m.c.APIKey != "" {
		headers["x-api-key"] = m.c.APIKey
	}
	acc := anStream{stream: req.Stream, model: m.c.Name}
	x := exchange{path: "/v1/messages", headers: headers, body: body, reply: &acc.reply, parseErr: anthropicError}
	if stream {
		x.stream = &acc
	}
	a, err := m.call(ctx, x)
	if err != nil {
		return nil, m.charge(err, acc.lost.Add(acc.reply.Usage.usage()))
	}
	if e := acc.reply.Error; e != nil {
		err := fmt.Errorf("model %s: the server answered with an error: %s", m.c.Name, strings.TrimPrefix(e.Type+": "+e.Message, ": "))
		return nil, m.charge(a.failed(err), acc.lost.Add(acc.reply.Usage.usage()))
	}
	out := m.response(&acc.reply, a)
	m.settle(out, acc.lost)
	if !stream || a.whole {
		req.Stream.replay(out.Message)
	}
	return out, nil
}

// body is the request for the Messages API.
func (m *anthropic) body(req *Request) anRequest {
	ephemeral := &anCache{Type: "ephemeral"}
	body := anRequest{Model: m.c.Model, MaxTokens: m.c.MaxTokens, Temperature: m.c.Temperature}
	if req.System != "" {
		body.System = []anBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	for i, t := range req.Tools {
		at := anTool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}
		if i == len(req.Tools)-1 {
			at.CacheControl = ephemeral
		}
		body.Tools = append(body.Tools, at)
	}
	for _, msg := range req.Messages {
		role, blocks := "user", []anBlock(nil)
		switch msg.Role {
		case Assistant:
			role = "assistant"
			if msg.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				input := json.RawMessage(tc.Arguments)
				if !json.Valid(input) || !strings.HasPrefix(strings.TrimSpace(tc.Arguments), "{") {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
		case ToolRole:
			blocks = []anBlock{{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: msg.Content, IsError: msg.IsError}}
		default:
			blocks = []anBlock{{Type: "text", Text: msg.Content}}
		}
		// An empty reply (Claude may end a turn after tool results with
		// no content) is left out: the API refuses an assistant turn
		// without content, and the turns either side then merge.
		if len(blocks) == 0 {
			continue
		}
		// The API wants user and assistant turns to alternate: tool
		// results and a following nudge share one user turn.
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			continue
		}
		body.Messages = append(body.Messages, anMessage{Role: role, Content: blocks})
	}
	markConversation(body.Messages, ephemeral)
	return body
}

// conversationBreakpoints is how many cache breakpoints go on the
// conversation: the API allows four, and the system prompt and the tools
// take two.
const conversationBreakpoints = 2

// markConversation puts cache breakpoints on the last block of the last
// user turns, so that each call of a run reads every earlier step from
// the provider's prompt cache and writes only what it adds: the newest
// turn writes the cache the next call reads, and the one before it is
// where this call finds the last one's.
func markConversation(msgs []anMessage, c *anCache) {
	left := conversationBreakpoints
	for i := len(msgs) - 1; i >= 0 && left > 0; i-- {
		if msgs[i].Role == "user" && len(msgs[i].Content) > 0 {
			msgs[i].Content[len(msgs[i].Content)-1].CacheControl = c
			left--
		}
	}
}

// response reads a reply, whole or assembled from a stream.
func (m *anthropic) response(r *anResponse, a *attempt) *Response {
	out := &Response{
		Model: r.Model, Finish: r.StopReason, RequestID: a.requestID,
		ModelTime: a.modelTime, Waited: a.waited, Retries: a.retries,
		Message: Message{Role: Assistant},
	}
	var text []string
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			out.Message.ToolCalls = append(out.Message.ToolCalls, b.toolCall())
		}
	}
	out.Message.Content = strings.Join(text, "\n")
	if r.Usage == nil {
		return out // no usage, no price: the cost is unknown, not 0
	}
	out.Usage = r.Usage.usage()
	out.Cost = m.c.Price.Cost(out.Usage)
	return out
}

// usage is what the provider reported, none when it reported nothing.
func (u *anUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{
		Input:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		Output:     u.OutputTokens,
		Cached:     u.CacheReadInputTokens,
		CacheWrite: u.CacheCreationInputTokens,
	}
}

// toolCall is a tool_use block as a call, its input compacted so that it
// reads the same streamed and whole.
func (b anBlock) toolCall() ToolCall {
	args := compactJSON(string(b.Input))
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return ToolCall{ID: b.ID, Name: b.Name, Arguments: args}
}

// anStream assembles a streamed reply (message_start, content_block_*,
// message_delta events) into the reply the same answer gives whole,
// telling stream as it goes.
type anStream struct {
	stream *Stream
	model  string
	// lost is what the attempts that broke off were billed.
	lost  Usage
	reply anResponse
	parts []*strings.Builder // each block's text or partial_json, joined once it is whole
	ended []bool             // each block's content_block_stop came
	// stopped is set by message_stop, the stream's last event.
	stopped bool
}

// retry keeps what a broken attempt was billed and starts afresh.
func (s *anStream) retry(err error) {
	s.lost = s.lost.Add(s.reply.Usage.usage())
	*s = anStream{stream: s.stream, model: s.model, lost: s.lost}
	s.stream.retry(err)
}

type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model string   `json:"model"`
		Usage *anUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *anBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *wireError `json:"error"`
}

// maxStreamBlocks bounds the content blocks of one streamed reply.
const maxStreamBlocks = 256

// read assembles one attempt's reply, whole at message_stop: a stream
// that ends before it broke off.
func (s *anStream) read(r io.Reader) error {
	if err := s.events(r); err != nil {
		return err
	}
	if !s.stopped {
		return errUnfinished
	}
	for i := range s.reply.Content {
		if b := &s.reply.Content[i]; b.Type == "text" {
			b.Text = s.parts[i].String()
		}
	}
	return nil
}

func (s *anStream) events(r io.Reader) error {
	return readEvents(r, func(_, data string) error {
		var e anEvent
		if err := decodeEvent(s.model, data, &e); err != nil {
			return err
		}
		block := func() (*anBlock, error) {
			if e.Index < 0 || e.Index >= len(s.reply.Content) {
				return nil, fmt.Errorf("model %s: malformed event: %s for block %d of %d", s.model, e.Type, e.Index, len(s.reply.Content))
			}
			return &s.reply.Content[e.Index], nil
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				s.reply.Model = e.Message.Model
				s.reply.Usage = e.Message.Usage
			}
		case "content_block_start":
			if e.ContentBlock == nil || e.Index != len(s.reply.Content) || e.Index >= maxStreamBlocks {
				return fmt.Errorf("model %s: malformed event: block %d starts after %d", s.model, e.Index, len(s.reply.Content))
			}
			b := *e.ContentBlock
			if b.Type == "text" && s.hasText() {
				s.stream.text("\n")
			}
			if b.Type == "text" {
				s.stream.text(b.Text)
			}
			part := &strings.Builder{}
			part.WriteString(b.Text)
			b.Text, b.Input = "", nil
			s.reply.Content = append(s.reply.Content, b)
			s.parts, s.ended = append(s.parts, part), append(s.ended, false)
		case "content_block_delta":
			if _, err := block(); err != nil || e.Delta == nil {
				return err
			}
			switch e.Delta.Type {
			case "text_delta":
				s.parts[e.Index].WriteString(e.Delta.Text)
				s.stream.text(e.Delta.Text)
			case "input_json_delta":
				s.parts[e.Index].WriteString(e.Delta.PartialJSON)
			}
		case "content_block_stop":
			b, err := block()
			if err != nil {
				return err
			}
			s.ended[e.Index] = true
			if b.Type == "tool_use" {
				b.Input = json.RawMessage(s.parts[e.Index].String())
				s.stream.toolCall(b.toolCall())
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				s.reply.StopReason = e.Delta.StopReason
			}
			if e.Usage != nil && s.reply.Usage != nil {
				s.reply.Usage.OutputTokens = e.Usage.OutputTokens
			}
		case "message_stop":
			// A tool call whose block never stopped may be cut short:
			// its input is read only once whole.
			for i, b := range s.reply.Content {
				if b.Type == "tool_use" && !s.ended[i] {
					return fmt.Errorf("model %s: malformed event: block %d (tool_use) never stopped", s.model, i)
				}
			}
			s.stopped = true
			return io.EOF
		case "error":
			if e.Error != nil {
				return streamError(s.model, e.Error.Type, e.Error.Message)
			}
			return streamError(s.model, "", data)
		}
		return nil
	})
}

// hasText reports whether a text block came before the one starting, so
// that the stream hears the line break the whole reply joins them with.
func (s *anStream) hasText() bool {
	for _, b := range s.reply.Content {
		if b.Type == "text" {
			return true
		}
	}
	return false
}

// anthropicError reads {"type": "error", "error": {"type": ..., "message": ...}}.
func anthropicError(body []byte) (string, string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return "", strings.TrimSpace(truncate(string(body), 300))
	}
	return e.Error.Type, e.Error.Message
}
