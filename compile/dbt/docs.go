package dbt

import (
	"fmt"
	"os"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// docBlock is one {% docs name %} … {% enddocs %} block.
type docBlock struct {
	text string
	file string // path as opened, for errors
	line int
}

var (
	// docsOpenRe finds the start of a docs block, with or without
	// whitespace control ({%- … -%}).
	docsOpenRe = lazy.Regexp{Expr: `\{%-?\s*docs\s+([A-Za-z_][A-Za-z0-9_]*)\s*-?%\}`}
	docsEndRe  = lazy.Regexp{Expr: `\{%-?\s*enddocs\s*-?%\}`}
	// docCallRe finds {{ doc('name') }}, doc("name"), and the
	// doc('package', 'name') form, whose last argument names the block.
	docCallRe = lazy.Regexp{Expr: `\{\{-?\s*doc\(\s*['"]([^'"]*)['"]\s*(?:,\s*['"]([^'"]*)['"]\s*)?\)\s*-?\}\}`}
)

// readDocs reads the docs blocks of every .md file under the docs paths.
// A name defined twice is an error, as it is to dbt.
func (p *project) readDocs() error {
	p.docs = map[string]docBlock{}
	files, err := p.find(p.docsPaths, ".md")
	if err != nil {
		return err
	}
	for _, f := range files {
		full := p.abs(f.rel)
		data, err := os.ReadFile(full)
		if err != nil {
			return fmt.Errorf("reading docs blocks: %w", err)
		}
		text := string(data)
		found := false
		for at := 0; ; {
			m := docsOpenRe.Get().FindStringSubmatchIndex(text[at:])
			if m == nil {
				break
			}
			name := text[at+m[2] : at+m[3]]
			line := 1 + strings.Count(text[:at+m[0]], "\n")
			body := at + m[1]
			end := docsEndRe.Get().FindStringIndex(text[body:])
			if end == nil {
				return fmt.Errorf("%s:%d: docs block %s has no {%% enddocs %%}", full, line, name)
			}
			if prev, ok := p.docs[name]; ok {
				return fmt.Errorf("%s:%d: docs block %s is already defined at %s:%d", full, line, name, prev.file, prev.line)
			}
			p.docs[name] = docBlock{text: strings.TrimSpace(text[body : body+end[0]]), file: full, line: line}
			found = true
			at = body + end[1]
		}
		if found {
			p.used(f.root)
		}
	}
	return nil
}

// resolveDocs replaces every doc() call in a description with its block,
// keeping the text around it. A call to a missing block is an error at
// the description's line.
func (p *project) resolveDocs(f *yfile, line int, what, desc string) (string, error) {
	var missing string
	out := docCallRe.Get().ReplaceAllStringFunc(desc, func(call string) string {
		m := docCallRe.Get().FindStringSubmatch(call)
		name := m[1]
		if m[2] != "" {
			name = m[2]
		}
		b, ok := p.docs[name]
		if !ok {
			if missing == "" {
				missing = name
			}
			return call
		}
		return b.text
	})
	if missing != "" {
		return "", fmt.Errorf("%s:%d: %s: the description calls doc(%q), but no docs block under %s is named %s",
			f.path, line, what, missing, strings.Join(p.docsPaths, ", "), missing)
	}
	return compact(out), nil
}

var (
	// delimiterRowRe is the row under a markdown table's header:
	// |---|:--:|, with or without the outer pipes.
	delimiterRowRe = lazy.Regexp{Expr: `^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?$`}
	// listItemRe is the marker of a markdown list item: -, *, + or 1.
	listItemRe = lazy.Regexp{Expr: `^(?:[-*+]|\d{1,9}[.)])\s+`}
	// headingRe is the marker of a markdown heading.
	headingRe = lazy.Regexp{Expr: `^#{1,6}\s+`}
)

// compact makes a description's markdown one line of text, as a table
// cell holds it: a table's rows become "value: meaning" items (the header
// names the third column on) and a list's items items, each run joined
// with "; "; paragraphs and headings are joined with spaces, a run of
// spaces is one.
func compact(md string) string {
	lines := strings.Split(md, "\n")
	var blocks, para, items []string
	inList := false
	flush := func() {
		if len(para) > 0 {
			blocks = append(blocks, strings.Join(para, " "))
		}
		if len(items) > 0 {
			blocks = append(blocks, strings.Join(items, "; "))
		}
		para, items, inList = nil, nil, false
	}
	for i := 0; i < len(lines); i++ {
		line := strings.Join(strings.Fields(lines[i]), " ")
		switch {
		case line == "":
			flush()
		case strings.Contains(line, "|") && i+1 < len(lines) && delimiterRowRe.Get().MatchString(strings.TrimSpace(lines[i+1])):
			flush()
			header := tableCells(line)
			for i += 2; i < len(lines) && strings.Contains(lines[i], "|"); i++ {
				if item := tableItem(header, tableCells(lines[i])); item != "" {
					items = append(items, item)
				}
			}
			i--
			flush()
		case listItemRe.Get().MatchString(line):
			if !inList {
				flush()
			}
			items, inList = append(items, listItemRe.Get().ReplaceAllString(line, "")), true
		case inList:
			items[len(items)-1] += " " + line // a lazy continuation of the item
		case headingRe.Get().MatchString(line):
			flush()
			blocks = append(blocks, headingRe.Get().ReplaceAllString(line, ""))
		default:
			para = append(para, line)
		}
	}
	flush()
	for i, b := range blocks[:max(0, len(blocks)-1)] {
		if !strings.ContainsAny(b[len(b)-1:], ".:;!?") {
			blocks[i] = b + "."
		}
	}
	return strings.Join(blocks, " ")
}

// tableCells splits a markdown table row into its cells, trimmed and with
// their spaces collapsed; "\|" is a pipe inside a cell.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, row[start:i])
			start = i + 1
		}
	}
	cells = append(cells, row[start:])
	for i, c := range cells {
		cells[i] = strings.Join(strings.Fields(strings.ReplaceAll(c, `\|`, "|")), " ")
	}
	return cells
}

// tableItem is a table row as an item: "first: second, header third, …",
// leaving out empty cells.
func tableItem(header, cells []string) string {
	var rest []string
	for j := 1; j < len(cells); j++ {
		c := cells[j]
		if c == "" {
			continue
		}
		if j >= 2 && j < len(header) && header[j] != "" {
			c = header[j] + " " + c
		}
		rest = append(rest, c)
	}
	switch {
	case len(cells) == 0 || cells[0] == "":
		return strings.Join(rest, ", ")
	case len(rest) == 0:
		return cells[0]
	}
	return cells[0] + ": " + strings.Join(rest, ", ")
}
