package readmodel

import (
	"encoding/binary"

	"github.com/okf-tools/okf"
)

// QueryFacts is what a query concept (type SQL Query, docs/queries.md)
// states: its SQL with :name placeholders, its parameters and the
// questions it answers. Only a query concept with no fault okf validate
// would report has them, so whatever serves one as a tool can trust its
// shape.
type QueryFacts struct {
	SQL       string   `json:"sql"`
	Params    []Param  `json:"params,omitempty"`
	Questions []string `json:"questions,omitempty"`
}

// Param is one parameter of a query concept, its values as written.
type Param struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description,omitempty"`
	Default     string   `json:"default,omitempty"`
	HasDefault  bool     `json:"has_default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Min         string   `json:"min,omitempty"` // "" when unbounded
	Max         string   `json:"max,omitempty"`
}

// Query returns a query concept's facts; nil for any other concept. Each
// call decodes anew.
func (c *Concept) Query() *QueryFacts {
	if c.facts == "" || c.facts[0] != queryTag {
		return nil
	}
	q, _ := decodeQuery(c.facts)
	return q
}

// IsQuery reports whether the concept is a well-formed query concept, as
// Query() != nil does, without decoding its facts.
func (c *Concept) IsQuery() bool { return c.facts != "" && c.facts[0] == queryTag }

// readQuery reads a query concept's facts, or says why it has none.
func readQuery(d *okf.Document) (*QueryFacts, string) {
	q, findings := okf.ParseQuery(d)
	if len(findings) > 0 {
		return nil, "not served as a query: " + findings[0].Message
	}
	out := &QueryFacts{SQL: q.SQL, Questions: q.Questions}
	for _, p := range q.Params {
		qp := Param{Name: p.Name, Type: p.Type, Description: p.Description}
		if p.Default != nil {
			qp.Default, qp.HasDefault = p.Default.Value, true
		}
		for _, e := range p.Enum {
			qp.Enum = append(qp.Enum, e.Value)
		}
		if p.Min != nil {
			qp.Min = p.Min.Value
		}
		if p.Max != nil {
			qp.Max = p.Max.Value
		}
		out.Params = append(out.Params, qp)
	}
	return out, ""
}

const queryTag = 'q'

func appendQuery(b []byte, q *QueryFacts) []byte {
	b = append(b, queryTag)
	b = appendString(b, q.SQL)
	b = binary.AppendUvarint(b, uint64(len(q.Params)))
	for _, p := range q.Params {
		b = appendStrings(b, []string{p.Name, p.Type, p.Description, p.Default, p.Min, p.Max})
		hasDefault := byte(0)
		if p.HasDefault {
			hasDefault = 1
		}
		b = append(b, hasDefault)
		b = appendStrings(b, p.Enum)
	}
	return appendStrings(b, q.Questions)
}

func decodeQuery(part string) (*QueryFacts, error) {
	r := &factsReader{rest: part[1:]}
	q := &QueryFacts{SQL: r.string()}
	q.Params = items(r, func(p *Param) {
		f := r.strings()
		if len(f) != 6 {
			if r.err == nil {
				r.err = errShortParam
			}
			return
		}
		p.Name, p.Type, p.Description, p.Default, p.Min, p.Max = f[0], f[1], f[2], f[3], f[4], f[5]
		p.HasDefault = r.byte() == 1
		p.Enum = r.strings()
	})
	q.Questions = r.strings()
	if r.err == nil && r.rest != "" {
		r.err = errTrailing
	}
	if r.err != nil {
		return nil, r.err
	}
	return q, nil
}
