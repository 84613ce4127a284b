package llm

import (
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
