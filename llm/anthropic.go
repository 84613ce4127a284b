package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// anthropic speaks the Messages API. The system prompt and the tools are
// marked as a cache breakpoint, so later calls of a run read them from the
// provider's prompt cache.
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
}

type anResponse struct {
	Model      string    `json:"model"`
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      *struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func (m *anthropic) Chat(ctx context.Context, req *Request) (*Response, error) {
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
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("model %s: encoding the request: %w", m.c.Name, err)
	}
	headers := map[string]string{"anthropic-version": anthropicVersion}
	if m.c.APIKey != "" {
		headers["x-api-key"] = m.c.APIKey
	}
	a, err := m.post(ctx, strings.TrimSuffix(m.c.BaseURL, "/")+"/v1/messages", headers, data, anthropicError)
	if err != nil {
		return nil, err
	}
	var r anResponse
	if err := json.Unmarshal(a.body, &r); err != nil {
		return nil, fmt.Errorf("model %s: malformed reply: %w", m.c.Name, err)
	}
	out := &Response{
		Model: r.Model, Finish: r.StopReason,
		ModelTime: a.modelTime, Waited: a.waited, Retries: a.retries,
		Message: Message{Role: Assistant},
	}
	var text []string
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Message.Content = strings.Join(text, "\n")
	if r.Usage == nil {
		return out, nil // no usage, no price: the cost is unknown, not 0
	}
	u := r.Usage
	out.Usage = Usage{
		Input:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		Output:     u.OutputTokens,
		Cached:     u.CacheReadInputTokens,
		CacheWrite: u.CacheCreationInputTokens,
	}
	out.Cost = m.c.Price.Cost(out.Usage)
	return out, nil
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
