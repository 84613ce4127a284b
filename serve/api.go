package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
)

// httpError is a failure with its status code.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// api wraps a handler of /v1/{tenant}/…: the token must grant that tenant,
// and write access for a write.
func (s *Server) api(write bool, h func(w http.ResponseWriter, r *http.Request, tenant string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := grantFrom(r.Context())
		tenant := r.PathValue("tenant")
		switch {
		case tenant != g.Tenant:
			writeJSONError(w, http.StatusForbidden, fmt.Sprintf("token %s grants tenant %s only", g.Name, g.Tenant))
			return
		case write && !g.Write:
			writeJSONError(w, http.StatusForbidden, fmt.Sprintf("token %s may read tenant %s, not write it", g.Name, g.Tenant))
			return
		}
		r = r.WithContext(engine.WithCaller(r.Context(), s.callerOf(g)))
		if err := h(w, r, tenant); err != nil {
			s.writeError(w, err)
		}
	}
}

// writeError answers a failed request with the status its error calls for.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	w.Header().Del("ETag")
	var (
		he *httpError
		pe *store.PreconditionError
		me *http.MaxBytesError
	)
	switch {
	case errors.As(err, &he):
		writeJSONError(w, he.status, he.msg)
	case errors.As(err, &pe):
		var current any
		if pe.Current != "" {
			current = pe.Current
			w.Header().Set("ETag", `"`+pe.Current+`"`)
		}
		writeJSON(w, http.StatusPreconditionFailed, map[string]any{"error": pe.Error(), "current": current})
	case errors.As(err, &me), isTimeout(err):
		status, msg := s.bodyError(err)
		writeJSONError(w, status, msg)
	case engine.IsBadRequest(err), errors.Is(err, store.ErrInvalid):
		writeJSONError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, store.ErrNotFound), errors.Is(err, engine.ErrNoTenant):
		writeJSONError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, engine.ErrReadOnly):
		writeJSONError(w, http.StatusConflict, err.Error())
	default:
		fmt.Fprintf(s.opts.Log, "okf serve: %v\n", err)
		writeJSONError(w, http.StatusInternalServerError, "internal error (the server's log says more)")
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// notModified sets the ETag and reports whether the request's
// If-None-Match already names it, in which case it has answered 304.
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	w.Header().Set("ETag", etag)
	for _, tag := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

func intParam(q url.Values, name string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, engine.BadRequest("%s=%q is not a whole number", name, v)
	}
	return n, nil
}

func (s *Server) apiManifest(w http.ResponseWriter, r *http.Request, tenant string) error {
	v, err := s.lib.View(r.Context(), tenant)
	if err != nil {
		return err
	}
	now := s.now()
	m, err := engine.Manifest(v, r.URL.Query().Get("bundle"), now)
	if err != nil {
		return err
	}
	if notModified(w, r, v.ETag(now)) {
		return nil
	}
	w.Header().Set("Content-Type", "text/tab-separated-values; charset=utf-8")
	_, err = io.WriteString(w, m)
	return err
}

func (s *Server) apiSnapshot(w http.ResponseWriter, r *http.Request, tenant string) error {
	v, err := s.lib.View(r.Context(), tenant)
	if err != nil {
		return err
	}
	if notModified(w, r, v.ETag(s.now())) {
		return nil
	}
	bundles := make([]string, len(v.Snap.Bundles))
	for i, b := range v.Snap.Bundles {
		bundles[i] = b.Name
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"tenant": tenant, "digest": v.Snap.Digest, "commit": v.Commit,
		"bundles": bundles, "concepts": len(v.Snap.Concepts),
	})
	return nil
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request, tenant string) error {
	q := r.URL.Query()
	k, err := intParam(q, "k")
	if err != nil {
		return err
	}
	req := engine.SearchRequest{Query: q.Get("q"), K: k, Bundle: q.Get("bundle"), NoExpand: q.Get("expand") == "false"}
	v, err := s.lib.View(r.Context(), tenant)
	if err != nil {
		return err
	}
	hits, err := engine.Search(r.Context(), v, req)
	if err != nil {
		return err
	}
	now := s.now()
	if notModified(w, r, v.ETag(now)) {
		return nil
	}
	writeJSON(w, http.StatusOK, engine.NewSearchAnswer(v, hits, now))
	return nil
}

func (s *Server) apiGet(w http.ResponseWriter, r *http.Request, tenant string) error {
	q := r.URL.Query()
	req := engine.GetRequest{IDs: q["id"], Section: q.Get("section"), Find: q.Get("find")}
	var err error
	if req.Offset, err = intParam(q, "offset"); err != nil {
		return err
	}
	if req.Limit, err = intParam(q, "limit"); err != nil {
		return err
	}
	v, err := s.lib.View(r.Context(), tenant)
	if err != nil {
		return err
	}
	g, err := engine.Get(v, req)
	if err != nil {
		return err
	}
	if notModified(w, r, v.ETag(s.now())) {
		return nil
	}
	writeJSON(w, http.StatusOK, engine.NewGetAnswer(v, g))
	return nil
}

func (s *Server) apiContext(w http.ResponseWriter, r *http.Request, tenant string) error {
	q := r.URL.Query()
	budget, err := intParam(q, "budget")
	if err != nil {
		return err
	}
	v, err := s.lib.View(r.Context(), tenant)
	if err != nil {
		return err
	}
	p, err := engine.Context(r.Context(), v, engine.ContextRequest{Question: q.Get("q"), Budget: budget})
	if err != nil {
		return err
	}
	if notModified(w, r, v.ETag(s.now())) {
		return nil
	}
	writeJSON(w, http.StatusOK, engine.NewContextAnswer(v, p))
	return nil
}

type databaseJSON struct {
	Name   string   `json:"name"`
	Engine string   `json:"engine"`
	Bundle string   `json:"bundle,omitempty"`
	Tables []string `json:"tables,omitempty"`
}

func (s *Server) apiDatabases(w http.ResponseWriter, r *http.Request, tenant string) error {
	dbs := s.dbs.Visible(r.Context(), tenant)
	out := make([]databaseJSON, len(dbs))
	for i, d := range dbs {
		out[i] = databaseJSON{d.Name, d.Engine(), d.Bundle, d.Guard.Tables}
	}
	writeJSON(w, http.StatusOK, map[string]any{"databases": out})
	return nil
}

func (s *Server) apiSQL(w http.ResponseWriter, r *http.Request, tenant string) error {
	var in struct {
		Database string `json:"database"`
		SQL      string `json:"sql"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var me *http.MaxBytesError
		if errors.As(err, &me) || isTimeout(err) {
			return err
		}
		return engine.BadRequest("the body must be JSON {\"database\": …, \"sql\": …}: %v", err)
	}
	g := grantFrom(r.Context())
	res, shown, err := s.dbs.Query(r.Context(), tenant, "okf serve "+tenant+"/"+g.Name, in.Database, in.SQL)
	if ge, ok := sqlguard.AsError(err); ok {
		writeGuardError(w, ge, in.SQL)
		return nil
	}
	if err != nil {
		return err
	}
	out := map[string]any{"columns": res.Columns, "rows": res.Rows, "total": res.Total,
		"total_known": res.TotalKnown, "text": res.Text(shown)}
	if len(res.MaskedColumns) > 0 {
		out["masked_columns"], out["masked_cells"] = res.MaskedColumns, res.MaskedCells
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apiValues answers the values tool: GET ?database=&column=&text=.
func (s *Server) apiValues(w http.ResponseWriter, r *http.Request, tenant string) error {
	q := r.URL.Query()
	g := grantFrom(r.Context())
	column, text := q.Get("column"), q.Get("text")
	values, err := s.dbs.Values(r.Context(), tenant, "okf serve "+tenant+"/"+g.Name, q.Get("database"), column, text)
	if ge, ok := sqlguard.AsError(err); ok {
		writeGuardError(w, ge, "")
		return nil
	}
	if err != nil {
		return err
	}
	if values == nil {
		values = []engine.StoredValue{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"column": column, "text": text, "values": values,
		"answer": engine.ValuesText(column, text, values)})
	return nil
}

// writeGuardError answers a query the guard refused or the database
// failed: 422 with the error as a model reads it, without the "Error: "
// that begins it there (the field says so: a client that prints
// "Error: " + error would say it twice), its layer and its code.
func writeGuardError(w http.ResponseWriter, ge *sqlguard.Error, sql string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": strings.TrimPrefix(ge.Text(sql), "Error: "),
		"layer": ge.Layer, "refused": ge.Refused, "code": ge.Code})
}

func (s *Server) apiQueries(w http.ResponseWriter, r *http.Request, tenant string) error {
	qs, err := s.toolbox(tenant).Queries(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"queries": qs})
	return nil
}

// apiRunQuery runs a verified query with the values of the JSON object in
// the body, by parameter name.
func (s *Server) apiRunQuery(w http.ResponseWriter, r *http.Request, tenant string) error {
	var values map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&values); err != nil {
		var me *http.MaxBytesError
		if errors.As(err, &me) || isTimeout(err) {
			return err
		}
		return engine.BadRequest("the body must be a JSON object of parameter values by name: %v", err)
	}
	g := grantFrom(r.Context())
	run, err := s.toolbox(tenant).RunQuery(r.Context(), "okf serve "+tenant+"/"+g.Name, r.PathValue("id"), values)
	if ge, ok := sqlguard.AsError(err); ok {
		writeGuardError(w, ge, run.SQL)
		return nil
	}
	if err != nil {
		return err
	}
	res := run.Result
	writeJSON(w, http.StatusOK, map[string]any{"query": run.Ref, "database": run.Database, "values": run.Values,
		"columns": res.Columns, "rows": res.Rows, "total": res.Total, "total_known": res.TotalKnown, "text": res.Text(run.Shown)})
	return nil
}

type documentJSON struct {
	Bundle string `json:"bundle"`
	Path   string `json:"path"`
	Hash   string `json:"hash"`
	Bytes  int    `json:"bytes"`
}

func (s *Server) apiSources(w http.ResponseWriter, r *http.Request, tenant string) error {
	head, docs, err := s.lib.Documents(r.Context(), tenant)
	if err != nil {
		return err
	}
	out := make([]documentJSON, len(docs))
	for i, d := range docs {
		out[i] = documentJSON{d.Bundle, d.Path, d.Hash, len(d.Content)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"commit": head, "documents": out})
	return nil
}

// docAddress reads and checks the bundle and path of a source route.
func docAddress(r *http.Request) (bundle, path string, err error) {
	bundle, path = r.PathValue("bundle"), r.PathValue("path")
	if err := store.ValidateBundle(bundle); err != nil {
		return "", "", err
	}
	if err := store.ValidatePath(path); err != nil {
		return "", "", err
	}
	return bundle, path, nil
}

func (s *Server) apiSource(w http.ResponseWriter, r *http.Request, tenant string) error {
	bundle, path, err := docAddress(r)
	if err != nil {
		return err
	}
	d, err := s.lib.Document(r.Context(), tenant, bundle, path)
	if err != nil {
		return err
	}
	if notModified(w, r, `"`+d.Hash+`"`) {
		return nil
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	_, err = w.Write(d.Content)
	return err
}

// precondition reads the condition a write must meet: If-Match with the
// document's current hash (its ETag), If-Match: * for any existing
// document (store.Unconditional, which write and apiDelete hold to
// "exists"), or If-None-Match: * for one that must not exist yet. A write
// without one is refused with 428, so no editor overwrites a change it has
// not seen.
func (s *Server) precondition(r *http.Request, tenant, bundle, path string) (ifMatch string, err error) {
	im, inm := strings.TrimSpace(r.Header.Get("If-Match")), strings.TrimSpace(r.Header.Get("If-None-Match"))
	switch {
	case im != "" && inm != "":
		return "", engine.BadRequest("give If-Match or If-None-Match, not both")
	case inm == "*" && r.Method == http.MethodPut:
		return "", nil
	case inm != "":
		return "", engine.BadRequest("a write takes If-None-Match: * only (to create a document)")
	case im == "":
		return "", &httpError{http.StatusPreconditionRequired, "send If-Match with the document's hash (its ETag from GET), If-Match: * to replace whatever is there, or If-None-Match: * to create it"}
	case im == "*":
		return store.Unconditional, nil
	}
	hash := strings.Trim(im, `"`)
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 || strings.HasPrefix(im, "W/") {
		return "", engine.BadRequest("If-Match %s is not a document hash: want the quoted 64 hex digits of its ETag", im)
	}
	return hash, nil
}

// writeTarget checks that a write may happen at all and returns the
// document it addresses and the hash it must replace.
func (s *Server) writeTarget(r *http.Request, tenant string) (bundle, path, ifMatch string, err error) {
	if !s.lib.Writable() {
		return "", "", "", engine.ErrReadOnly
	}
	if bundle, path, err = docAddress(r); err != nil {
		return "", "", "", err
	}
	ifMatch, err = s.precondition(r, tenant, bundle, path)
	return bundle, path, ifMatch, err
}

func (s *Server) apiPut(w http.ResponseWriter, r *http.Request, tenant string) error {
	bundle, path, ifMatch, err := s.writeTarget(r, tenant)
	if err != nil {
		return err
	}
	content, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	c, v, err := s.write(r.Context(), tenant, bundle, path, content, ifMatch)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if ifMatch == "" {
		status = http.StatusCreated
	}
	hash := store.Hash(content)
	w.Header().Set("ETag", `"`+hash+`"`)
	writeJSON(w, status, map[string]any{"bundle": bundle, "path": path, "hash": hash, "commit": c.ID, "changed": c.Changed,
		"digest": v.Snap.Digest, "diagnostics": diagnostics(v, bundle, path)})
	return nil
}

// starAttempts bounds the tries of a write with If-Match: * while other
// writers keep changing the document.
const starAttempts = 64

// write writes a document under its precondition. If-Match: * asks only
// that the document exist, whatever its hash; the store checks a hash, so
// the write is tried again against the current one while concurrent
// writers change it, and fails only once the document is gone.
func (s *Server) write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (store.Commit, *engine.View, error) {
	if ifMatch != store.Unconditional {
		return s.lib.Write(ctx, tenant, bundle, path, content, ifMatch)
	}
	var last error
	for range starAttempts {
		d, err := s.lib.Document(ctx, tenant, bundle, path)
		if errors.Is(err, store.ErrNotFound) {
			return store.Commit{}, nil, &store.PreconditionError{Tenant: tenant, Bundle: bundle, Path: path, Expected: "*"}
		}
		if err != nil {
			return store.Commit{}, nil, err
		}
		c, v, err := s.lib.Write(ctx, tenant, bundle, path, content, d.Hash)
		var pe *store.PreconditionError
		if !errors.As(err, &pe) || ctx.Err() != nil {
			return c, v, err
		}
		last = err
	}
	return store.Commit{}, nil, last
}

// diagnostics are the compiler's notes on one document, when this process
// compiled the view.
func diagnostics(v *engine.View, bundle, path string) []string {
	out := []string{}
	for _, d := range v.Diagnostics {
		if d.Bundle == bundle && d.Path == path {
			out = append(out, d.Message)
		}
	}
	return out
}

func (s *Server) apiDelete(w http.ResponseWriter, r *http.Request, tenant string) error {
	bundle, path, ifMatch, err := s.writeTarget(r, tenant)
	if err != nil {
		return err
	}
	c, v, err := s.lib.Delete(r.Context(), tenant, bundle, path, ifMatch)
	if ifMatch == store.Unconditional && errors.Is(err, store.ErrNotFound) {
		err = &store.PreconditionError{Tenant: tenant, Bundle: bundle, Path: path, Expected: "*"}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"bundle": bundle, "path": path, "commit": c.ID, "digest": v.Snap.Digest})
	return nil
}
