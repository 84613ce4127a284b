package compile

import (
	"fmt"
	"io"
	"strings"
)

// Gaps is what the sources of a database leave an agent guessing about.
// None of it stops a bundle from being written.
type Gaps struct {
	Database string `json:"database"`
	// ColumnsWithoutMeaning lists "table.column" for every column the
	// sources describe nowhere.
	ColumnsWithoutMeaning []string `json:"columns_without_meaning"`
	// UnlinkedRules are rules that reach no table, directly or through the
	// rules they use.
	UnlinkedRules []RuleRef `json:"unlinked_rules"`
	// AmbiguousLinks are words of a rule that could mean columns of
	// several tables, or several rules; nothing was linked for them.
	AmbiguousLinks []Ambiguity `json:"ambiguous_links"`
	// MissingColumns are columns a rule names that the database lacks.
	MissingColumns []MissingColumn `json:"missing_columns"`
	// BrokenForeignKeys are foreign keys that reference a table or column
	// the database lacks.
	BrokenForeignKeys []string `json:"broken_foreign_keys"`
	// UnmatchedDescriptions are described tables or columns the database
	// lacks.
	UnmatchedDescriptions []string `json:"unmatched_descriptions"`
}

// RuleRef names a rule.
type RuleRef struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Ambiguity is a word of a rule that matches more than one thing.
type Ambiguity struct {
	Rule       RuleRef  `json:"rule"`
	Word       string   `json:"word"`
	Candidates []string `json:"candidates"`
}

// MissingColumn is a column a rule names that does not exist. Table is
// empty when the rule does not say which table.
type MissingColumn struct {
	Rule   RuleRef `json:"rule"`
	Table  string  `json:"table,omitempty"`
	Column string  `json:"column"`
}

// Count returns the number of gaps.
func (g *Gaps) Count() int {
	return len(g.ColumnsWithoutMeaning) + len(g.UnlinkedRules) + len(g.AmbiguousLinks) +
		len(g.MissingColumns) + len(g.BrokenForeignKeys) + len(g.UnmatchedDescriptions)
}

// WriteText writes the gaps for a person to read, one finding a line.
func (g *Gaps) WriteText(w io.Writer) error {
	var b strings.Builder
	if g.Count() == 0 {
		fmt.Fprintf(&b, "%s: no gaps\n", g.Database)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s: %d gaps\n", g.Database, g.Count())
	if n := len(g.ColumnsWithoutMeaning); n > 0 {
		fmt.Fprintf(&b, "  columns without a meaning (%d): %s\n", n, strings.Join(g.ColumnsWithoutMeaning, ", "))
	}
	if n := len(g.UnlinkedRules); n > 0 {
		fmt.Fprintf(&b, "  rules linked to no table (%d):\n", n)
		for _, r := range g.UnlinkedRules {
			fmt.Fprintf(&b, "    %d: %s\n", r.ID, r.Name)
		}
	}
	if n := len(g.AmbiguousLinks); n > 0 {
		fmt.Fprintf(&b, "  ambiguous links, not made (%d):\n", n)
		for _, a := range g.AmbiguousLinks {
			fmt.Fprintf(&b, "    %d: %s: %q could be %s\n", a.Rule.ID, a.Rule.Name, a.Word, strings.Join(a.Candidates, " or "))
		}
	}
	if n := len(g.MissingColumns); n > 0 {
		fmt.Fprintf(&b, "  rules naming columns that do not exist (%d):\n", n)
		for _, m := range g.MissingColumns {
			where := m.Column
			if m.Table != "" {
				where = m.Table + "." + m.Column
			}
			fmt.Fprintf(&b, "    %d: %s: %s\n", m.Rule.ID, m.Rule.Name, where)
		}
	}
	if n := len(g.BrokenForeignKeys); n > 0 {
		fmt.Fprintf(&b, "  foreign keys to missing tables or columns (%d):\n", n)
		for _, f := range g.BrokenForeignKeys {
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	if n := len(g.UnmatchedDescriptions); n > 0 {
		fmt.Fprintf(&b, "  descriptions of tables or columns the database lacks (%d): %s\n", n, strings.Join(g.UnmatchedDescriptions, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// emptyNotNil makes every list non-nil, so the JSON report shows [] for
// "none" rather than null.
func (g *Gaps) emptyNotNil() {
	for _, l := range []*[]string{&g.ColumnsWithoutMeaning, &g.BrokenForeignKeys, &g.UnmatchedDescriptions} {
		if *l == nil {
			*l = []string{}
		}
	}
	if g.UnlinkedRules == nil {
		g.UnlinkedRules = []RuleRef{}
	}
	if g.AmbiguousLinks == nil {
		g.AmbiguousLinks = []Ambiguity{}
	}
	if g.MissingColumns == nil {
		g.MissingColumns = []MissingColumn{}
	}
}
