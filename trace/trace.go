// Package trace keeps the record of agent runs: one JSON line per run in a
// runs folder (question, database, strategy, model, every step with its
// tool calls, the concepts read, SQL attempts and errors, tokens, cost,
// model time, waiting time, stop reason and answer), and reads them back
// to list, show and compare.
package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/okf-tools/okf/llm"
)

// File is the name of the run log inside a runs folder.
const File = "runs.jsonl"

// Stop reasons: how every run ends.
const (
	Submitted = "submitted" // an answer with SQL
	Declined  = "declined"  // an answer without SQL: out of scope, or no data for it
	StepLimit = "step_limit"
	Failed    = "error"
	// Truncated is a run whose model stopped at its output token limit
	// again after being asked once to continue more briefly: what it wrote
	// may be cut anywhere, so none of it is taken as an answer.
	Truncated = "truncated"
)

// Record is one run.
type Record struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Question  string    `json:"question"`
	TaskID    string    `json:"task_id,omitempty"`
	Database  string    `json:"database"`
	Strategy  string    `json:"strategy"`
	// AutoStrategy is, for the auto strategy, the one it chose for the
	// run: raw or context.
	AutoStrategy string `json:"auto_strategy,omitempty"`
	Model        string `json:"model"`
	// Provider is the model's wire format (openai, anthropic, script), and
	// ProviderModel the model id the provider's replies name, which may be
	// more exact than the configured one ("gpt-4.1-mini-2025-04-14").
	// ModelID is the model's id at the provider as configured
	// ("gpt-4.1-mini"), where Model is okf's name for it.
	Provider      string `json:"provider,omitempty"`
	ProviderModel string `json:"provider_model,omitempty"`
	ModelID       string `json:"model_id,omitempty"`
	// Snapshot is the digest of the knowledge the run read.
	Snapshot string `json:"snapshot,omitempty"`
	Steps    []Step `json:"steps"`
	// ConceptsRead are the refs (bundle/id) whose text reached the model,
	// in first-read order.
	ConceptsRead []string       `json:"concepts_read"`
	ToolCalls    map[string]int `json:"tool_calls"`
	SQLAttempts  int            `json:"sql_attempts"`
	SQLErrors    int            `json:"sql_errors"`
	LLMCalls     int            `json:"llm_calls"`
	Usage        llm.Usage      `json:"tokens"`
	// Cost is in US dollars; nil when any call's price was unknown.
	Cost         *float64 `json:"cost_usd"`
	ModelSeconds float64  `json:"model_seconds"`
	WaitSeconds  float64  `json:"wait_seconds"`
	StopReason   string   `json:"stop_reason"`
	Error        string   `json:"error,omitempty"`
	// RequestID is the provider's id of the last failed request, to quote
	// to the provider.
	RequestID string  `json:"request_id,omitempty"`
	Answer    *Answer `json:"answer,omitempty"`
}

// Answer is what the model submitted.
type Answer struct {
	SQL  string `json:"sql"`
	Text string `json:"text"`
}

// Step is one call to the model and the tools it asked for.
type Step struct {
	N int `json:"n"`
	// Text is what the model wrote besides its tool calls, cut.
	Text   string    `json:"text,omitempty"`
	Calls  []Call    `json:"calls,omitempty"`
	Nudged bool      `json:"nudged,omitempty"`
	Usage  llm.Usage `json:"tokens"`
	Cost   *float64  `json:"cost_usd"`
	// ModelMS and WaitMS are the model's time and the time spent waiting
	// out rate limits and failed attempts, in milliseconds.
	ModelMS int64 `json:"model_ms"`
	WaitMS  int64 `json:"wait_ms"`
	Retries int   `json:"retries,omitempty"`
	// RequestID is the provider's id of the call.
	RequestID string `json:"request_id,omitempty"`
	// Truncated marks a reply cut at the output token limit: its tool
	// calls were not run, and the model was asked once to go on.
	Truncated bool `json:"truncated,omitempty"`
}

// Call is one tool call.
type Call struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Result is what the model read back, cut to a bound; Bytes is its
	// whole length.
	Result string `json:"result"`
	Bytes  int    `json:"bytes"`
	Error  bool   `json:"error,omitempty"`
	// Concepts are the refs whose text the result holds.
	Concepts []string `json:"concepts,omitempty"`
}

// NewID names a run by a hash of what makes it unique.
func NewID(started time.Time, question, database, strategy, model string) string {
	h := sha256.Sum256([]byte(strings.Join([]string{started.UTC().Format(time.RFC3339Nano), question, database, strategy, model}, "\x00")))
	return hex.EncodeToString(h[:5])
}

// Append adds a record as one line to dir/runs.jsonl, creating the folder.
// When the log's last line was cut short (a crash mid-write), the record
// starts a line of its own rather than being glued onto it.
func Append(dir string, r *Record) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("runs folder: %w", err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encoding run %s: %w", r.ID, err)
	}
	path := filepath.Join(dir, File)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("opening the run log: %w", err)
	}
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, f.Close()
}

// Load reads every record of dir/runs.jsonl, oldest first, skipping lines
// that do not parse (see LoadChecked). A missing log is no runs.
func Load(dir string) ([]Record, error) {
	runs, _, err := LoadChecked(dir)
	return runs, err
}

// LoadChecked reads every record of dir/runs.jsonl, oldest first, and the
// numbers of the lines it skipped because they do not parse: a write a
// crash cut short loses that one record, never the log. A missing log is
// no runs.
func LoadChecked(dir string) (runs []Record, broken []int, err error) {
	path := filepath.Join(dir, File)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the run log: %w", err)
	}
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			broken = append(broken, n+1)
			continue
		}
		runs = append(runs, r)
	}
	return runs, broken, nil
}

// BrokenWarning says which lines of a run log LoadChecked skipped, or ""
// when none.
func BrokenWarning(dir string, broken []int) string {
	if len(broken) == 0 {
		return ""
	}
	nums := make([]string, len(broken))
	for i, n := range broken {
		nums[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("%s: skipped line %s: not a run record (a write cut short?)", filepath.Join(dir, File), strings.Join(nums, ", "))
}

// Find returns the record whose id starts with ref, the nth record when
// ref is a number of at most four digits (1 the oldest, -1 the newest), or
// the newest for "last". A longer number is an id prefix: ids are hex and
// often start with digits only.
func Find(runs []Record, ref string) (*Record, error) {
	if ref == "last" {
		ref = "-1"
	}
	var n int
	if _, err := fmt.Sscanf(ref, "%d", &n); err == nil && fmt.Sprint(n) == ref && len(strings.TrimPrefix(ref, "-")) <= 4 {
		if n < 0 {
			n += len(runs) + 1
		}
		if n < 1 || n > len(runs) {
			return nil, fmt.Errorf("no run #%s: there are %d", ref, len(runs))
		}
		return &runs[n-1], nil
	}
	var found *Record
	for i := range runs {
		if strings.HasPrefix(runs[i].ID, ref) {
			if found != nil {
				return nil, fmt.Errorf("run id %q is ambiguous: give more characters", ref)
			}
			found = &runs[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no run with id %q", ref)
	}
	return found, nil
}

// Cut shortens s to at most n bytes on a rune boundary, saying how much
// was left out.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + fmt.Sprintf("\n… (%d more bytes)", len(s)-i)
}
