package dbt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// value is a metric's calculation: in words, and as one scalar SQL
// expression when plain SQL can state it.
type value struct {
	words string
	// sql is the expression, "" when SQL over whole tables cannot state
	// it (a window, a time offset, a filter through a join).
	sql string
	// from is the FROM clause sql reads: a table with the joins its
	// filters need; "" when sql reads through subqueries of its own.
	from string
}

// statement is the query that computes the value over its tables.
func (v value) statement() string {
	if v.from == "" {
		return "SELECT " + v.sql
	}
	return "SELECT " + v.sql + " FROM " + v.from
}

// standalone returns the value's SQL as an expression that needs no FROM.
func (v value) standalone() string {
	if v.from == "" {
		return "(" + v.sql + ")"
	}
	return "(" + v.statement() + ")"
}

// combine fills a format with the SQL of values: over their FROM clause
// when they share it, else each as a subquery.
func combine(format string, vs ...value) string {
	var args []any
	shared := sharedFrom(vs...)
	for _, v := range vs {
		if v.sql == "" {
			return ""
		}
		if shared != "" {
			args = append(args, v.sql)
		} else {
			args = append(args, v.standalone())
		}
	}
	return fmt.Sprintf(format, args...)
}

// sharedFrom is the FROM clause every value reads, or "".
func sharedFrom(vs ...value) string {
	for _, v := range vs {
		if v.from != vs[0].from {
			return ""
		}
	}
	return vs[0].from
}

// renderer turns metrics into rules, computing each metric's value once.
type renderer struct {
	s    *semantics
	done map[*metric]value
	// busy holds the metrics being computed, to refuse a metric built
	// from itself.
	busy []*metric
}

func (r *renderer) rule(m *metric) (*compile.Rule, error) {
	v, err := r.value(m, nil)
	if err != nil {
		return nil, err
	}
	var def strings.Builder
	def.WriteString(capitalize(v.words) + ".\n")
	if v.sql != "" {
		def.WriteString("\n```sql\n" + v.statement() + "\n```\n")
	}
	def.WriteString("\n" + r.provenance(m))
	rule := &compile.Rule{ID: m.id, Name: m.title(), Description: m.desc, Definition: def.String(), Kind: compile.CalculationKind, Aliases: m.aliases}
	for _, in := range []*input{m.numerator, m.denominator} {
		if in != nil {
			rule.DependsOn = appendID(rule.DependsOn, r.s.byName[strings.ToLower(in.name)].id)
		}
	}
	for _, in := range m.inputs {
		rule.DependsOn = appendID(rule.DependsOn, r.s.byName[strings.ToLower(in.name)].id)
	}
	return rule, nil
}

func appendID(ids []int, id int) []int {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// title names a metric by its label, with the name dbt queries it by.
func (m *metric) title() string {
	if m.label == "" || strings.EqualFold(m.label, m.name) {
		return m.name
	}
	return m.label + " (" + m.name + ")"
}

// provenance says what the metric is in dbt's own terms, its filters as
// written, so that an agent can also ask dbt's semantic layer for it.
func (r *renderer) provenance(m *metric) string {
	var b strings.Builder
	fmt.Fprintf(&b, "In dbt's semantic layer: the %s metric `%s`", m.typ, m.name)
	switch m.typ {
	case "simple", "cumulative":
		ms := r.s.measures[strings.ToLower(m.measure.name)]
		fmt.Fprintf(&b, ", over the measure `%s` of the semantic model `%s`", ms.name, ms.model.name)
		if m.window != "" {
			fmt.Fprintf(&b, ", window %s", m.window)
		}
		if m.grain != "" {
			fmt.Fprintf(&b, ", grain to date %s", m.grain)
		}
	case "ratio":
		fmt.Fprintf(&b, ", numerator `%s`, denominator `%s`", m.numerator.name, m.denominator.name)
	case "derived":
		var ins []string
		for _, in := range m.inputs {
			s := "`" + in.name + "`"
			if in.alias != "" {
				s += " as `" + in.alias + "`"
			}
			ins = append(ins, s)
		}
		fmt.Fprintf(&b, ", expr `%s` over %s", m.expr, strings.Join(ins, ", "))
	case "conversion":
		fmt.Fprintf(&b, ", entity `%s`, base measure `%s`, conversion measure `%s`", m.entity, m.base.name, m.conversion.name)
	}
	var filters []string
	for _, in := range []*input{m.measure, m.numerator, m.denominator, m.base, m.conversion} {
		if in != nil {
			filters = append(filters, in.filters...)
		}
	}
	for _, in := range m.inputs {
		filters = append(filters, in.filters...)
	}
	filters = append(filters, m.filters...)
	for _, f := range filters {
		fmt.Fprintf(&b, "; filter %s", codeSpan(strings.TrimSpace(f)))
	}
	b.WriteString(".")
	return b.String()
}

// codeSpan wraps text in a code span that survives backticks in it.
func codeSpan(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return "`` " + s + " ``"
}

// value computes a metric under the filters of the metrics built on it
// (outer); a metric under none is computed once.
func (r *renderer) value(m *metric, outer []string) (value, error) {
	if v, ok := r.done[m]; ok && len(outer) == 0 {
		return v, nil
	}
	if slices.Contains(r.busy, m) {
		return value{}, m.f.errorf(m.at, "metric %s is built from itself", m.name)
	}
	r.busy = append(r.busy, m)
	defer func() { r.busy = r.busy[:len(r.busy)-1] }()
	filters := slices.Concat(outer, m.filters)
	var v value
	var err error
	switch m.typ {
	case "simple":
		v, err = r.measureValue(m, m.measure, filters)
	case "cumulative":
		v, err = r.cumulative(m, filters)
	case "ratio":
		v, err = r.ratio(m, filters)
	case "derived":
		v, err = r.derived(m, filters)
	case "conversion":
		v, err = r.conversionValue(m, filters)
	}
	if err == nil && len(outer) == 0 {
		r.done[m] = v
	}
	return v, err
}

// metricOf finds the metric an input names.
func (r *renderer) metricOf(m *metric, in *input) (*metric, error) {
	x := r.s.byName[strings.ToLower(in.name)]
	if x == nil {
		return nil, m.f.errorf(in.at, "metric %s: no metric is named %s", m.name, in.name)
	}
	return x, nil
}

// measureOf finds the measure an input names.
func (r *renderer) measureOf(m *metric, in *input) (*measure, error) {
	ms := r.s.measures[strings.ToLower(in.name)]
	if ms == nil {
		return nil, m.f.errorf(in.at, "metric %s: no semantic model has a measure named %s", m.name, in.name)
	}
	return ms, nil
}

// measureValue is a measure aggregated over its table, under filters.
func (r *renderer) measureValue(m *metric, in *input, filters []string) (value, error) {
	ms, err := r.measureOf(m, in)
	if err != nil {
		return value{}, err
	}
	t := ms.model.table
	expr := qualify(ms.expr, t)
	agg := aggregations.Get()[ms.agg]
	var words, sql string
	switch {
	case strings.TrimSpace(ms.expr) == "1" && (ms.agg == "sum" || ms.agg == "count"):
		words, sql = "number of rows of "+t.Name, "COUNT(*)"
	case ms.agg == "percentile":
		words, sql = fmt.Sprintf(agg.words, expr, ms.percentile)+" over "+t.Name, fmt.Sprintf(agg.sql, expr, ms.percentile)
	default:
		words, sql = fmt.Sprintf(agg.words, expr)+" over "+t.Name, fmt.Sprintf(agg.sql, expr)
	}
	if len(t.PrimaryKey) > 0 {
		words += " (one row per " + qualifiedKey(t) + ")"
	}
	from := t.Name
	conds, others, ok := r.conditions(slices.Concat(in.filters, filters), ms.model, ms.aggTime)
	for _, o := range others {
		if o == t {
			continue
		}
		// A filter on another table joins it through a foreign key of
		// t's, which keeps one row per row of t.
		join := joinClause(t, o)
		if join == "" {
			ok = false
			continue
		}
		words += ", joined to " + o.Name + " on " + join
		from += " JOIN " + o.Name + " ON " + join
	}
	if len(conds) > 0 {
		words += " where " + strings.Join(conds, " and ")
		sql += " FILTER (WHERE " + strings.Join(conds, " AND ") + ")"
	}
	if ms.nonAdditive != "" {
		words += ", counting only the rows at the last " + r.dimensionColumn(ms.model, ms.nonAdditive) + " of each period"
		ok = false
	}
	if !ok {
		sql = ""
	}
	return value{words: words, sql: sql, from: from}, nil
}

// joinClause is the ON condition of a foreign key from t to o, or "".
func joinClause(t, o *compile.Table) string {
	for _, fk := range t.ForeignKeys {
		if !strings.EqualFold(fk.RefTable, o.Name) {
			continue
		}
		var on []string
		for i, c := range fk.Columns {
			on = append(on, fmt.Sprintf("%s.%s = %s.%s", o.Name, fk.RefColumns[i], t.Name, c))
		}
		return strings.Join(on, " AND ")
	}
	return ""
}

func qualifiedKey(t *compile.Table) string {
	keys := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		keys[i] = t.Name + "." + k
	}
	return strings.Join(keys, ", ")
}

// cumulative is a measure accumulated along its time dimension.
func (r *renderer) cumulative(m *metric, filters []string) (value, error) {
	v, err := r.measureValue(m, m.measure, filters)
	if err != nil {
		return v, err
	}
	ms := r.s.measures[strings.ToLower(m.measure.name)]
	by := r.timeColumn(ms)
	switch {
	case m.window != "":
		v.words += fmt.Sprintf(", accumulated over the trailing %s up to each %s", m.window, by)
	case m.grain != "":
		v.words += fmt.Sprintf(", accumulated from the start of each %s up to each %s (%s to date)", m.grain, by, m.grain)
	default:
		v.words += ", accumulated over all earlier rows up to each " + by
	}
	v.sql = ""
	return v, nil
}

// ratio divides one metric by another, as a fraction (never integer
// division).
func (r *renderer) ratio(m *metric, filters []string) (value, error) {
	var vs []value
	var names []string
	for _, in := range []*input{m.numerator, m.denominator} {
		x, err := r.metricOf(m, in)
		if err != nil {
			return value{}, err
		}
		v, err := r.value(x, slices.Concat(in.filters, filters))
		if err != nil {
			return value{}, err
		}
		vs = append(vs, v)
		names = append(names, x.displayName())
	}
	return value{
		words: fmt.Sprintf("%s (%s) divided by %s (%s)", names[0], vs[0].words, names[1], vs[1].words),
		sql:   combine("CAST(%s AS DOUBLE PRECISION) / NULLIF(%s, 0)", vs...),
		from:  sharedFrom(vs...),
	}, nil
}

// displayName is how the words name a metric.
func (m *metric) displayName() string {
	if m.label != "" {
		return m.label
	}
	return m.name
}

// derived computes an expression over other metrics, each named in it by
// its alias or name.
func (r *renderer) derived(m *metric, filters []string) (value, error) {
	var vs []value
	var parts []string
	names := map[string]int{}
	for i, in := range m.inputs {
		x, err := r.metricOf(m, in)
		if err != nil {
			return value{}, err
		}
		v, err := r.value(x, slices.Concat(in.filters, filters))
		if err != nil {
			return value{}, err
		}
		if in.offset != "" {
			v.words += ", " + in.offset
			v.sql = ""
		}
		vs = append(vs, v)
		alias := in.name
		if in.alias != "" {
			alias = in.alias
		}
		names[strings.ToLower(alias)] = i
		parts = append(parts, fmt.Sprintf("%s is %s (%s)", alias, x.displayName(), v.words))
	}
	out := value{words: "computed as " + m.expr + ", where " + strings.Join(parts, "; and "), from: sharedFrom(vs...)}
	sqls := make([]string, len(vs))
	for i, v := range vs {
		if v.sql == "" {
			return out, nil
		}
		sqls[i] = "(" + v.sql + ")"
		if out.from == "" {
			sqls[i] = v.standalone()
		}
	}
	out.sql = replaceIdents(m.expr, func(id string) (string, bool) {
		i, ok := names[strings.ToLower(id)]
		if !ok {
			return "", false
		}
		return sqls[i], true
	})
	return out, nil
}

// conversionValue says in words how a conversion metric counts.
func (r *renderer) conversionValue(m *metric, filters []string) (value, error) {
	base, err := r.measureValue(m, m.base, filters)
	if err != nil {
		return base, err
	}
	conv, err := r.measureValue(m, m.conversion, filters)
	if err != nil {
		return conv, err
	}
	ms := r.s.measures[strings.ToLower(m.base.name)]
	entity := m.entity
	for _, e := range ms.model.entities {
		if strings.EqualFold(e.name, m.entity) {
			entity = qualify(e.expr, ms.model.table)
		}
	}
	within := ""
	if m.window != "" {
		within = " within " + m.window
	}
	words := fmt.Sprintf("the share of base events (%s) followed%s by a conversion (%s) of the same %s",
		base.words, within, conv.words, entity)
	if strings.EqualFold(m.calculation, "conversions") {
		words = fmt.Sprintf("the number of conversions (%s) that follow%s a base event (%s) of the same %s",
			conv.words, within, base.words, entity)
	}
	return value{words: words}, nil
}

// filterCallRe finds the references MetricFlow filters make, {{
// Dimension('order__status') }}, with the granularity a TimeDimension may
// give.
var filterCallRe = lazy.Regexp{Expr: `\{\{\s*(Dimension|TimeDimension|Entity)\(\s*['"]([^'"]+)['"]\s*(?:,\s*['"]([^'"]*)['"]\s*)?\)\s*\}\}`}

// conditions resolves filters to SQL conditions over the columns they
// name, and returns the tables of those columns. ok is false when a
// reference is left unresolved (a Metric() filter, a coarser time grain):
// the conditions then keep it as written, for the words.
func (r *renderer) conditions(filters []string, home *semModel, aggTime string) (conds []string, tables []*compile.Table, ok bool) {
	ok = true
	for _, f := range filters {
		cond := filterCallRe.Get().ReplaceAllStringFunc(f, func(call string) string {
			m := filterCallRe.Get().FindStringSubmatch(call)
			if m[1] == "TimeDimension" && m[3] != "" && !strings.EqualFold(m[3], "day") {
				ok = false
				return call
			}
			col, table := r.reference(m[1], m[2], home, aggTime)
			if table == nil {
				ok = false
				return call
			}
			if !slices.Contains(tables, table) {
				tables = append(tables, table)
			}
			return col
		})
		if strings.Contains(cond, "{{") {
			ok = false
		}
		conds = append(conds, strings.Join(strings.Fields(cond), " "))
	}
	return conds, tables, ok
}

// reference resolves a filter's Dimension, TimeDimension or Entity: a
// name with its entity path (customer__region is the region of the
// semantic model whose primary entity is customer), or metric_time, the
// measure's time dimension. It returns the column's SQL and table, or a
// nil table when nothing matches.
func (r *renderer) reference(kind, ref string, home *semModel, aggTime string) (string, *compile.Table) {
	parts := strings.Split(ref, "__")
	last := parts[len(parts)-1]
	if strings.EqualFold(last, "metric_time") {
		last = aggTime
		if last == "" {
			last = home.aggTime
		}
		parts = []string{last}
	}
	var models []*semModel
	if len(parts) > 1 {
		models = r.s.byEntity(parts[len(parts)-2])
	} else {
		models = append([]*semModel{home}, r.s.models...)
	}
	for _, sm := range models {
		fields := sm.dims
		if kind == "Entity" {
			fields = sm.entities
		}
		for _, fd := range fields {
			if !strings.EqualFold(fd.name, last) {
				continue
			}
			col := qualify(fd.expr, sm.table)
			if !identRe.Get().MatchString(strings.TrimSpace(fd.expr)) {
				col = "(" + col + ")" // an expression keeps its own precedence
			}
			return col, sm.table
		}
	}
	return "", nil
}

// byEntity returns the semantic models an entity identifies: those where
// it is the primary, unique or natural entity.
func (s *semantics) byEntity(entity string) []*semModel {
	var out []*semModel
	for _, sm := range s.models {
		for _, e := range sm.entities {
			if strings.EqualFold(e.name, entity) && e.typ != "foreign" {
				out = append(out, sm)
				break
			}
		}
	}
	return out
}

// timeColumn is the column a measure is dated by.
func (r *renderer) timeColumn(ms *measure) string {
	name := ms.aggTime
	if name == "" {
		name = ms.model.aggTime
	}
	if name == "" {
		return "date"
	}
	return r.dimensionColumn(ms.model, name)
}

// dimensionColumn is the column of a dimension of sm, or the name as
// given when sm has no such dimension.
func (r *renderer) dimensionColumn(sm *semModel, name string) string {
	for _, d := range sm.dims {
		if strings.EqualFold(d.name, name) {
			return qualify(d.expr, sm.table)
		}
	}
	return qualify(name, sm.table)
}

// identRe is a bare SQL identifier.
var identRe = lazy.Regexp{Expr: `^[A-Za-z_][A-Za-z0-9_]*$`}

// qualify prefixes the column names of a SQL expression with their table,
// so that the rule names table.column and the linker finds them. An
// expression that is a single name is a column even when the table's
// columns are unknown: the gap report then says the column is missing.
func qualify(expr string, t *compile.Table) string {
	e := strings.TrimSpace(expr)
	if identRe.Get().MatchString(e) {
		if c := t.Column(e); c != nil {
			e = c.Name
		}
		return t.Name + "." + e
	}
	return replaceIdents(e, func(id string) (string, bool) {
		if c := t.Column(id); c != nil {
			return t.Name + "." + c.Name, true
		}
		return "", false
	})
}

// replaceIdents replaces the bare identifiers of a SQL expression (not
// inside quotes, not a function's name, not part of a dotted name) that
// with returns a replacement for.
func replaceIdents(e string, with func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(e); {
		c := e[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(e) {
				if e[j] == c {
					if j+1 < len(e) && e[j+1] == c {
						j += 2 // a doubled quote inside the quotes
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(e))
			b.WriteString(e[i:j])
			i = j
		case isIdentByte(c):
			j := i
			for j < len(e) && isIdentByte(e[j]) {
				j++
			}
			word := e[i:j]
			rest := strings.TrimLeft(e[j:], " \t\n")
			dotted := i > 0 && e[i-1] == '.' || strings.HasPrefix(e[j:], ".")
			call := strings.HasPrefix(rest, "(")
			if r, ok := with(word); ok && !dotted && !call && !isDigit(c) {
				b.WriteString(r)
			} else {
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
