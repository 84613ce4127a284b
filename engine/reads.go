package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
)

// Bounds on what one read may ask for, so no request costs the server (or
// the agent's context) without limit.
const (
	// MaxK is the most direct hits a search returns.
	MaxK = 50
	// MaxIDs is the most concepts one get reads.
	MaxIDs = 32
	// MaxReadBytes caps the text one get returns per concept; a longer
	// text is cut there, and its frame says where to continue.
	MaxReadBytes = 15000
	// MaxQueryBytes bounds a search query, a find phrase and a question.
	MaxQueryBytes = 4096
	// MaxBudget is the largest context budget, in tokens.
	MaxBudget = 32000
)

// requestError is a request whose arguments are wrong, as opposed to a
// failure of the engine; its text is written for the caller to fix them.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

// BadRequest is a request error with a message for the caller.
func BadRequest(format string, args ...any) error {
	return &requestError{fmt.Sprintf(format, args...)}
}

// IsBadRequest reports whether err is a request the caller must fix (a
// bad argument, an unknown bundle or database), not a failure.
func IsBadRequest(err error) bool {
	var re *requestError
	return errors.As(err, &re)
}

// Manifest returns the manifest at now, whole or for one bundle.
func Manifest(v *View, bundle string, now time.Time) (string, error) {
	m, err := v.Snap.ManifestAt(bundle, now)
	if err != nil {
		return "", BadRequest("%v", err)
	}
	return string(m), nil
}

// SearchRequest is a search as the tool, the HTTP API and okf search take
// it.
type SearchRequest struct {
	Query    string
	K        int
	Bundle   string
	NoExpand bool
}

// Search ranks the view's concepts for a query; with embeddings, it
// embeds the query (or finds it among the recent ones) first.
func Search(ctx context.Context, v *View, r SearchRequest) ([]search.Hit, error) {
	switch {
	case strings.TrimSpace(r.Query) == "":
		return nil, BadRequest("the query is empty")
	case len(r.Query) > MaxQueryBytes:
		return nil, BadRequest("the query is %d bytes, at most %d", len(r.Query), MaxQueryBytes)
	case r.K < 0 || r.K > MaxK:
		return nil, BadRequest("k is %d: give 1 to %d", r.K, MaxK)
	}
	if err := CheckBundle(v, r.Bundle); err != nil {
		return nil, err
	}
	return v.Index().Search(r.Query, search.Options{K: r.K, Bundle: r.Bundle, NoExpand: r.NoExpand, QueryVector: v.queryVector(ctx, r.Query)}), nil
}

// SearchHeader heads the rows a search returns: the manifest columns and
// pos, the body offset where the query's words cluster.
const SearchHeader = "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"

// SearchText renders hits the way every caller reads them: manifest rows
// with pos.
func SearchText(v *View, hits []search.Hit, now time.Time) string {
	if len(hits) == 0 {
		return "No concept matches. Try other words, or read the manifest."
	}
	var b strings.Builder
	b.WriteString(SearchHeader)
	for _, h := range hits {
		b.WriteString(v.Snap.Row(h.Concept, now))
		b.WriteByte('\t')
		b.WriteString(pos(h.Pos))
		b.WriteByte('\n')
	}
	return b.String()
}

func pos(p int) string {
	if p < 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

// GetRequest is a batched read.
type GetRequest struct {
	IDs     []string
	Section string
	Offset  int
	Limit   int
	Find    string
}

// Problem is one id a get could not read for a reason other than not
// knowing it: an ambiguous id, or a section it does not have.
type Problem struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// GetResult is what a batched read found.
type GetResult struct {
	Slices   []readmodel.Slice
	Missing  []string
	Problems []Problem
}

// Get reads each id ("id", "bundle/id", either with "#section"), at
// most MaxReadBytes each. Unknown ids are listed as missing rather than
// failing the read; ids are only ever looked up in the snapshot, so no id,
// however written, reaches a file or another tenant.
func Get(v *View, r GetRequest) (GetResult, error) {
	switch {
	case len(r.IDs) == 0:
		return GetResult{}, BadRequest("give at least one id")
	case len(r.IDs) > MaxIDs:
		return GetResult{}, BadRequest("%d ids: read at most %d at once", len(r.IDs), MaxIDs)
	case r.Offset < 0 || r.Limit < 0:
		return GetResult{}, BadRequest("offset and limit must not be negative")
	case len(r.Find) > MaxQueryBytes:
		return GetResult{}, BadRequest("find is %d bytes, at most %d", len(r.Find), MaxQueryBytes)
	}
	limit := r.Limit
	if limit > MaxReadBytes || limit == 0 && r.Find == "" {
		limit = MaxReadBytes // with find and no limit, the read takes its window
	}
	var out GetResult
	for _, id := range r.IDs {
		ref, section, _ := strings.Cut(id, "#")
		o := readmodel.GetOptions{Section: r.Section, Offset: r.Offset, Limit: limit, Find: r.Find}
		if section != "" {
			o.Section = section
		}
		sl, err := v.Snap.Get(ref, o)
		switch {
		case errors.Is(err, readmodel.ErrUnknown):
			out.Missing = append(out.Missing, ref)
		case err != nil:
			out.Problems = append(out.Problems, Problem{ID: id, Error: err.Error()})
		default:
			out.Slices = append(out.Slices, sl)
		}
	}
	return out, nil
}

// GetText frames each slice as "@@ bundle/id#section [start..end of
// total]" followed by its text, then the problems, then "@@ missing".
func GetText(g GetResult) string {
	var b strings.Builder
	for _, sl := range g.Slices {
		b.WriteString("@@ " + sl.Ref)
		if sl.Section != "" {
			b.WriteString("#" + sl.Section)
		}
		fmt.Fprintf(&b, " [%d..%d of %d]", sl.Start, sl.End, sl.Total)
		if len(sl.Matches) > 0 {
			parts := make([]string, len(sl.Matches))
			for i, m := range sl.Matches {
				parts[i] = strconv.Itoa(m)
			}
			b.WriteString(" matches at " + strings.Join(parts, ","))
		}
		b.WriteByte('\n')
		b.WriteString(sl.Text)
		if !strings.HasSuffix(sl.Text, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, p := range g.Problems {
		b.WriteString("@@ error " + p.ID + ": " + p.Error + "\n")
	}
	if len(g.Missing) > 0 {
		b.WriteString("@@ missing " + strings.Join(g.Missing, " ") + "\n")
	}
	return b.String()
}

// The tools' defaults: search's depth and a context pack's budget.
const (
	DefaultK      = search.DefaultK
	DefaultBudget = search.DefaultBudget
)

// Pack is what the context tool answers: the pack's text and what it holds.
type Pack = search.Pack

// ContextRequest asks for a context pack.
type ContextRequest struct {
	Question string
	Budget   int    // tokens; 0 is search.DefaultBudget
	Bundle   string // only this bundle; "" for all
}

// Context builds a context pack within the budget; with embeddings, it
// embeds the question first, as Search does.
func Context(ctx context.Context, v *View, r ContextRequest) (search.Pack, error) {
	switch {
	case strings.TrimSpace(r.Question) == "":
		return search.Pack{}, BadRequest("the question is empty")
	case len(r.Question) > MaxQueryBytes:
		return search.Pack{}, BadRequest("the question is %d bytes, at most %d", len(r.Question), MaxQueryBytes)
	case r.Budget < 0 || r.Budget > MaxBudget:
		return search.Pack{}, BadRequest("budget is %d tokens: give 1 to %d", r.Budget, MaxBudget)
	}
	if err := CheckBundle(v, r.Bundle); err != nil {
		return search.Pack{}, err
	}
	return v.Index().Context(r.Question, search.PackOptions{Budget: r.Budget, Bundle: r.Bundle, Count: tokens.Count,
		QueryVector: v.queryVector(ctx, r.Question)}), nil
}

// CheckBundle refuses a bundle filter that names no bundle of the view.
func CheckBundle(v *View, bundle string) error {
	if bundle == "" {
		return nil
	}
	if _, ok := v.Snap.Bundle(bundle); !ok {
		return BadRequest("no bundle %q (bundles: %s)", bundle, bundleNames(v.Snap))
	}
	return nil
}

func bundleNames(s *readmodel.Snapshot) string {
	names := snapshotBundles(s)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " ")
}

// The JSON of each read, as the HTTP API answers it and the reading
// commands print it with --json. Every field is snake_case.
type (
	// SearchAnswer is a search: the snapshot read and the hits.
	SearchAnswer struct {
		Digest string          `json:"digest"`
		Hits   []search.Result `json:"hits"`
	}
	// GetAnswer is a batched read.
	GetAnswer struct {
		Digest  string            `json:"digest"`
		Slices  []readmodel.Slice `json:"slices"`
		Missing []string          `json:"missing"`
		Errors  []Problem         `json:"errors"`
	}
	// ContextAnswer is a context pack.
	ContextAnswer struct {
		Digest   string   `json:"digest"`
		Text     string   `json:"text"`
		Tokens   int      `json:"tokens"`
		Rules    []string `json:"rules"`
		Tables   []string `json:"tables"`
		Columns  []string `json:"columns"`
		Examples []string `json:"examples"`
		// Values are the stored values the question names, each as its
		// column's ref, "=" and the value as stored.
		Values     []string `json:"values"`
		Candidates []string `json:"candidates"`
		// Routing is why a pack asked without a bundle came from the
		// bundle it did: each bundle's score, best first.
		Routing []search.BundleScore `json:"routing,omitempty"`
	}
)

// NewSearchAnswer is the JSON of hits read at now.
func NewSearchAnswer(v *View, hits []search.Hit, now time.Time) SearchAnswer {
	return SearchAnswer{Digest: v.Snap.Digest, Hits: nonNil(v.Index().Results(hits, now))}
}

// NewGetAnswer is the JSON of a batched read.
func NewGetAnswer(v *View, g GetResult) GetAnswer {
	return GetAnswer{Digest: v.Snap.Digest, Slices: nonNil(g.Slices), Missing: nonNil(g.Missing), Errors: nonNil(g.Problems)}
}

// NewContextAnswer is the JSON of a context pack.
func NewContextAnswer(v *View, p search.Pack) ContextAnswer {
	return ContextAnswer{Digest: v.Snap.Digest, Text: p.Text, Tokens: p.Tokens, Rules: nonNil(p.Rules),
		Tables: nonNil(p.Tables), Columns: nonNil(p.Columns), Examples: nonNil(p.Examples), Values: nonNil(p.Values), Candidates: nonNil(p.Candidates), Routing: p.Routing}
}

// nonNil makes an empty list encode as [], not null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// snapshotBundles names a snapshot's bundles, in its order.
func snapshotBundles(s *readmodel.Snapshot) []string {
	names := make([]string, len(s.Bundles))
	for i, b := range s.Bundles {
		names[i] = b.Name
	}
	return names
}
