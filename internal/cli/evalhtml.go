package cli

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// writeHTML writes the report as one self-contained page: the table and
// a bar chart each of accuracy, tokens, cost and model calls per strategy
// and model, drawn as inline SVG (no script, no network).
func writeHTML(w io.Writer, questions int, rows []evalRow) error {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>okf eval: execution accuracy</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:2em}svg text{font:12px system-ui,sans-serif}
</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>Execution accuracy</h1>\n<p>%d questions.</p>\n", questions)
	b.WriteString("<table><tr><th>strategy</th><th>model</th><th>scored</th><th>correct</th><th>accuracy</th><th>model calls</th><th>input tokens</th><th>output tokens</th><th>cost</th><th>SQL errors</th></tr>\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%.1f%%</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%d</td></tr>\n",
			html.EscapeString(r.Strategy), html.EscapeString(r.Model), r.Scored, r.Correct, r.accuracy(), r.Calls, r.In, r.Out, r.costText(), r.SQLErrors)
	}
	b.WriteString("</table>\n<div class=\"charts\">\n")
	chart := func(title string, value func(evalRow) (float64, string)) {
		const width, bar, label = 520, 22, 200
		fmt.Fprintf(&b, "<figure><figcaption>%s</figcaption>\n<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
			title, width, len(rows)*(bar+6)+4, title)
		most := 0.0
		for _, r := range rows {
			v, _ := value(r)
			most = max(most, v)
		}
		for i, r := range rows {
			v, text := value(r)
			length := 0.0
			if most > 0 {
				length = v / most * (width - label - 90)
			}
			y := i*(bar+6) + 2
			fmt.Fprintf(&b, "<text x=\"0\" y=\"%d\">%s · %s</text>", y+bar-6, html.EscapeString(r.Strategy), html.EscapeString(r.Model))
			fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#4a7fb5\"/>", label, y, length, bar)
			fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", float64(label)+length+6, y+bar-6, html.EscapeString(text))
		}
		b.WriteString("</svg></figure>\n")
	}
	chart("Accuracy", func(r evalRow) (float64, string) { return r.accuracy(), fmt.Sprintf("%.1f%%", r.accuracy()) })
	chart("Tokens per question (input + output)", func(r evalRow) (float64, string) {
		v := float64(r.In+r.Out) / float64(r.Scored)
		return v, fmt.Sprintf("%.0f", v)
	})
	chart("Cost per question", func(r evalRow) (float64, string) {
		if !r.CostKnown {
			return 0, "unknown"
		}
		v := r.Cost / float64(r.Scored)
		return v, fmt.Sprintf("$%.5f", v)
	})
	chart("Model calls per question", func(r evalRow) (float64, string) {
		v := float64(r.Calls) / float64(r.Scored)
		return v, fmt.Sprintf("%.1f", v)
	})
	b.WriteString("</div>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
