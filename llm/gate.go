package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// FirstAlone returns a client whose first call is made alone: the calls
// made while it is in flight wait for it. Once a call has failed as every
// call will (Permanent: the key rejected, the model unknown), every later
// call fails so at once, sending nothing. Many runs started together (an
// eval's) against an endpoint that rejects the key so send it one
// request, not one each.
func FirstAlone(c Client) Client {
	return &firstAlone{Client: c, first: make(chan struct{})}
}

type firstAlone struct {
	Client
	first chan struct{} // closed once the first call has returned

	mu      sync.Mutex
	started bool
	refused *NotAsked // what every call gets after a Permanent failure
}

// NotAsked is a call that sent nothing, because an earlier call to the
// endpoint failed as every call will; Err is that failure's cause.
type NotAsked struct{ Err error }

func (e *NotAsked) Error() string { return e.Err.Error() }
func (e *NotAsked) Unwrap() error { return e.Err }

func (f *firstAlone) Chat(ctx context.Context, req *Request) (*Response, error) {
	f.mu.Lock()
	first := !f.started
	f.started = true
	f.mu.Unlock()
	if first {
		defer close(f.first)
	} else {
		select {
		case <-f.first:
		case <-ctx.Done():
			return nil, fmt.Errorf("model %s: %w", f.Name(), ctx.Err())
		}
	}
	f.mu.Lock()
	refused := f.refused
	f.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	resp, err := f.Client.Chat(ctx, req)
	var se *StatusError
	if Permanent(err) && errors.As(err, &se) {
		f.mu.Lock()
		if f.refused == nil {
			f.refused = &NotAsked{se}
		}
		f.mu.Unlock()
	}
	return resp, err
}

// Provider and ModelID are the wrapped client's, for the run record.
func (f *firstAlone) Provider() string {
	if p, ok := f.Client.(interface{ Provider() string }); ok {
		return p.Provider()
	}
	return ""
}

func (f *firstAlone) ModelID() string {
	if m, ok := f.Client.(interface{ ModelID() string }); ok {
		return m.ModelID()
	}
	return ""
}
