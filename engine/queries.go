package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/okf-tools/okf/queries"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/sqlguard"
)

// Verified queries as tools. A query concept (type SQL Query) that is not
// a draft and whose bundle documents one of the tenant's databases is a
// tool of its own, up to a cap, the most used first; run_query reaches
// every one of them by id. A call's values are checked against the
// parameters' types and bounds, then sent beside the SQL as the driver's
// parameters, through the same guard as run_sql.

// ToolRunQuery runs any verified query by id.
const ToolRunQuery = "run_query"

// DefaultQueryTools is how many verified queries a tenant lists as tools
// of their own when its configuration does not say: enough for the
// questions asked every week, few enough that a model still reads the
// list.
const DefaultQueryTools = 8

// MaxQueryTools bounds the setting: every tool's definition is paid for by
// every conversation.
const MaxQueryTools = 64

// MaxParamText bounds one text value of a query call.
const MaxParamText = 4096

const descRunQuery = "Run a verified query (a concept of type SQL Query; search finds them) by id with its parameters; " +
	"values are checked against the query's parameter types and sent apart from the SQL."

// RunQueryInput asks to run one verified query.
type RunQueryInput struct {
	ID     string                     `json:"id" jsonschema:"the query's id, bundle/id or tool name"`
	Params map[string]json.RawMessage `json:"params,omitempty" jsonschema:"parameter values by name"`
}

// Uses counts the calls of each verified query, to rank which are listed
// as tools. The toolboxes of one tenant share one; it is safe for
// concurrent use, and a nil *Uses ranks by id alone.
type Uses struct {
	mu sync.Mutex
	n  map[string]int
}

func (u *Uses) add(ref string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == nil {
		u.n = map[string]int{}
	}
	u.n[ref]++
}

// AuditedUses counts, per tenant, the calls of verified queries that the
// audit log at path records as run without error (sqlguard.ReadAudit), so
// that okf serve and okf mcp rank their query tools by use from the first
// session on. tenantOf names the tenant of a database ("" for none). A
// missing log counts nothing.
func AuditedUses(path string, tenantOf func(database string) string) (map[string]*Uses, error) {
	out := map[string]*Uses{}
	err := sqlguard.ReadAudit(path, func(e sqlguard.AuditEntry) {
		if e.Query == "" || e.Error != "" {
			return
		}
		if tenant := tenantOf(e.Database); tenant != "" {
			if out[tenant] == nil {
				out[tenant] = &Uses{}
			}
			out[tenant].add(e.Query)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the audit log for query uses: %w", err)
	}
	return out, nil
}

func (u *Uses) count(ref string) int {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[ref]
}

// servedQuery is a verified query a toolbox serves.
type servedQuery struct {
	tool, ref string
	concept   *readmodel.Concept
	db        Database
}

// servedQueries returns the view's verified queries that have a database
// of the tenant to run on, sorted by bundle and id, each with a tool name
// that does not depend on use.
func (t *Toolbox) servedQueries(ctx context.Context, v *View) []servedQuery {
	var out []servedQuery
	dbs := t.Databases.Visible(ctx, t.Tenant)
	taken := map[string]bool{}
	for _, name := range ToolNames {
		taken[name] = true
	}
	taken[ToolRunQuery] = true
	for i := range v.Snap.Concepts {
		c := &v.Snap.Concepts[i]
		if !c.IsQuery() || c.Status == "draft" || c.Status == "deprecated" {
			continue
		}
		db, ok := queryDatabase(dbs, c.Bundle)
		if !ok {
			continue
		}
		name := toolName(c.ID[strings.LastIndexByte(c.ID, '/')+1:])
		if taken[name] {
			name = toolName(c.Bundle + "_" + c.ID)
		}
		base := name[:min(len(name), 58)]
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		taken[name] = true
		out = append(out, servedQuery{tool: name, ref: c.Bundle + "/" + c.ID, concept: c, db: db})
	}
	return out
}

// queryDatabase is the database a bundle's queries run on: the one it
// documents, else the one named as it.
func queryDatabase(dbs []Database, bundle string) (Database, bool) {
	for _, pick := range []func(Database) bool{
		func(d Database) bool { return d.Bundle == bundle },
		func(d Database) bool { return d.Name == bundle },
	} {
		if i := slices.IndexFunc(dbs, pick); i >= 0 {
			return dbs[i], true
		}
	}
	return Database{}, false
}

// toolName makes a tool name every provider accepts: letters, digits and
// _, at most 64 characters.
func toolName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" {
		name = "query"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// listedQueries are the queries listed as tools of their own: the most
// used first, up to the cap, then in the order of servedQueries.
func (t *Toolbox) listedQueries(all []servedQuery) []servedQuery {
	limit := t.ListedQueries
	switch {
	case limit == 0:
		limit = DefaultQueryTools
	case limit < 0:
		limit = 0
	}
	limit = min(limit, MaxQueryTools)
	ranked := slices.Clone(all)
	slices.SortStableFunc(ranked, func(a, b servedQuery) int { return t.Uses.count(b.ref) - t.Uses.count(a.ref) })
	ranked = ranked[:min(limit, len(ranked))]
	slices.SortFunc(ranked, func(a, b servedQuery) int { return strings.Compare(a.ref, b.ref) })
	return ranked
}

// QueryTools are the tools of the verified queries of the current view,
// as Tools lists them: a server that keeps its tool list compares them to
// learn when the list changed.
func (t *Toolbox) QueryTools(ctx context.Context) ([]Tool, error) {
	v, err := t.Current(ctx)
	if err != nil {
		return nil, err
	}
	return t.queryTools(ctx, v), nil
}

// queryTools are the tool definitions of the verified queries: run_query
// when there is any, and the listed ones.
func (t *Toolbox) queryTools(ctx context.Context, v *View) []Tool {
	all := t.servedQueries(ctx, v)
	if len(all) == 0 {
		return nil
	}
	out := []Tool{{ToolRunQuery, descRunQuery, runQuerySchema()}}
	for _, q := range t.listedQueries(all) {
		out = append(out, Tool{q.tool, queryDescription(q), paramSchema(q.concept.Query())})
	}
	return out
}

// queryDescription is a query tool's description: the concept's title and
// summary, and where it runs.
func queryDescription(q servedQuery) string {
	d := q.concept.Title
	if s := q.concept.Summary; s != "-" && s != "" && s != d {
		d += ": " + s
	}
	return fmt.Sprintf("%s (verified SQL, %s, on database %s)", d, q.ref, q.db.Name)
}

// paramSchema is the input schema of a query's tool.
func paramSchema(q *readmodel.QueryFacts) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	for _, p := range q.Params {
		ps := &jsonschema.Schema{Description: p.Description}
		switch p.Type {
		case "integer", "number", "boolean":
			ps.Type = p.Type
		case "text":
			ps.Type = "string"
			ps.MaxLength = new(MaxParamText)
		default:
			ps.Type = "string"
		}
		switch p.Type {
		case "date":
			ps.Format = "date"
		case "timestamp":
			ps.Format = "date-time"
		}
		if p.Type == "integer" || p.Type == "number" {
			if f, err := strconv.ParseFloat(p.Min, 64); err == nil {
				ps.Minimum = &f
			}
			if f, err := strconv.ParseFloat(p.Max, 64); err == nil {
				ps.Maximum = &f
			}
		}
		for _, e := range p.Enum {
			if v, err := paramValue(p, e); err == nil {
				ps.Enum = append(ps.Enum, v)
			}
		}
		if p.HasDefault {
			if v, err := paramValue(p, p.Default); err == nil {
				ps.Default, _ = json.Marshal(v)
			}
		} else {
			s.Required = append(s.Required, p.Name)
		}
		s.Properties[p.Name] = ps
	}
	return s
}

// runQuerySchema is the inferred schema of run_query, with params a plain
// object: its values are whatever the query's parameters take.
func runQuerySchema() *jsonschema.Schema {
	s := schemaOf[RunQueryInput]()
	s.Properties["params"] = &jsonschema.Schema{Type: "object", Description: s.Properties["params"].Description}
	return s
}

// findQuery returns the served query a tool name, id or bundle/id names.
func findQuery(all []servedQuery, name string) (servedQuery, bool) {
	for _, match := range []func(servedQuery) bool{
		func(q servedQuery) bool { return q.tool == name },
		func(q servedQuery) bool { return q.ref == name },
		func(q servedQuery) bool { return q.concept.ID == name },
	} {
		if i := slices.IndexFunc(all, match); i >= 0 {
			return all[i], true
		}
	}
	return servedQuery{}, false
}

// QueryRun is what running a verified query gave.
type QueryRun struct {
	Ref, Database string
	// Values are the values bound, as "name=value" in parameter order.
	Values []string
	// SQL is the statement run, its placeholders the driver's.
	SQL    string
	Result *sqlguard.Result
	Shown  int // rows to show a model
}

// RunQuery runs the verified query a tool name, id or bundle/id names with
// the values given by parameter name. Bad values are a BadRequest naming
// the parameter; refusals and SQL errors are *sqlguard.Error.
func (t *Toolbox) RunQuery(ctx context.Context, caller, name string, values map[string]json.RawMessage) (*QueryRun, error) {
	v, err := t.Current(ctx)
	if err != nil {
		return nil, err
	}
	q, ok := findQuery(t.servedQueries(ctx, v), strings.TrimSpace(name))
	if !ok {
		return nil, BadRequest("there is no verified query %q; search for one (its id is in the first column)", name)
	}
	return t.runQuery(ctx, caller, q, values)
}

func (t *Toolbox) runQuery(ctx context.Context, caller string, q servedQuery, args map[string]json.RawMessage) (*QueryRun, error) {
	facts := q.concept.Query()
	values, shown, err := bindValues(q.ref, facts, args)
	if err != nil {
		return nil, err
	}
	dialect := sqlguard.DialectPostgres
	if q.db.Engine() == "sqlite" {
		dialect = sqlguard.DialectSQLite
	}
	sql, names := queries.Bind(facts.SQL, dialect)
	bound := make([]any, len(names))
	for i, n := range names {
		bound[i] = values[n]
	}
	run := &QueryRun{Ref: q.ref, Database: q.db.Name, Values: shown, SQL: sql}
	run.Result, run.Shown, err = t.Databases.Query(sqlguard.ForQuery(ctx, q.ref), t.Tenant, caller, q.db.Name, sql, bound...)
	if err != nil {
		return run, err
	}
	t.Uses.add(q.ref)
	return run, nil
}

// queryResult renders a query run for a model.
func queryResult(run *QueryRun, err error) (Result, error) {
	if ge, ok := sqlguard.AsError(err); ok {
		return Result{Text: ge.Text(run.SQL), IsError: true, Concepts: []string{run.Ref}}, nil
	}
	if err != nil {
		return Result{}, err
	}
	head := "Query " + run.Ref + " on " + run.Database
	if len(run.Values) > 0 {
		head += " with " + strings.Join(run.Values, ", ")
	}
	return Result{Text: head + ".\n" + FrameRows(capText(run.Result.Text(run.Shown), MaxRowsBytes, "the rows are capped; narrow the query with its parameters")),
		Concepts: []string{run.Ref}}, nil
}

// QueryInfo describes a verified query a tenant serves.
type QueryInfo struct {
	ID       string            `json:"id"` // bundle/id
	Tool     string            `json:"tool"`
	Listed   bool              `json:"listed"` // listed as a tool of its own
	Database string            `json:"database"`
	Title    string            `json:"title"`
	Summary  string            `json:"summary"`
	Params   []readmodel.Param `json:"params"`
	Uses     int               `json:"uses"`
}

// Queries lists the verified queries the tenant serves, by id.
func (t *Toolbox) Queries(ctx context.Context) ([]QueryInfo, error) {
	v, err := t.Current(ctx)
	if err != nil {
		return nil, err
	}
	all := t.servedQueries(ctx, v)
	listed := t.listedQueries(all)
	out := make([]QueryInfo, 0, len(all))
	for _, q := range all {
		params := q.concept.Query().Params
		if params == nil {
			params = []readmodel.Param{}
		}
		out = append(out, QueryInfo{ID: q.ref, Tool: q.tool, Database: q.db.Name, Title: q.concept.Title, Summary: q.concept.Summary,
			Params: params, Uses: t.Uses.count(q.ref), Listed: slices.ContainsFunc(listed, func(l servedQuery) bool { return l.ref == q.ref })})
	}
	return out, nil
}

// bindValues checks a call's values against a query's parameters and
// returns them by name, ready to bind, with their text for the reply.
func bindValues(ref string, q *readmodel.QueryFacts, args map[string]json.RawMessage) (map[string]any, []string, error) {
	var names []string
	for _, p := range q.Params {
		names = append(names, p.Name)
	}
	for name := range args {
		if !slices.Contains(names, name) {
			if len(names) == 0 {
				return nil, nil, BadRequest("query %s takes no parameters, and %q was given", ref, name)
			}
			return nil, nil, BadRequest("query %s has no parameter %q; its parameters are %s", ref, name, strings.Join(names, ", "))
		}
	}
	out := map[string]any{}
	var shown []string
	for _, p := range q.Params {
		raw := bytes.TrimSpace(args[p.Name])
		var (
			v   any
			err error
		)
		switch {
		case len(raw) > 0 && !bytes.Equal(raw, []byte("null")):
			v, err = jsonParam(p, raw)
		case p.HasDefault:
			v, err = paramValue(p, p.Default)
		default:
			return nil, nil, BadRequest("parameter %s of %s is required (%s)", p.Name, ref, p.Type)
		}
		if err == nil {
			err = checkBounds(p, v)
		}
		if err != nil {
			return nil, nil, BadRequest("parameter %s of %s: %v", p.Name, ref, err)
		}
		out[p.Name] = v
		text, _ := json.Marshal(v)
		shown = append(shown, p.Name+"="+string(text))
	}
	return out, shown, nil
}

// jsonParam reads a JSON value given for a parameter. A number or
// boolean may come as a string, as models often send them.
func jsonParam(p readmodel.Param, raw []byte) (any, error) {
	var text string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fmt.Errorf("%s is not a JSON string", raw)
		}
	case '{', '[':
		return nil, fmt.Errorf("want one %s value, not %s", p.Type, describeJSON(raw))
	default:
		if p.Type == "text" || p.Type == "date" || p.Type == "timestamp" {
			return nil, fmt.Errorf("want %s as a string, not %s", p.Type, describeJSON(raw))
		}
		text = string(raw)
	}
	return paramValue(p, text)
}

func describeJSON(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// The layouts a timestamp value may take; it is bound in the first.
var timestampLayouts = []string{time.DateTime, time.RFC3339Nano, "2006-01-02T15:04:05", time.DateOnly}

// paramValue reads a text as a value of a parameter's type, in the form
// it is bound: int64, float64, bool, or a string (dates as YYYY-MM-DD,
// timestamps as YYYY-MM-DD HH:MM:SS in UTC when a zone is given).
func paramValue(p readmodel.Param, s string) (any, error) {
	shown := strconv.Quote(describeJSON([]byte(s)))
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer", shown)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s is not a finite number", shown)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s is not true or false", shown)
		}
		return b, nil
	case "date":
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s is not a date (YYYY-MM-DD)", shown)
		}
		return d.Format(time.DateOnly), nil
	case "timestamp":
		for _, layout := range timestampLayouts {
			if ts, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
				return ts.UTC().Format(time.DateTime), nil
			}
		}
		return nil, fmt.Errorf("%s is not a timestamp (YYYY-MM-DD HH:MM:SS or RFC 3339)", shown)
	}
	switch {
	case len(s) > MaxParamText:
		return nil, fmt.Errorf("the text is %d bytes long; at most %d are accepted", len(s), MaxParamText)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return nil, fmt.Errorf("the text is not valid UTF-8 or holds a NUL character")
	}
	return s, nil
}

// checkBounds checks a value against a parameter's enum, min and max.
func checkBounds(p readmodel.Param, v any) error {
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if ev, err := paramValue(p, e); err == nil && ev == v {
				return nil
			}
		}
		return fmt.Errorf("%s is not one of %s", strconv.Quote(fmt.Sprint(v)), strings.Join(p.Enum, ", "))
	}
	for _, bound := range []struct {
		text  string
		below bool
	}{{p.Min, true}, {p.Max, false}} {
		if bound.text == "" {
			continue
		}
		b, err := paramValue(p, bound.text)
		if err != nil {
			continue
		}
		c := compareValues(v, b)
		if bound.below && c < 0 {
			return fmt.Errorf("%v is below the minimum %s", v, bound.text)
		}
		if !bound.below && c > 0 {
			return fmt.Errorf("%v is above the maximum %s", v, bound.text)
		}
	}
	return nil
}

// compareValues orders two values of one parameter type; dates and
// timestamps compare as their bound text does.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}
