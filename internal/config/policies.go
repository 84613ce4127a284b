package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/lazy"
)

// Policy is what one kind of caller may see of the databases: a token
// (okf serve token --policy) or a signed-in caller's policy claim selects
// it. A caller without a policy sees what the databases' guards allow.
type Policy struct {
	Name string `yaml:"name"`
	// Databases are those the caller may use; empty is every database of
	// its tenant.
	Databases []string `yaml:"databases"`
	// DeniedColumns and MaskedColumns ("table.column") add to each
	// database's guard: a denied column is refused, a masked one shows a
	// mask wherever a result would show its values.
	DeniedColumns []string `yaml:"denied_columns"`
	MaskedColumns []string `yaml:"masked_columns"`
	// RowFilters are, by table, the condition a row must meet for the
	// caller to read it, in SQL over the table's columns, with the
	// caller's values as :caller.NAME ("region = :caller.region").
	RowFilters map[string]string `yaml:"row_filters"`
	Line       int               `yaml:"-"`
}

// callerRef is a caller's value in a row filter.
var callerRef = lazy.Regexp{Expr: `:caller\.([A-Za-z_][A-Za-z0-9_]*)`}

// CallerValues lists the names of the caller's values a row filter uses,
// in order, each once.
func CallerValues(filter string) []string {
	var out []string
	for _, m := range callerRef.Get().FindAllStringSubmatch(filter, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// Policy returns the policy of a name.
func (c *Config) Policy(name string) (Policy, bool) {
	i := slices.IndexFunc(c.Policies, func(p Policy) bool { return p.Name == name })
	if i < 0 {
		return Policy{}, false
	}
	return c.Policies[i], true
}

// linePolicies records where each policy starts, for error messages.
func linePolicies(doc *yaml.Node, ps []Policy) {
	if list := mappingValue(doc, "policies"); list != nil && list.Kind == yaml.SequenceNode {
		for i, item := range list.Content {
			if i < len(ps) {
				ps[i].Line = item.Line
			}
		}
	}
}

// checkPolicies checks the policies against the databases they name, and
// the tokens against the policies.
func (c *Config) checkPolicies() error {
	var names []string
	for i, p := range c.Policies {
		at := fmt.Sprintf("%d: policies[%d]", p.Line, i)
		switch {
		case p.Name == "":
			return fmt.Errorf("%s: name is missing", at)
		case slices.Contains(names, p.Name):
			return fmt.Errorf("%s: name %q is used twice", at, p.Name)
		}
		at += " (" + p.Name + ")"
		names = append(names, p.Name)
		for _, d := range p.Databases {
			if !slices.ContainsFunc(c.Databases, func(db Database) bool { return db.Name == d }) {
				return fmt.Errorf("%s: no database is called %q", at, d)
			}
		}
		for _, list := range []struct {
			key  string
			cols []string
		}{{"denied_columns", p.DeniedColumns}, {"masked_columns", p.MaskedColumns}} {
			for _, col := range list.cols {
				if t, c, ok := strings.Cut(col, "."); !ok || t == "" || c == "" {
					return fmt.Errorf("%s: %s: %q is not table.column", at, list.key, col)
				}
			}
		}
		for table, filter := range p.RowFilters {
			switch {
			case table == "" || strings.ContainsAny(table, " \t\"`;"):
				return fmt.Errorf("%s: row_filters: %q is not a table name", at, table)
			case strings.TrimSpace(filter) == "":
				return fmt.Errorf("%s: row_filters: %s's filter is empty", at, table)
			case strings.Contains(filter, ";"):
				return fmt.Errorf("%s: row_filters: %s's filter holds a ';': a filter is one condition", at, table)
			}
		}
	}
	for i, t := range c.Serve.Tokens {
		if t.Policy != "" && !slices.Contains(names, t.Policy) {
			return fmt.Errorf("%d: serve.tokens[%d] (%s): no policy is called %q", t.Line, i, t.Name, t.Policy)
		}
	}
	return nil
}
