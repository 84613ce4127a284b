package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/okf-tools/okf/internal/tokens"
)

// ScriptReply is one line of a conversation file: the assistant message
// the script provider returns for the next call, and the usage to report.
// Without a usage, the call is counted (measuredUsage).
type ScriptReply struct {
	Content   string `json:"content,omitempty"`
	ToolCalls []struct {
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls,omitempty"`
	Usage *Usage `json:"usage,omitempty"`
}

// script replays a conversation file: each call returns the next line's
// reply, whatever the request, so a run is reproduced with no network.
type script struct {
	c       Config
	mu      sync.Mutex
	replies []ScriptReply
	next    int
}

func newScript(c Config) (Client, error) {
	if c.Script == "" {
		return nil, fmt.Errorf("model %s: the script provider needs a conversation file (script: in okf.yaml)", c.Name)
	}
	f, err := os.Open(c.Script)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.Name, err)
	}
	defer f.Close()
	s := &script{c: c}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var r ScriptReply
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", c.Script, line, err)
		}
		s.replies = append(s.replies, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Script, err)
	}
	if len(s.replies) == 0 {
		return nil, fmt.Errorf("%s: no replies", c.Script)
	}
	return s, nil
}

func (s *script) Name() string { return s.c.Name }

// Provider is "script".
func (s *script) Provider() string { return Script }

func (s *script) Chat(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.replies) {
		return nil, fmt.Errorf("model %s: %s has no reply left after %d", s.c.Name, s.c.Script, len(s.replies))
	}
	r := s.replies[s.next]
	s.next++
	out := &Response{Message: Message{Role: Assistant, Content: r.Content}, Model: s.c.Model, Finish: "script"}
	for i, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("script_%d_%d", s.next, i)
		}
		args := string(tc.Arguments)
		// A JSON string holds arguments as the model wrote them, broken
		// JSON included; an object is taken as is.
		var str string
		if json.Unmarshal(tc.Arguments, &str) == nil {
			args = str
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: id, Name: tc.Name, Arguments: args})
	}
	if r.Usage != nil {
		out.Usage = *r.Usage
	} else {
		out.Usage = measuredUsage(req, out.Message)
	}
	out.Cost = s.c.Price.Cost(out.Usage)
	req.Stream.replay(out.Message)
	return out, nil
}

// measuredUsage counts a call as o200k tokens, the tokenizer of OpenAI's
// current models: the request's system prompt, tools and messages as its
// input, the reply's text and tool calls as its output. A replayed run
// whose conversation file states no usage thus shows what its prompts
// would cost, strategy by strategy; a provider's own tokenizer and
// message framing count somewhat differently.
func measuredUsage(req *Request, reply Message) Usage {
	in := tokens.Count(req.System)
	for _, t := range req.Tools {
		in += tokens.Count(t.Name) + tokens.Count(t.Description) + tokens.Count(string(t.Parameters))
	}
	for _, m := range req.Messages {
		in += messageTokens(m)
	}
	return Usage{Input: in, Output: messageTokens(reply)}
}

func messageTokens(m Message) int {
	n := tokens.Count(m.Content)
	for _, tc := range m.ToolCalls {
		n += tokens.Count(tc.Name) + tokens.Count(tc.Arguments)
	}
	return n
}
