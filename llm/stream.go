package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Stream asks for a reply as the model writes it: OnText hears each piece
// of its text, OnToolCall each tool call once it is whole. Any may be
// nil. The Response a streamed call returns is the one the same reply
// would give unstreamed.
//
// A reply that breaks off is asked for again: OnRetry hears why first,
// and what the stream heard of the broken attempt is void.
type Stream struct {
	OnText     func(text string)
	OnToolCall func(call ToolCall)
	OnRetry    func(err error)
}

func (s *Stream) text(t string) {
	if s != nil && s.OnText != nil && t != "" {
		s.OnText(t)
	}
}

func (s *Stream) toolCall(c ToolCall) {
	if s != nil && s.OnToolCall != nil {
		s.OnToolCall(c)
	}
}

func (s *Stream) retry(err error) {
	if s != nil && s.OnRetry != nil {
		s.OnRetry(err)
	}
}

// replay tells a stream what an unstreamed reply held, for endpoints that
// do not stream: the whole text, then each tool call.
func (s *Stream) replay(m Message) {
	s.text(m.Content)
	for _, c := range m.ToolCalls {
		s.toolCall(c)
	}
}

// Bounds of a server-sent event stream: one line, and the whole stream
// (maxReply).
const maxEventLine = 4 << 20

// errStreamTooLong is a stream past maxReply.
var errStreamTooLong = errors.New("the reply is longer than 32 MiB")

// readEvents calls f with the name and data of each event of a
// server-sent event stream (text/event-stream): data lines joined with
// newlines, comments and ids skipped. f returning io.EOF ends the stream
// early without error.
func readEvents(r io.Reader, f func(event, data string) error) error {
	lr := &io.LimitedReader{R: r, N: maxReply + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var event string
	var data []string
	dispatch := func() error {
		if len(data) == 0 {
			event = ""
			return nil
		}
		err := f(event, strings.Join(data, "\n"))
		event, data = "", data[:0]
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if err := dispatch(); err != nil {
				return stopped(err)
			}
		case field == "event":
			event = value
		case field == "data":
			data = append(data, value)
		}
	}
	if lr.N <= 0 {
		return errStreamTooLong
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errors.New("an event's line is longer than 4 MiB")
		}
		return &brokeOff{err}
	}
	// The stream ended without the blank line that ends an event: the
	// last one is whole if it decodes, else the stream was cut mid-line,
	// which is a reply that broke off, not a malformed one.
	err := dispatch()
	var cut *undecodable
	if errors.As(err, &cut) {
		return errMidEvent
	}
	return stopped(err)
}

// undecodable is an event whose data is not the JSON its format sends.
type undecodable struct{ err error }

func (e *undecodable) Error() string { return e.err.Error() }
func (e *undecodable) Unwrap() error { return e.err }

// decodeEvent reads an event's data into v; an error names the model.
func decodeEvent(model, data string, v any) error {
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return &undecodable{fmt.Errorf("model %s: malformed event: %w", model, err)}
	}
	return nil
}

// errMidEvent is a stream that ended, cleanly, in the middle of an event.
var errMidEvent = &brokeOff{errors.New("the stream ended mid-event")}

// errUnfinished is a stream that ended, cleanly, before its last event.
var errUnfinished = &brokeOff{errors.New("the stream ended before the reply did (an endpoint that cannot stream wants no_stream: true in okf.yaml, or --no-stream)")}

func stopped(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// compactJSON is a JSON text without insignificant space, so that a tool
// call's arguments read the same streamed (pieces joined) and whole; text
// that is not JSON is kept as it is.
func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// wireError is an error object as both formats write it.
type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// streamError is an error event inside a stream: the provider failed
// after the reply began.
func streamError(model, typ, msg string) error {
	return fmt.Errorf("model %s: the provider failed mid-reply: %s", model, strings.TrimPrefix(typ+": "+msg, ": "))
}
