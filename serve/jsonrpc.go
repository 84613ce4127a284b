package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// JSON-RPC 2.0 error codes okf answers with itself, before a message
// reaches the MCP server.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// codeRefused, in the range JSON-RPC leaves to servers, is a request
	// the server will not serve now: over a limit, or not allowed.
	codeRefused = -32000
	// codeSessionNotFound is a request for a session the server does not
	// hold (404), the code the TypeScript MCP SDK answers it with.
	codeSessionNotFound = -32001
)

// MaxBatch is the most messages a JSON-RPC batch may hold; a larger batch
// is refused whole, so one request never carries unbounded work.
const MaxBatch = 32

// maxDepth is how deeply a message may nest, the MCP SDK's own bound: a
// deeper message would make the SDK end the session.
const maxDepth = 1000

// maxExactID is the largest integer id kept exactly: the SDK reads ids as
// float64.
const maxExactID = 1 << 53

// rpcError is a JSON-RPC error okf answers a malformed message with.
type rpcError struct {
	code int
	msg  string
	id   json.RawMessage // nil answers with id null
}

func (e *rpcError) Error() string { return e.msg }

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type wireErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   wireError       `json:"error"`
}

// response encodes the error as a JSON-RPC response.
func (e *rpcError) response() []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(wireErrorResponse{JSONRPC: "2.0", ID: id, Error: wireError{e.code, e.msg}})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func invalid(id json.RawMessage, format string, args ...any) *rpcError {
	return &rpcError{code: codeInvalidRequest, msg: "invalid request: " + fmt.Sprintf(format, args...), id: id}
}

// rpcMessage is one checked JSON-RPC message, re-encoded with only the
// members the SDK reads, so that what it decodes is what was checked.
type rpcMessage struct {
	// key names the id as the SDK answers it ("" for a notification): a
	// number as the integer it is, a string quoted.
	key    string
	id     json.RawMessage // as sent, nil without one
	method string          // "" for a response
	call   bool            // a request with an id, which gets a response
	wire   []byte
}

// parsePayload checks a JSON-RPC payload: one message, or a batch of at
// most maxBatch (0: batches are refused). An id may be a string or an
// integer, and no id is used twice in a batch.
func parsePayload(data []byte, maxBatch int) (msgs []rpcMessage, batch bool, _ *rpcError) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, false, &rpcError{code: codeParseError, msg: "parse error: the message is not valid JSON"}
	}
	if depth(data) > maxDepth {
		return nil, false, invalid(nil, "the message nests more than %d levels deep", maxDepth)
	}
	if data[0] != '[' {
		m, err := parseMessage(data)
		if err != nil {
			return nil, false, err
		}
		return []rpcMessage{m}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, true, &rpcError{code: codeParseError, msg: "parse error: " + err.Error()}
	}
	switch {
	case maxBatch == 0:
		return nil, true, invalid(nil, "JSON-RPC batches are not taken here: send one message at a time")
	case len(raws) == 0:
		return nil, true, invalid(nil, "the batch is empty")
	case len(raws) > maxBatch:
		return nil, true, invalid(nil, "the batch holds %d messages, at most %d", len(raws), maxBatch)
	}
	seen := map[string]bool{}
	for i, raw := range raws {
		m, err := parseMessage(raw)
		if err != nil {
			err.msg = fmt.Sprintf("batch message %d: %s", i+1, err.msg)
			err.id = nil
			return nil, true, err
		}
		if m.method == "initialize" {
			// MCP: the initialize request must not be part of a batch.
			return nil, true, invalid(nil, "batch message %d: initialize may not be part of a batch: send it alone", i+1)
		}
		if m.call {
			if seen[m.key] {
				return nil, true, invalid(nil, "batch message %d: id %s is used twice", i+1, m.key)
			}
			seen[m.key] = true
		}
		msgs = append(msgs, m)
	}
	return msgs, true, nil
}

// parseMessage checks one message of valid JSON: an object with jsonrpc
// "2.0", and either a method (a request, or a notification without id) or
// a result or error for an id (a response).
func parseMessage(data []byte) (rpcMessage, *rpcError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return rpcMessage{}, invalid(nil, "a message must be a JSON object")
	}
	rawID := fields["id"]
	key, err := idKey(rawID)
	if err != nil {
		return rpcMessage{}, invalid(nil, "%v", err)
	}
	var answerID json.RawMessage
	if key != "" {
		answerID = rawID
	}
	var version string
	if err := json.Unmarshal(fields["jsonrpc"], &version); err != nil || version != "2.0" {
		return rpcMessage{}, invalid(answerID, `"jsonrpc" must be "2.0"`)
	}
	m := rpcMessage{key: key, id: answerID}
	wire := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`)}
	if key != "" {
		wire["id"] = rawID
	}
	if rawMethod, ok := fields["method"]; ok {
		if err := json.Unmarshal(rawMethod, &m.method); err != nil || m.method == "" {
			return rpcMessage{}, invalid(answerID, `"method" must be a non-empty string`)
		}
		wire["method"] = rawMethod
		if params, ok := fields["params"]; ok {
			if c := params[0]; c != '{' && c != '[' && string(params) != "null" {
				return rpcMessage{}, invalid(answerID, `"params" must be an object or an array`)
			}
			wire["params"] = params
		}
		m.call = key != ""
	} else {
		result, hasResult := fields["result"]
		rawErr, hasErr := fields["error"]
		switch {
		case key == "":
			return rpcMessage{}, invalid(nil, `a message without "method" is a response and needs an id`)
		case hasResult == hasErr:
			return rpcMessage{}, invalid(nil, `a response holds "result" or "error", one of them`)
		case hasResult:
			wire["result"] = result
		default:
			var e struct {
				Code    *json.Number `json:"code"`
				Message *string      `json:"message"`
			}
			if json.Unmarshal(rawErr, &e) != nil || e.Code == nil || e.Message == nil {
				return rpcMessage{}, invalid(nil, `"error" must be an object with a "code" and a "message"`)
			}
			if _, err := e.Code.Int64(); err != nil {
				return rpcMessage{}, invalid(nil, `the error's "code" must be an integer`)
			}
			wire["error"] = rawErr
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(wire); err != nil {
		return rpcMessage{}, invalid(answerID, "%v", err)
	}
	m.wire = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return m, nil
}

// idKey reads an id as the SDK answers it: "" when absent or null, a
// number as the integer it is, a string quoted.
func idKey(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return strconv.Quote(s), nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxExactID {
			return "", fmt.Errorf("id %s must be a string or a whole number of at most 2^53", raw)
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return "", fmt.Errorf("id %.40s must be a string or a whole number", raw)
}

// depth is how deeply valid JSON nests.
func depth(data []byte) int {
	var (
		d, deepest      int
		inString, quote bool
	)
	for _, c := range data {
		switch {
		case quote:
			quote = false
		case inString && c == '\\':
			quote = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// encodePayload writes checked messages back as one payload.
func encodePayload(msgs []rpcMessage, batch bool) []byte {
	if !batch {
		return msgs[0].wire
	}
	parts := make([][]byte, len(msgs))
	for i, m := range msgs {
		parts[i] = m.wire
	}
	return append(append([]byte("["), bytes.Join(parts, []byte(","))...), ']')
}
