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
	return strings.TrimSpace(out), nil
}
