package llm

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// FuzzStreams: whatever a server streams, assembling it returns or fails,
// never panics, and a stream that assembled gives a reply the whole-reply
// reader accepts.
func FuzzStreams(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\",\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"x\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\ndata: [DONE]\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n" +
			"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"data: {\"type\":\"content_block_stop\",\"index\":-1}\n\n",
		": comment\n\ndata:\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := &Stream{OnText: func(string) {}, OnToolCall: func(ToolCall) {}}
		oa := oaStream{stream: s, model: "m"}
		if oa.read(strings.NewReader(body)) == nil && len(oa.reply.Choices) > 0 {
			m := &openAI{httpModel{Config{Name: "m"}}}
			m.response(&oa.reply, &attempt{})
		}
		an := anStream{stream: s, model: "m"}
		if an.read(strings.NewReader(body)) == nil {
			m := &anthropic{httpModel{Config{Name: "m"}}}
			m.response(&an.reply, &attempt{})
		}
	})
}

// TestStreamTextGrowsLinearly: a reply streamed a byte at a time costs
// memory in proportion to its length. Anthropic's text was once joined
// delta by delta, copying the whole text for each, so a hostile server's
// long stream of tiny deltas cost its square.
func TestStreamTextGrowsLinearly(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range n {
		b.WriteString("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n")
	}
	b.WriteString("data: {\"type\":\"message_stop\"}\n\n")
	body := b.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	an := anStream{model: "m"}
	if err := an.read(strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := (&anthropic{httpModel{Config{Name: "m"}}}).response(&an.reply, &attempt{}).Message.Content; len(got) != n {
		t.Fatalf("%d bytes of text, want %d", len(got), n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("assembling %d bytes of text allocated %d MB", n, alloc>>20)
	}
}

// TestInterleavedDeltas: pieces of an earlier tool call after a later one
// began panicked, the builders they were joined in having been copied as
// the list of calls grew. Anthropic's blocks end with a stop event, so
// their pieces may interleave; OpenAI's calls come one after another, and
// a piece for a call already whole is a malformed reply.
func TestInterleavedDeltas(t *testing.T) {
	oa := oaStream{model: "m"}
	body := ""
	for _, d := range []string{`{"index":0,"id":"a","function":{"name":"x","arguments":"{\"k\":"}}`, `{"index":1,"id":"b","function":{"name":"y","arguments":"{}"}}`,
		`{"index":2,"id":"c","function":{"name":"z","arguments":"{}"}}`, `{"index":0,"function":{"arguments":"1}"}}`} {
		body += `data: {"choices":[{"delta":{"tool_calls":[` + d + `]}}]}` + "\n\n"
	}
	if err := oa.read(strings.NewReader(body + "data: [DONE]\n\n")); err == nil || !strings.Contains(err.Error(), "tool call 0 goes on after a later one began") {
		t.Errorf("openai: %v", err)
	}
	an := anStream{model: "m"}
	body = ""
	for i := range 3 {
		body += fmt.Sprintf(`data: {"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"t%d","name":"x"}}`+"\n\n", i, i)
		body += fmt.Sprintf(`data: {"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":"{\"k\":"}}`+"\n\n", i)
	}
	for i := range 3 {
		body += fmt.Sprintf(`data: {"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":"%d}"}}`+"\n\n", i, i)
		body += fmt.Sprintf(`data: {"type":"content_block_stop","index":%d}`+"\n\n", i)
	}
	if err := an.read(strings.NewReader(body + "data: {\"type\":\"message_stop\"}\n\n")); err != nil {
		t.Fatal(err)
	}
	if got := string(an.reply.Content[0].Input); got != `{"k":0}` {
		t.Errorf("anthropic: first block's input %s", got)
	}
}
