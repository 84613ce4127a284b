package sqlguard

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// AuditLog writes one JSON line per statement the guard sees. It is safe
// for concurrent use; a nil *AuditLog records nothing.
type AuditLog struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewAuditLog writes entries to w.
func NewAuditLog(w io.Writer) *AuditLog { return &AuditLog{w: w} }

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time     time.Time `json:"time"`
	Caller   string    `json:"caller"`
	Database string    `json:"database"`
	SQL      string    `json:"sql"`
	Rows     int       `json:"rows"`
	Millis   float64   `json:"ms"`
	Error    string    `json:"error,omitempty"`
	Refused  bool      `json:"refused,omitempty"`
	Layer    Layer     `json:"layer,omitempty"`
	Code     string    `json:"code,omitempty"`
}

func auditEntry(start time.Time, caller, database, sql string, res *Result, err error) AuditEntry {
	e := AuditEntry{
		Time: start.UTC(), Caller: caller, Database: database, SQL: sql,
		Millis: float64(time.Since(start).Microseconds()) / 1000,
	}
	if res != nil {
		e.Rows = res.Total
	}
	if err != nil {
		e.Error = err.Error()
		if ge, ok := AsError(err); ok {
			e.Refused, e.Layer, e.Code = ge.Refused, ge.Layer, ge.Code
		}
	}
	return e
}

func (a *AuditLog) record(e AuditEntry) {
	if a == nil {
		return
	}
	line, err := json.Marshal(e) // invalid UTF-8 in SQL becomes U+FFFD
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		_, err = a.w.Write(append(line, '\n'))
	}
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("writing the audit log: %w", err)
	}
}

// Err returns the first error met while writing, if any.
func (a *AuditLog) Err() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
