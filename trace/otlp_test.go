package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/trace"
)

// otlpSpan is the part of an exported span the test reads: the JSON
// encoding of OTLP, decoded into types so that a missing or retyped field
// fails a check rather than the test binary.
type otlpSpan struct {
	Name, SpanID, ParentSpanID, TraceID string
	StartTimeUnixNano, EndTimeUnixNano  string
	Status                              map[string]any
	Attributes                          []struct {
		Key   string
		Value map[string]any
	}
}

func TestExportOTLP(t *testing.T) {
	var got struct {
		ResourceSpans []struct {
			ScopeSpans []struct{ Spans []otlpSpan }
		}
	}
	var header string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s", r.URL.Path, r.Header.Get("Content-Type"))
		}
		header = r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &got)
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	cost := 0.002
	r := record("abc123", "How many orders?", &cost)
	r.Steps = []trace.Step{
		{N: 1, ModelMS: 900, WaitMS: 3000, Retries: 1, Usage: llm.Usage{Input: 1000, Output: 10}, Calls: []trace.Call{{Tool: "run_sql", Arguments: `{"sql":"SELECT x"}`, Result: "Error: no column x", Error: true}}},
		{N: 2, ModelMS: 500, Usage: llm.Usage{Input: 2000, Cached: 1000, Output: 20}, Calls: []trace.Call{{Tool: "submit_answer", Arguments: `{}`, Result: "Answer received."}}},
	}
	if err := trace.ExportOTLP(context.Background(), srv.Client(), srv.URL+"/", map[string]string{"Authorization": "Bearer t"}, r); err != nil {
		t.Fatal(err)
	}
	if header != "Bearer t" {
		t.Errorf("header = %q", header)
	}
	if len(got.ResourceSpans) != 1 || len(got.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("export = %+v, want one resource with one scope", got)
	}
	spans := got.ResourceSpans[0].ScopeSpans[0].Spans
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if strings.Join(names, "|") != "invoke_agent okf|chat mini|execute_tool run_sql|chat mini|execute_tool submit_answer" {
		t.Fatalf("spans = %v", names)
	}
	root := spans[0]
	for _, sp := range spans[1:] {
		if sp.ParentSpanID != root.SpanID || sp.TraceID != root.TraceID {
			t.Errorf("span %v is not a child of the run", sp.Name)
		}
	}
	if failed := spans[2].Status; failed["code"] != float64(2) || failed["message"] != "Error: no column x" {
		t.Errorf("tool error status = %v", failed)
	}
	// Spans are laid end to end: step 1 takes its 3s of waiting and 0.9s of model time.
	if chat := spans[1]; chat.StartTimeUnixNano != "1795982400000000000" || chat.EndTimeUnixNano != "1795982403900000000" {
		t.Errorf("step 1 span %s..%s", chat.StartTimeUnixNano, chat.EndTimeUnixNano)
	}
	attrs := map[string]map[string]any{}
	for _, a := range root.Attributes {
		attrs[a.Key] = a.Value
	}
	if attrs["gen_ai.operation.name"]["stringValue"] != "invoke_agent" || attrs["gen_ai.usage.input_tokens"]["intValue"] != "3000" ||
		attrs["okf.cost_usd"]["doubleValue"] != 0.002 {
		t.Errorf("run attributes = %v", attrs)
	}

	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "quota", http.StatusTooManyRequests) })
	if err := trace.ExportOTLP(context.Background(), srv.Client(), srv.URL, nil, r); err == nil || !strings.Contains(err.Error(), "HTTP 429: quota") {
		t.Errorf("refused export: %v", err)
	}
}

// TestExporterNeverWaitsOnTheCollector: a collector that hangs once added
// its 10 s timeout to every run, one run after another.
func TestExporterNeverWaitsOnTheCollector(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var mu sync.Mutex
	var warnings []string
	x := trace.NewExporter(srv.Client(), srv.URL, nil, func(err error) {
		mu.Lock()
		warnings = append(warnings, err.Error())
		mu.Unlock()
	})
	for i := range 8 {
		x.Send(record(fmt.Sprint("run", i), "q", nil)) // returns at once, or this test hangs
	}
	<-arrived // the first run reached the collector, which now hangs
	x.Close(10 * time.Millisecond)
	x.Send(record("late", "q", nil)) // after Close: ignored, no panic
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "8 runs still unsent") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestExportCarriesTheProvider(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = string(body)
	}))
	defer srv.Close()
	r := record("abc", "q", nil)
	r.Provider, r.ProviderModel = "openai", "gpt-4.1-mini-2025-04-14"
	r.Steps = []trace.Step{{N: 1}}
	if err := trace.ExportOTLP(context.Background(), srv.Client(), srv.URL, nil, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"key":"gen_ai.provider.name","value":{"stringValue":"openai"}}`, `{"key":"gen_ai.response.model","value":{"stringValue":"gpt-4.1-mini-2025-04-14"}}`} {
		if strings.Count(got, want) != 2 {
			t.Errorf("the run and chat spans should both carry %s:\n%.600s", want, got)
		}
	}
}
