package sqlguard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// AuditLog writes one JSON line per statement the guard sees. It is safe
// for concurrent use; a nil *AuditLog records nothing.
type AuditLog struct {
	mu     sync.Mutex
	w      io.Writer
	file   *os.File // the file w is, when the log opened it
	err    error
	report func(error)
}

// NewAuditLog writes entries to w.
func NewAuditLog(w io.Writer) *AuditLog { return &AuditLog{w: w} }

// OpenAuditLog opens the audit log file at path for appending, created
// with mode 0600 if missing. An empty path opens none: a nil log, which
// records nothing. Every command and server opens its audit log here.
func OpenAuditLog(path string) (*AuditLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	return &AuditLog{w: f, file: f}, nil
}

// OnError makes the log call report with its first write error as soon as
// it happens, so that a server, which keeps serving, says so at once
// rather than never.
func (a *AuditLog) OnError(report func(error)) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.report = report
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time     time.Time `json:"time"`
	Caller   string    `json:"caller"`
	Database string    `json:"database"`
	SQL      string    `json:"sql"`
	Args     []any     `json:"args,omitempty"`
	// Query is the verified query (bundle/id) the statement ran for.
	Query string `json:"query,omitempty"`
	Rows  int    `json:"rows"`
	// Masked counts the cells shown as Mask; the values never reach the
	// log.
	Masked  int     `json:"masked,omitempty"`
	Millis  float64 `json:"ms"`
	Error   string  `json:"error,omitempty"`
	Refused bool    `json:"refused,omitempty"`
	Layer   Layer   `json:"layer,omitempty"`
	Code    string  `json:"code,omitempty"`
}

// queryKey is the context key of the verified query a statement runs for.
type queryKey struct{}

// ForQuery marks the statements run with ctx as those of a verified query
// (bundle/id), which the audit log then names.
func ForQuery(ctx context.Context, ref string) context.Context {
	return context.WithValue(ctx, queryKey{}, ref)
}

func auditEntry(ctx context.Context, start time.Time, caller, database, sql string, args []any, res *Result, err error) AuditEntry {
	query, _ := ctx.Value(queryKey{}).(string)
	e := AuditEntry{
		Time: start.UTC(), Caller: caller, Database: database, SQL: sql, Args: args, Query: query,
		Millis: float64(time.Since(start).Microseconds()) / 1000,
	}
	if res != nil {
		e.Rows, e.Masked = res.Total, res.MaskedCells
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
	if err == nil {
		_, err = a.w.Write(append(line, '\n'))
	}
	first := err != nil && a.err == nil
	if first {
		a.err = fmt.Errorf("writing the audit log: %w", err)
	}
	err, report := a.err, a.report
	a.mu.Unlock()
	// Outside the lock: a report may be slow, and statements go on.
	if first && report != nil {
		report(err)
	}
}

// Err returns the first error met while writing, if any. An error from a
// file the log opened names the file.
func (a *AuditLog) Err() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Close closes the file the log opened, if any, and returns the first
// error met writing or closing it.
func (a *AuditLog) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file != nil {
		if err := a.file.Close(); err != nil && a.err == nil {
			a.err = fmt.Errorf("closing the audit log: %w", err)
		}
		a.file = nil
	}
	return a.err
}

// ReadAudit calls each with the entries of the audit log at path, oldest
// first. Only the log's last MaxAuditRead bytes are read, and only from a
// regular file (a device or a pipe such as /dev/stderr is written to, never
// read back); lines it cannot read, and lines longer than a statement may
// be, are skipped. A missing log has no entries.
func ReadAudit(path string, each func(AuditEntry)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	if info.Size() > MaxAuditRead {
		if _, err := f.Seek(info.Size()-MaxAuditRead, io.SeekStart); err != nil {
			return err
		}
	}
	r := bufio.NewReaderSize(io.LimitReader(f, MaxAuditRead), 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) <= maxAuditLine {
			line = append(line, chunk...)
		} else {
			line = line[:0:0] // too long: skipped to its end
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		var e AuditEntry
		if len(line) > 0 && json.Unmarshal(line, &e) == nil {
			each(e)
		}
		line = line[:0]
		if err != nil {
			return nil
		}
	}
}

// MaxAuditRead bounds what ReadAudit reads of an audit log: its end, the
// recent entries.
const MaxAuditRead = 64 << 20

// maxAuditLine bounds an audit log line read back: the longest SQL
// accepted and its values, with room for the rest.
const maxAuditLine = 2*MaxSQLBytesLimit + 64<<10
