package okf

import "strings"

// CheckRuleColumns finds the concepts whose Columns used name a column that
// the table they link to does not have in its Schema: a column dropped or
// renamed after the rule was written, so the rule no longer says how to
// query. okf validate runs it beside the format's own checks.
func CheckRuleColumns(b *Bundle) []Finding {
	var out []Finding
	tables := map[string]map[string]bool{} // concept id → lower-case column names
	columnsOf := func(id string) map[string]bool {
		if cols, ok := tables[id]; ok {
			return cols
		}
		var cols map[string]bool
		if d := b.Concept(id); d != nil {
			if _, ok := d.Section("schema"); ok {
				cols = map[string]bool{}
				for _, c := range readTable(d, linkTargets(b, d)).Columns {
					cols[strings.ToLower(c.Name)] = true
				}
			}
		}
		tables[id] = cols
		return cols
	}
	for _, d := range b.Docs {
		if _, ok := d.Section("columns_used"); !ok {
			continue
		}
		targets := linkTargets(b, d)
		eachLine(d, "columns_used", func(line string, _, n int) {
			u, ok := parseUse(line, targets[n])
			if !ok {
				return
			}
			cols := columnsOf(u.Concept)
			if cols == nil {
				return // not a table with a schema: nothing to check against
			}
			for _, c := range u.Columns {
				if !cols[strings.ToLower(c)] {
					out = append(out, newFinding("rule-column-unknown", d.Path, n, "`%s` is not a column of %s", c, u.Concept))
				}
			}
		})
	}
	return out
}
