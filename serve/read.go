package serve

import (
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
// failure of the server; its text is written for the caller to fix them.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{fmt.Sprintf(format, args...)}
}

func isBadRequest(err error) bool {
	var re *requestError
	return errors.As(err, &re)
}

// manifest returns the manifest at now, whole or for one bundle.
func manifest(v *View, bundle string, now time.Time) (string, error) {
	m, err := v.Snap.ManifestAt(bundle, now)
	if err != nil {
		return "", badRequest("%v", err)
	}
	return string(m), nil
}

// searchRequest is a search as both the tool and the HTTP API take it.
type searchRequest struct {
	Query    string
	K        int
	Bundle   string
	NoExpand bool
}

func runSearch(v *View, r searchRequest) ([]search.Hit, error) {
	switch {
	case strings.TrimSpace(r.Query) == "":
		return nil, badRequest("the query is empty")
	case len(r.Query) > MaxQueryBytes:
		return nil, badRequest("the query is %d bytes, at most %d", len(r.Query), MaxQueryBytes)
	case r.K < 0 || r.K > MaxK:
		return nil, badRequest("k is %d: give 1 to %d", r.K, MaxK)
	}
	if r.Bundle != "" {
		if _, ok := v.Snap.Bundle(r.Bundle); !ok {
			return nil, badRequest("no bundle %q (bundles: %s)", r.Bundle, bundleNames(v.Snap))
		}
	}
	return v.Index.Search(r.Query, search.Options{K: r.K, Bundle: r.Bundle, NoExpand: r.NoExpand}), nil
}

// searchHeader heads the rows a search returns: the manifest columns and
// pos, the body offset where the query's words cluster.
const searchHeader = "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"

func searchText(v *View, hits []search.Hit, now time.Time) string {
	if len(hits) == 0 {
		return "No concept matches. Try other words, or read the manifest."
	}
	var b strings.Builder
	b.WriteString(searchHeader)
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

// getRequest is a batched read.
type getRequest struct {
	IDs     []string
	Section string
	Offset  int
	Limit   int
	Find    string
}

// problem is one id a get could not read for a reason other than not
// knowing it: an ambiguous id, or a section it does not have.
type problem struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// getResult is what a batched read found.
type getResult struct {
	Slices   []readmodel.Slice
	Missing  []string
	Problems []problem
}

// runGet reads each id ("id", "bundle/id", either with "#section"), at
// most MaxReadBytes each. Unknown ids are listed as missing rather than
// failing the read; ids are only ever looked up in the snapshot, so no id,
// however written, reaches a file or another tenant.
func runGet(v *View, r getRequest) (getResult, error) {
	switch {
	case len(r.IDs) == 0:
		return getResult{}, badRequest("give at least one id")
	case len(r.IDs) > MaxIDs:
		return getResult{}, badRequest("%d ids: read at most %d at once", len(r.IDs), MaxIDs)
	case r.Offset < 0 || r.Limit < 0:
		return getResult{}, badRequest("offset and limit must not be negative")
	case len(r.Find) > MaxQueryBytes:
		return getResult{}, badRequest("find is %d bytes, at most %d", len(r.Find), MaxQueryBytes)
	}
	limit := r.Limit
	if limit > MaxReadBytes || limit == 0 && r.Find == "" {
		limit = MaxReadBytes // with find and no limit, the read takes its window
	}
	var out getResult
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
			out.Problems = append(out.Problems, problem{ID: id, Error: err.Error()})
		default:
			out.Slices = append(out.Slices, sl)
		}
	}
	return out, nil
}

// getText frames each slice as "@@ bundle/id#section [start..end of
// total]" followed by its text, then the problems, then "@@ missing".
func getText(g getResult) string {
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

// runContext builds a context pack within budget tokens (0: the default).
func runContext(v *View, question string, budget int) (search.Pack, error) {
	switch {
	case strings.TrimSpace(question) == "":
		return search.Pack{}, badRequest("the question is empty")
	case len(question) > MaxQueryBytes:
		return search.Pack{}, badRequest("the question is %d bytes, at most %d", len(question), MaxQueryBytes)
	case budget < 0 || budget > MaxBudget:
		return search.Pack{}, badRequest("budget is %d tokens: give 1 to %d", budget, MaxBudget)
	}
	return v.Index.Context(question, search.PackOptions{Budget: budget, Count: tokens.Count}), nil
}

func bundleNames(s *readmodel.Snapshot) string {
	names := make([]string, len(s.Bundles))
	for i, b := range s.Bundles {
		names[i] = b.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " ")
}
