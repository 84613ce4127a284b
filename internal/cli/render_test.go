package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

func TestProgressSpinner(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, terminal: true}
	p.event(agent.Event{Step: 2, Thinking: true})
	p.event(agent.Event{Step: 2, Call: &trace.Call{Tool: "run_sql", Arguments: `{"sql": "SELECT x FROM t"}`, Error: true}})
	got := out.String()
	want := "\r\x1b[Kstep 2: run_sql       \x1b[1;36mSELECT\x1b[0m x \x1b[1;36mFROM\x1b[0m t  \x1b[31m-> error\x1b[0m\n"
	if !strings.HasPrefix(got, "\r⠋ step 2: waiting for the model…") || !strings.HasSuffix(got, want) {
		t.Errorf("progress = %q", got)
	}
	out.Reset()
	plain := &progress{w: &out}
	plain.event(agent.Event{Step: 1, Thinking: true})
	plain.event(agent.Event{Step: 1, Nudged: true})
	if out.String() != "step 1: (answered in text; nudged to use the tools)\n" {
		t.Errorf("plain progress = %q", out.String())
	}
}

// TestProgressStreams: the model's text is printed as it arrives, a tool
// call as soon as it is written and its mark once it has run, and a cut
// reply, or one that broke off and is asked again, closes the call it
// left open.
func TestProgressStreams(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	call := &trace.Call{Tool: "context", Arguments: `{"question": "Who?"}`}
	for _, e := range []agent.Event{
		{Step: 1, Thinking: true}, {Step: 1, Text: "Reading"}, {Step: 1, Text: " the rules."}, {Step: 1, Pending: call}, {Step: 1, Call: call},
		{Step: 2, Thinking: true}, {Step: 2, Pending: &trace.Call{Tool: "run_sql", Arguments: `{"sql": "SELECT 1"}`}},
		{Step: 2, Call: &trace.Call{Tool: "run_sql", Arguments: `{"sql": "SELECT 1"}`, Error: true}},
		{Step: 3, Text: "Submitting \x1b[2J"}, {Step: 3, Pending: &trace.Call{Tool: "submit_answer", Arguments: `{"sql": "SELECT`}}, {Step: 3, Truncated: true},
		{Step: 4, Text: "Counting"}, {Step: 4, Pending: &trace.Call{Tool: "run_sql", Arguments: `{"sql": "SELECT 2"}`}}, {Step: 4, Retry: "model m: the reply broke off: unexpected EOF"},
	} {
		p.event(e)
	}
	want := "step 1: Reading the rules.\nstep 1: context       Who?\n" +
		"step 2: run_sql       SELECT 1  -> error\n" +
		"step 3: Submitting \\x1b[2J\nstep 3: submit_answer {\"sql\": \"SELECT  -> not run\n" +
		"step 3: (cut at the output token limit; its calls did not run, and the model is asked once to go on more briefly)\n" +
		"step 4: Counting\nstep 4: run_sql       SELECT 2  -> not run\nstep 4: (model m: the reply broke off: unexpected EOF; asking again)\n"
	if got := out.String(); got != want {
		t.Errorf("progress\n%q\nwant\n%q", got, want)
	}
}

func TestResultTable(t *testing.T) {
	r := &sqlguard.Result{Columns: []sqlguard.Column{{Name: "name"}, {Name: "n"}}, Rows: [][]any{{"Ada", int64(3)}, {"Bo", nil}, {"Cy", 1.5}},
		Total: 7, TotalKnown: true, Elapsed: time.Millisecond}
	want := "name | n\n-----+-----\nAda  | 3\nBo   | NULL\n(2 of 7 rows)\n"
	if got := resultTable(r, 2); got != want {
		t.Errorf("table =\n%q\nwant\n%q", got, want)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nnext line": "plain\ttext\nnext line",
		"\x1b[2Jcleared":         `\x1b[2Jcleared`,
		"bell\x07 nul\x00 cr\r":  `bell\x07 nul\x00 cr\x0d`,
		"abc\u202Efdp.exe":       `abc\u202efdp.exe`,
		"c1\u009b31m":            `c1\x9b31m`,
		"bad \xff byte":          `bad \ufffd byte`,
		"naïve café, 東京":         "naïve café, 東京",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
	r := &sqlguard.Result{Columns: []sqlguard.Column{{Name: "n\x1bame"}}, Rows: [][]any{{"\x1b]0;pwned\x07"}}, Total: 1, TotalKnown: true}
	if got := resultTable(r, 10); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("a row reached the terminal raw: %q", got)
	}
}
