package dbt

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// semantics is the project's semantic layer, as MetricFlow's YAML spec
// (dbt 1.6 to 1.11) writes it: semantic_models with entities, dimensions
// and measures, and metrics over them.
type semantics struct {
	models   []*semModel
	measures map[string]*measure // by lower name
	metrics  []*metric
	byName   map[string]*metric // by lower name
	// metricFiles are the files that define metrics, cited by the rules.
	metricFiles []string
}

// semModel is one semantic model: a dbt model seen as entities,
// dimensions and measures.
type semModel struct {
	name, desc string
	n          *node
	aggTime    string // defaults.agg_time_dimension
	entities   []field
	dims       []field
	// table is the model's table in the database being built, set by
	// addSemantics.
	table *compile.Table
}

// field is an entity or a dimension: a name, a type and the SQL
// expression it stands for (its name when none is given).
type field struct {
	name, typ, expr string
}

// measure is an aggregation of a semantic model's column or expression.
type measure struct {
	name, agg, expr, aggTime, percentile, nonAdditive string
	model                                             *semModel
}

// metric is one metric, or a measure's create_metric.
type metric struct {
	name, label, desc, typ string
	aliases                []string
	filters                []string
	// measure is the input of simple and cumulative metrics.
	measure *input
	// numerator and denominator are a ratio's metrics.
	numerator, denominator *input
	// expr and inputs make a derived metric.
	expr   string
	inputs []*input
	// window and grain bound a cumulative metric.
	window, grain string
	// entity, calculation, base and conversion make a conversion metric.
	entity, calculation string
	base, conversion    *input
	f                   *yfile
	at                  *yaml.Node
	id                  int
}

// input is a measure or metric a metric is built from, with its own
// filter, alias and time offset.
type input struct {
	name, alias, offset string
	filters             []string
	at                  *yaml.Node
}

// aggregation is a calculation in words and in SQL, each a format of the
// measure's expression.
type aggregation struct{ words, sql string }

// aggregations maps MetricFlow's agg names to their calculation.
var aggregations = lazy.Value[map[string]aggregation]{New: func() map[string]aggregation {
	return map[string]aggregation{
		"sum":            {"sum of %s", "SUM(%s)"},
		"max":            {"largest %s", "MAX(%s)"},
		"min":            {"smallest %s", "MIN(%s)"},
		"average":        {"average of %s", "AVG(%s)"},
		"count":          {"count of %s", "COUNT(%s)"},
		"count_distinct": {"number of distinct %s", "COUNT(DISTINCT %s)"},
		"sum_boolean":    {"number of rows where %s is true", "SUM(CASE WHEN %s THEN 1 ELSE 0 END)"},
		"median":         {"median of %s", "PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY %s)"},
		"percentile":     {"percentile %[2]s of %[1]s", "PERCENTILE_CONT(%[2]s) WITHIN GROUP (ORDER BY %[1]s)"},
	}
}}

// read reads the semantic models and metrics of one properties file.
func (s *semantics) read(p *project, f *yfile) error {
	if s.measures == nil {
		s.measures, s.byName = map[string]*measure{}, map[string]*metric{}
	}
	models, err := f.entries("semantic_models")
	if err != nil {
		return err
	}
	for _, it := range models {
		if err := s.readModel(p, f, it); err != nil {
			return err
		}
	}
	metrics, err := f.entries("metrics")
	if err != nil {
		return err
	}
	for _, it := range metrics {
		m, err := readMetric(p, f, it)
		if err != nil {
			return err
		}
		if err := s.addMetric(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *semantics) addMetric(m *metric) error {
	key := strings.ToLower(m.name)
	if prev := s.byName[key]; prev != nil {
		return m.f.errorf(m.at, "metric %s is already defined at %s:%d", m.name, prev.f.path, prev.at.Line)
	}
	s.byName[key] = m
	s.metrics = append(s.metrics, m)
	if !slices.Contains(s.metricFiles, m.f.rel) {
		s.metricFiles = append(s.metricFiles, m.f.rel)
	}
	return nil
}

func (s *semantics) readModel(p *project, f *yfile, it *yaml.Node) error {
	sm := &semModel{name: name(it)}
	what := "semantic model " + sm.name
	ref, err := f.text(it, "model")
	if err != nil {
		return err
	}
	if ref == "" {
		return f.errorf(it, "%s has no model: ref('…')", what)
	}
	if sm.n, err = p.resolve(f, lookup(it, "model"), what, ref); err != nil {
		return err
	}
	desc, err := f.text(it, "description")
	if err != nil {
		return err
	}
	if sm.desc, err = p.resolveDocs(f, it.Line, what, desc); err != nil {
		return err
	}
	if sm.aggTime, err = f.text(lookup(it, "defaults"), "agg_time_dimension"); err != nil {
		return err
	}
	for _, part := range []struct {
		key  string
		into *[]field
	}{{"entities", &sm.entities}, {"dimensions", &sm.dims}} {
		items, err := f.list(it, part.key)
		if err != nil {
			return err
		}
		for _, fi := range items {
			fd, err := readField(f, fi, what+": "+part.key)
			if err != nil {
				return err
			}
			*part.into = append(*part.into, fd)
		}
	}
	measures, err := f.list(it, "measures")
	if err != nil {
		return err
	}
	for _, mi := range measures {
		if err := s.readMeasure(p, f, mi, sm); err != nil {
			return err
		}
	}
	s.models = append(s.models, sm)
	return nil
}

func readField(f *yfile, it *yaml.Node, what string) (field, error) {
	var fd field
	var err error
	if fd.name, err = f.text(it, "name"); err != nil {
		return fd, err
	}
	if fd.name == "" {
		return fd, f.errorf(it, "%s: an entry has no name", what)
	}
	if fd.typ, err = f.text(it, "type"); err != nil {
		return fd, err
	}
	if fd.expr, err = f.text(it, "expr"); err != nil {
		return fd, err
	}
	if fd.expr == "" {
		fd.expr = fd.name
	}
	return fd, nil
}

func (s *semantics) readMeasure(p *project, f *yfile, it *yaml.Node, sm *semModel) error {
	nm, err := f.text(it, "name")
	if err != nil {
		return err
	}
	what := "semantic model " + sm.name + ": measure " + nm
	if nm == "" {
		return f.errorf(it, "semantic model %s: a measure has no name", sm.name)
	}
	if prev := s.measures[strings.ToLower(nm)]; prev != nil {
		return f.errorf(it, "%s: the name is already a measure of semantic model %s", what, prev.model.name)
	}
	ms := &measure{name: nm, model: sm}
	if ms.agg, err = f.text(it, "agg"); err != nil {
		return err
	}
	ms.agg = strings.ToLower(ms.agg)
	if _, ok := aggregations.Get()[ms.agg]; !ok {
		return f.errorf(it, "%s: agg %q is not one of sum, max, min, average, count, count_distinct, sum_boolean, median, percentile", what, ms.agg)
	}
	if ms.expr, err = f.text(it, "expr"); err != nil {
		return err
	}
	if ms.expr == "" {
		ms.expr = nm
	}
	if ms.aggTime, err = f.text(it, "agg_time_dimension"); err != nil {
		return err
	}
	if ms.percentile, err = f.text(lookup(it, "agg_params"), "percentile"); err != nil {
		return err
	}
	if ms.agg == "percentile" && ms.percentile == "" {
		return f.errorf(it, "%s: a percentile needs agg_params: {percentile: …}", what)
	}
	nonAdditive := lookup(it, "non_additive_dimension")
	if nonAdditive != nil && nonAdditive.Kind == yaml.ScalarNode {
		ms.nonAdditive = nonAdditive.Value
	} else if ms.nonAdditive, err = f.text(nonAdditive, "name"); err != nil {
		return err
	}
	s.measures[strings.ToLower(nm)] = ms
	create, err := f.flag(it, "create_metric")
	if err != nil || !create {
		return err
	}
	// create_metric: true makes a simple metric of the measure's name.
	m := &metric{name: nm, typ: "simple", measure: &input{name: nm, at: it}, f: f, at: it}
	if m.label, err = f.text(it, "label"); err != nil {
		return err
	}
	desc, err := f.text(it, "description")
	if err != nil {
		return err
	}
	if m.desc, err = p.resolveDocs(f, it.Line, what, desc); err != nil {
		return err
	}
	return s.addMetric(m)
}

// readMetric reads one metric of any type.
func readMetric(p *project, f *yfile, it *yaml.Node) (*metric, error) {
	m := &metric{name: name(it), f: f, at: it}
	what := "metric " + m.name
	var err error
	if m.label, err = f.text(it, "label"); err != nil {
		return nil, err
	}
	desc, err := f.text(it, "description")
	if err != nil {
		return nil, err
	}
	if m.desc, err = p.resolveDocs(f, it.Line, what, desc); err != nil {
		return nil, err
	}
	if m.aliases, err = f.synonyms(it); err != nil {
		return nil, err
	}
	if m.filters, err = f.texts(it, "filter"); err != nil {
		return nil, err
	}
	if m.typ, err = f.text(it, "type"); err != nil {
		return nil, err
	}
	m.typ = strings.ToLower(m.typ)
	params := lookup(it, "type_params")
	need := func(node *yaml.Node, key string) (*input, error) {
		in, err := f.readInput(node, key)
		if err == nil && in == nil {
			err = f.errorf(it, "%s: a %s metric needs type_params.%s", what, m.typ, key)
		}
		return in, err
	}
	switch m.typ {
	case "simple":
		m.measure, err = need(params, "measure")
	case "ratio":
		if m.numerator, err = need(params, "numerator"); err == nil {
			m.denominator, err = need(params, "denominator")
		}
	case "derived":
		if m.expr, err = f.text(params, "expr"); err != nil {
			return nil, err
		}
		if m.expr == "" {
			return nil, f.errorf(it, "%s: a derived metric needs type_params.expr", what)
		}
		items, err := f.list(params, "metrics")
		if err != nil {
			return nil, err
		}
		for _, in := range items {
			x, err := f.input(in)
			if err != nil {
				return nil, err
			}
			m.inputs = append(m.inputs, x)
		}
		if len(m.inputs) == 0 {
			return nil, f.errorf(it, "%s: a derived metric needs type_params.metrics", what)
		}
	case "cumulative":
		if m.measure, err = need(params, "measure"); err != nil {
			return nil, err
		}
		// dbt 1.9 moved window and grain_to_date into cumulative_type_params.
		for _, at := range []*yaml.Node{params, lookup(params, "cumulative_type_params")} {
			if w, err := f.text(at, "window"); err != nil {
				return nil, err
			} else if w != "" {
				m.window = w
			}
			if g, err := f.text(at, "grain_to_date"); err != nil {
				return nil, err
			} else if g != "" {
				m.grain = g
			}
		}
	case "conversion":
		ctp := lookup(params, "conversion_type_params")
		if m.entity, err = f.text(ctp, "entity"); err != nil {
			return nil, err
		}
		if m.calculation, err = f.text(ctp, "calculation"); err != nil {
			return nil, err
		}
		if m.window, err = f.text(ctp, "window"); err != nil {
			return nil, err
		}
		if m.base, err = need(ctp, "base_measure"); err == nil {
			m.conversion, err = need(ctp, "conversion_measure")
		}
		if err == nil && m.entity == "" {
			err = f.errorf(it, "%s: a conversion metric needs conversion_type_params.entity", what)
		}
	default:
		return nil, f.errorf(it, "%s: type %q is not simple, ratio, derived, cumulative or conversion", what, m.typ)
	}
	return m, err
}

// readInput reads the input at key of m: a name, or a mapping with a name
// and its own filter, alias or offset; nil when absent.
func (f *yfile) readInput(m *yaml.Node, key string) (*input, error) {
	v := lookup(m, key)
	if isNull(v) {
		return nil, nil
	}
	return f.input(v)
}

func (f *yfile) input(v *yaml.Node) (*input, error) {
	v = deref(v)
	if v.Kind == yaml.ScalarNode {
		return &input{name: v.Value, at: v}, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, f.errorf(v, "want a name, or a mapping with a name, found %s", kindName(v))
	}
	in := &input{at: v}
	var err error
	if in.name, err = f.text(v, "name"); err != nil {
		return nil, err
	}
	if in.name == "" {
		return nil, f.errorf(v, "an input has no name")
	}
	if in.alias, err = f.text(v, "alias"); err != nil {
		return nil, err
	}
	if in.filters, err = f.texts(v, "filter"); err != nil {
		return nil, err
	}
	if in.offset, err = f.text(v, "offset_window"); err != nil {
		return nil, err
	}
	if in.offset != "" {
		in.offset += " earlier"
	} else if g, err := f.text(v, "offset_to_grain"); err != nil {
		return nil, err
	} else if g != "" {
		in.offset = "at the start of the " + g
	}
	return in, nil
}

// addSemantics settles the semantic layer on the database being built:
// each semantic model's description, primary entity and foreign entities
// fill in what its table lacks (a description, a key, joins), and each
// metric becomes a calculation rule.
func (p *project) addSemantics(db *compile.Database) error {
	s := &p.sem
	for _, sm := range s.models {
		sm.table = findTable(db, sm.n)
		if sm.table == nil {
			// The catalog lacks the table: the rules still name it, and
			// the gap report says they reach no table.
			sm.table = &compile.Table{Name: sm.n.table.Name}
			continue
		}
		if sm.desc != "" && (sm.table.Meaning == "" || sm.table == sm.n.table && !sm.n.documented) {
			sm.table.Meaning = sm.desc
		}
		for _, e := range sm.entities {
			if e.typ == "primary" && len(sm.table.PrimaryKey) == 0 && allColumns(sm.table, []string{e.expr}) {
				sm.table.PrimaryKey = spelled(sm.table, []string{e.expr})
			}
		}
	}
	for _, sm := range s.models {
		for _, e := range sm.entities {
			if e.typ != "foreign" || !allColumns(sm.table, []string{e.expr}) {
				continue
			}
			if target, col := s.keyEntity(e.name); target != nil && target != sm && allColumns(target.table, []string{col}) {
				addForeignKey(sm.table, compile.ForeignKey{
					Columns: spelled(sm.table, []string{e.expr}), RefTable: target.table.Name, RefColumns: spelled(target.table, []string{col}),
				})
			}
		}
	}
	next := 1
	for _, r := range db.Rules {
		next = max(next, r.ID+1)
	}
	for _, m := range s.metrics {
		m.id = next
		next++
	}
	r := &renderer{s: s, done: map[*metric]value{}}
	for _, m := range s.metrics {
		rule, err := r.rule(m)
		if err != nil {
			return err
		}
		db.Rules = append(db.Rules, rule)
	}
	return nil
}

// keyEntity finds the semantic model whose primary or unique entity has
// the name, and the entity's column.
func (s *semantics) keyEntity(name string) (*semModel, string) {
	for _, sm := range s.models {
		for _, e := range sm.entities {
			if strings.EqualFold(e.name, name) && (e.typ == "primary" || e.typ == "unique") {
				return sm, e.expr
			}
		}
	}
	return nil, ""
}
