package readmodel

import (
	"strings"

	"github.com/okf-tools/okf"
)

// A concept's table and rule facts are parsed by okf.ParseFacts, the one
// parser of what okf compile writes; a snapshot keeps them encoded
// (appendFacts) and decodes them on demand, their spans read against the
// snapshot's text.

// Value returns a value of a column's list as stored: its doubled
// quotes made single.
func (s *Snapshot) Value(c *Concept, sp okf.Span) string {
	return strings.ReplaceAll(string(c.text[sp[0]:sp[1]]), "''", "'")
}

// Text returns the text at a span of a concept's body, a table cell's
// escaped pipes ("\|") read as pipes.
func (s *Snapshot) Text(c *Concept, sp okf.Span) string { return sp.Text(c.text) }

// Table returns what a concept that describes a table states about it: set
// when its type names a table or it has a Schema section, else nil. Each
// call decodes the facts anew; the caller may keep and change the result.
func (c *Concept) Table() *okf.TableFacts {
	if !c.IsTable() {
		return nil
	}
	t, _, _ := decodeFacts(c.facts)
	return t
}

// IsTable reports whether the concept describes a table, as Table() != nil
// does, without decoding its facts.
func (c *Concept) IsTable() bool { return c.facts != "" && c.facts[0] == tableTag }

// Rule returns the columns and rules a concept that is not a table says it
// uses; nil when it says none. Like Table, each call decodes anew.
func (c *Concept) Rule() *okf.RuleFacts {
	if c.facts == "" || c.facts[0] != ruleTag {
		return nil
	}
	_, r, _ := decodeFacts(c.facts)
	return r
}
