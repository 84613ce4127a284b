package okf

import (
	"encoding/json"
	"fmt"
	"io"
)

// ANSI colours for the text report.
const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	green  = "\x1b[32m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

// WriteText writes the report for people: a header naming the bundle, the
// file counts, one line a finding (errors, then warnings, then infos) and a
// verdict. maxWarnings < 0 allows any number of warnings. color adds ANSI
// colours; pass it only for a terminal.
func (r *Report) WriteText(w io.Writer, bundle string, maxWarnings int, color bool) error {
	paint := func(c, s string) string {
		if !color {
			return s
		}
		return c + s + reset
	}
	ew := &errWriter{w: w}
	ew.printf("OKF v0.2 conformance — %s\n", bundle)
	ew.printf("  concepts: %d   index.md: %d   log.md: %d\n", r.Counts.Concepts, r.Counts.Indexes, r.Counts.Logs)
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			ew.printf("  %s %s\n", paint(red, "✗ ERROR "), f)
		case Warning:
			ew.printf("  %s %s\n", paint(yellow, "! warn  "), f)
		default:
			ew.printf("  %s %s\n", paint(dim, "· info  "), f)
		}
	}
	errs, warns := r.Count(Error), r.Count(Warning)
	switch {
	case errs > 0:
		ew.printf("  %s\n", paint(red, fmt.Sprintf("✗ non-conformant (%d error(s), %d warning(s))", errs, warns)))
	case warns == 0 && r.Count(Info) == 0:
		ew.printf("  %s\n", paint(green, "✓ conformant — no issues"))
	case warns == 0:
		ew.printf("  %s\n", paint(green, fmt.Sprintf("✓ conformant — no errors or warnings (%d info)", r.Count(Info))))
	default:
		ew.printf("  %s\n", paint(green, fmt.Sprintf("✓ conformant (%d warning(s))", warns)))
	}
	if errs == 0 && !r.Passed(maxWarnings) {
		ew.printf("  %s\n", paint(red, fmt.Sprintf("✗ failed: %d warning(s), more than the %d allowed", warns, maxWarnings)))
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// JSONReport is the machine-readable form of a report.
type JSONReport struct {
	Bundle     string    `json:"bundle"`
	Conformant bool      `json:"conformant"`
	Passed     bool      `json:"passed"`
	Counts     Counts    `json:"counts"`
	Errors     []Finding `json:"errors"`
	Warnings   []Finding `json:"warnings"`
	Infos      []Finding `json:"infos"`
}

// JSON returns the report as indented JSON, findings grouped by severity.
func (r *Report) JSON(bundle string, maxWarnings int) ([]byte, error) {
	b, err := json.MarshalIndent(r.JSONReport(bundle, maxWarnings), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSONReport returns the report in its machine-readable form, findings
// grouped by severity.
func (r *Report) JSONReport(bundle string, maxWarnings int) JSONReport {
	out := JSONReport{
		Bundle: bundle, Conformant: r.Conformant(), Passed: r.Passed(maxWarnings), Counts: r.Counts,
		Errors: []Finding{}, Warnings: []Finding{}, Infos: []Finding{},
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			out.Errors = append(out.Errors, f)
		case Warning:
			out.Warnings = append(out.Warnings, f)
		default:
			out.Infos = append(out.Infos, f)
		}
	}
	return out
}
