package eval

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/trace"
)

func (r Totals) accuracy() float64 { return 100 * float64(r.Correct) / float64(r.Scored) }

func (r Totals) costText() string {
	if !r.CostKnown {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", r.Cost)
}

// WriteMarkdown writes the report as a markdown table.
func WriteMarkdown(w io.Writer, questions int, rows []Totals) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Execution accuracy\n\n%d questions.\n\n", questions)
	b.WriteString("| strategy | model | scored | correct | accuracy | submitted | declined | step limit | truncated | error | model calls | input tokens | output tokens | cost | SQL errors |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f%% | %d | %d | %d | %d | %d | %d | %d | %d | %s | %d |\n",
			c.Strategy, c.Model, c.Scored, c.Correct, c.accuracy(), c.Stops[trace.Submitted], c.Stops[trace.Declined],
			c.Stops[trace.StepLimit], c.Stops[trace.Truncated], c.Stops[trace.Failed], c.Calls, c.In, c.Out, c.costText(), c.SQLErrors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

//go:embed report.html.tmpl
var reportHTMLText string

var reportHTML = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"accuracy": Totals.accuracy,
		"cost":     Totals.costText,
	}).Parse(reportHTMLText))
}}

// The bar charts' layout, in pixels: a row a strategy and model, its
// label on the left, then the bar, then its value.
const (
	chartWidth = 520
	barHeight  = 22
	barGap     = 6
	labelWidth = 200
	// valueWidth is left right of the longest bar, for its value.
	valueWidth = 90
)

type chart struct {
	Title         string
	Width, Height int
	Bars          []bar
}

type bar struct {
	Strategy, Model string
	X, Y, Height    int
	Length          float64
	TextX           float64
	TextY           int
	Value           string
}

// newChart draws one bar a row, the longest for the highest value; value
// gives a row's value and the text shown beside its bar.
func newChart(title string, rows []Totals, value func(Totals) (float64, string)) chart {
	c := chart{Title: title, Width: chartWidth, Height: len(rows)*(barHeight+barGap) + 4}
	most := 0.0
	for _, r := range rows {
		v, _ := value(r)
		most = max(most, v)
	}
	for i, r := range rows {
		v, text := value(r)
		length := 0.0
		if most > 0 {
			length = v / most * (chartWidth - labelWidth - valueWidth)
		}
		y := i*(barHeight+barGap) + 2
		c.Bars = append(c.Bars, bar{Strategy: r.Strategy, Model: r.Model, X: labelWidth, Y: y, Height: barHeight,
			Length: length, TextX: labelWidth + length + 6, TextY: y + barHeight - 6, Value: text})
	}
	return c
}

// WriteHTML writes the report as one self-contained page: the table and
// a bar chart each of accuracy, tokens, cost and model calls per strategy
// and model, drawn as inline SVG (no script, no network).
func WriteHTML(w io.Writer, questions int, rows []Totals) error {
	charts := []chart{
		newChart("Accuracy", rows, func(r Totals) (float64, string) { return r.accuracy(), fmt.Sprintf("%.1f%%", r.accuracy()) }),
		newChart("Tokens per question (input + output)", rows, func(r Totals) (float64, string) {
			v := float64(r.In+r.Out) / float64(r.Scored)
			return v, fmt.Sprintf("%.0f", v)
		}),
		newChart("Cost per question", rows, func(r Totals) (float64, string) {
			if !r.CostKnown {
				return 0, "unknown"
			}
			v := r.Cost / float64(r.Scored)
			return v, fmt.Sprintf("$%.5f", v)
		}),
		newChart("Model calls per question", rows, func(r Totals) (float64, string) {
			v := float64(r.Calls) / float64(r.Scored)
			return v, fmt.Sprintf("%.1f", v)
		}),
	}
	return reportHTML.Get().Execute(w, struct {
		Questions int
		Rows      []Totals
		Charts    []chart
	}{questions, rows, charts})
}
