package trace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ExportOTLP sends a run to an OpenTelemetry collector as OTLP/HTTP JSON
// (POST endpoint/v1/traces), following the GenAI semantic conventions: an
// invoke_agent span for the run, a chat span per model call and an
// execute_tool span per tool call, so existing trace UIs show runs. The
// record keeps durations, not instants, so spans are laid end to end from
// the run's start: each step's waiting and model time, then its tools.
func ExportOTLP(ctx context.Context, client *http.Client, endpoint string, headers map[string]string, r *Record) error {
	body, err := json.Marshal(otlpRequest(r))
	if err != nil {
		return fmt.Errorf("encoding run %s for OTLP: %w", r.ID, err)
	}
	url := strings.TrimSuffix(endpoint, "/") + "/v1/traces"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("OTLP export to %s: %w", url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("OTLP export to %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}

type otlpAttr struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

type otlpSpan struct {
	TraceID      string         `json:"traceId"`
	SpanID       string         `json:"spanId"`
	ParentSpanID string         `json:"parentSpanId,omitempty"`
	Name         string         `json:"name"`
	Kind         int            `json:"kind"`
	Start        string         `json:"startTimeUnixNano"`
	End          string         `json:"endTimeUnixNano"`
	Attributes   []otlpAttr     `json:"attributes"`
	Status       map[string]any `json:"status,omitempty"`
}

func str(k, v string) otlpAttr { return otlpAttr{k, map[string]any{"stringValue": v}} }
func num(k string, v int) otlpAttr {
	return otlpAttr{k, map[string]any{"intValue": strconv.Itoa(v)}}
}

// otlpID derives a stable id of n bytes from the run id and a label.
func otlpID(run, label string, n int) string {
	h := sha256.Sum256([]byte(run + "\x00" + label))
	return hex.EncodeToString(h[:n])
}

func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// Span kinds of OTLP.
const (
	kindInternal = 1
	kindClient   = 3
)

func otlpRequest(r *Record) map[string]any {
	traceID := otlpID(r.ID, "trace", 16)
	root := otlpID(r.ID, "run", 8)
	cursor := r.StartedAt
	var spans []otlpSpan
	for _, s := range r.Steps {
		start := cursor
		cursor = cursor.Add(time.Duration(s.WaitMS+s.ModelMS) * time.Millisecond)
		attrs := []otlpAttr{str("gen_ai.operation.name", "chat"), str("gen_ai.request.model", r.requestModel()), str("okf.model", r.Model),
			str("gen_ai.provider.name", r.Provider), str("gen_ai.response.model", r.ProviderModel),
			num("gen_ai.usage.input_tokens", s.Usage.Input), num("gen_ai.usage.output_tokens", s.Usage.Output),
			num("gen_ai.usage.cache_read.input_tokens", s.Usage.Cached), num("gen_ai.usage.cache_creation.input_tokens", s.Usage.CacheWrite),
			num("okf.usage.reasoning_tokens", s.Usage.Reasoning), num("okf.wait_ms", int(s.WaitMS)), num("okf.retries", s.Retries)}
		if s.RequestID != "" {
			attrs = append(attrs, str("okf.request_id", s.RequestID))
		}
		if s.Cost != nil {
			attrs = append(attrs, otlpAttr{"okf.cost_usd", map[string]any{"doubleValue": *s.Cost}})
		}
		spans = append(spans, otlpSpan{TraceID: traceID, SpanID: otlpID(r.ID, fmt.Sprintf("step %d", s.N), 8), ParentSpanID: root,
			Name: "chat " + r.Model, Kind: kindClient, Start: nanos(start), End: nanos(cursor), Attributes: attrs})
		for i, c := range s.Calls {
			sp := otlpSpan{TraceID: traceID, SpanID: otlpID(r.ID, fmt.Sprintf("step %d call %d", s.N, i), 8), ParentSpanID: root,
				Name: "execute_tool " + c.Tool, Kind: kindInternal, Start: nanos(cursor), End: nanos(cursor),
				Attributes: []otlpAttr{str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", c.Tool),
					str("gen_ai.tool.call.arguments", c.Arguments), str("gen_ai.tool.call.result", c.Result)}}
			if c.Error {
				sp.Status = map[string]any{"code": 2, "message": firstLine(c.Result)}
			}
			spans = append(spans, sp)
		}
	}
	attrs := []otlpAttr{str("gen_ai.operation.name", "invoke_agent"), str("gen_ai.agent.name", "okf"), str("gen_ai.request.model", r.requestModel()), str("okf.model", r.Model),
		str("gen_ai.provider.name", r.Provider), str("gen_ai.response.model", r.ProviderModel),
		str("okf.run.id", r.ID), str("okf.question", r.Question), str("okf.database", r.Database), str("okf.strategy", r.Strategy),
		str("okf.stop_reason", r.StopReason), num("gen_ai.usage.input_tokens", r.Usage.Input), num("gen_ai.usage.output_tokens", r.Usage.Output),
		num("okf.sql.attempts", r.SQLAttempts), num("okf.sql.errors", r.SQLErrors)}
	if r.Cost != nil {
		attrs = append(attrs, otlpAttr{"okf.cost_usd", map[string]any{"doubleValue": *r.Cost}})
	}
	if r.Answer != nil {
		attrs = append(attrs, str("okf.answer.sql", r.Answer.SQL))
	}
	if r.TaskID != "" {
		attrs = append(attrs, str("okf.task_id", r.TaskID))
	}
	run := otlpSpan{TraceID: traceID, SpanID: root, Name: "invoke_agent okf", Kind: kindInternal,
		Start: nanos(r.StartedAt), End: nanos(cursor), Attributes: attrs}
	if r.StopReason == Failed {
		run.Status = map[string]any{"code": 2, "message": r.Error}
	}
	return map[string]any{"resourceSpans": []any{map[string]any{
		"resource": map[string]any{"attributes": []otlpAttr{str("service.name", "okf")}},
		"scopeSpans": []any{map[string]any{
			"scope": map[string]any{"name": "github.com/okf-tools/okf/agent"},
			"spans": append([]otlpSpan{run}, spans...),
		}},
	}}}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ExportTimeout bounds one run's export.
const ExportTimeout = 10 * time.Second

// Exporter sends runs to a collector in the background, one at a time, so
// that a slow or hanging collector never delays a run: Send queues a run
// and returns; Close waits a bounded time for the queue to drain.
type Exporter struct {
	client   *http.Client
	endpoint string
	headers  map[string]string
	warn     func(error)

	mu      sync.Mutex
	closed  bool
	queue   chan *Record
	dropped int
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
}

// ExportQueue is how many runs wait for the collector before more are
// dropped (and counted).
const ExportQueue = 256

// NewExporter starts an exporter to endpoint; warn hears of every failed
// export, from the exporter's own goroutine.
func NewExporter(client *http.Client, endpoint string, headers map[string]string, warn func(error)) *Exporter {
	x := &Exporter{client: client, endpoint: endpoint, headers: headers, warn: warn,
		queue: make(chan *Record, ExportQueue), done: make(chan struct{})}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	go x.run()
	return x
}

func (x *Exporter) run() {
	defer close(x.done)
	for r := range x.queue {
		if x.ctx.Err() != nil {
			continue // given up at Close: drain without sending
		}
		ctx, cancel := context.WithTimeout(x.ctx, ExportTimeout)
		if err := ExportOTLP(ctx, x.client, x.endpoint, x.headers, r); err != nil && x.ctx.Err() == nil {
			x.warn(err)
		}
		cancel()
	}
}

// Send queues a run for export; a full queue drops it.
func (x *Exporter) Send(r *Record) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	select {
	case x.queue <- r:
	default:
		x.dropped++
	}
}

// Close stops taking runs and waits up to wait for the queued ones to be
// sent; what is still unsent then is given up, with a warning.
func (x *Exporter) Close(wait time.Duration) {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	close(x.queue)
	dropped := x.dropped
	x.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-x.done:
	case <-timer.C:
		x.warn(fmt.Errorf("OTLP export to %s: %d runs still unsent after waiting %s; giving up on them", x.endpoint, len(x.queue)+1, wait))
		x.cancel()
		<-x.done
	}
	x.cancel()
	if dropped > 0 {
		x.warn(fmt.Errorf("OTLP export to %s: %d runs dropped, the collector being too slow", x.endpoint, dropped))
	}
}

// requestModel is the model the run asked the provider for: its id there
// when known, else okf's name for it.
func (r *Record) requestModel() string {
	if r.ModelID != "" {
		return r.ModelID
	}
	return r.Model
}
