package engine

import (
	"context"
	"slices"

	"github.com/okf-tools/okf/sqlguard"
)

// Policy is what one kind of caller may see of its tenant's databases:
// which of them, and beyond each database's guard, further denied and
// masked columns and the rows of each table it may read.
type Policy struct {
	Name string
	// Databases are those the caller may use; nil is every one of the
	// tenant's.
	Databases     []string
	DeniedColumns []string
	MaskedColumns []string
	// RowFilters are, by table, the condition a row must meet, over the
	// caller's values (sqlguard.Options.RowFilters).
	RowFilters map[string]string
}

// Caller is who asks: the policy it is held to (nil for none) and its
// values, which row filters read.
type Caller struct {
	Policy *Policy
	Values map[string]string
}

type callerKey struct{}

// WithCaller holds the databases read with ctx to a caller's policy. The
// transports set it from what authenticated the request, never from a
// tool's arguments.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// Allows reports whether the policy lets its callers use a database.
func (p *Policy) Allows(database string) bool {
	return p == nil || p.Databases == nil || slices.Contains(p.Databases, database)
}

// Options are a database's guard options with the policy's added, and
// the policy named in them (okf prepare installs its row filters by that
// name, and the guard signs it into each transaction).
func (p *Policy) Options(o sqlguard.Options) sqlguard.Options {
	if p == nil {
		return o
	}
	o.Policy = p.Name
	o.DeniedColumns = append(slices.Clone(o.DeniedColumns), p.DeniedColumns...)
	o.MaskedColumns = append(slices.Clone(o.MaskedColumns), p.MaskedColumns...)
	if len(p.RowFilters) > 0 {
		filters := map[string]string{}
		for t, f := range o.RowFilters {
			filters[t] = f
		}
		for t, f := range p.RowFilters {
			if prev, ok := filters[t]; ok {
				// Both hold: the database's filter and the policy's.
				f = "(" + prev + ") AND (" + f + ")"
			}
			filters[t] = f
		}
		o.RowFilters = filters
	}
	return o
}

// PolicyName is the name of the policy the caller of ctx is held to, ""
// for none.
func PolicyName(ctx context.Context) string { return callerFrom(ctx).Policy.name() }

func (p *Policy) name() string {
	if p == nil {
		return ""
	}
	return p.Name
}
