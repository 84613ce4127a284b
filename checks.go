package okf

import (
	"fmt"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// Severity ranks a finding. Only errors make a bundle non-conformant (§11).
type Severity int

// The severities, most serious first.
const (
	Error Severity = iota
	Warning
	Info
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "info"
}

// MarshalText writes the severity as its name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	case "info":
		*s = Info
	default:
		return fmt.Errorf("unknown severity %q", b)
	}
	return nil
}

// Check describes one check okf validate makes. Codes are stable: tools
// and configuration may rely on them.
type Check struct {
	Code     string
	Severity Severity
	// Section is the OKF v0.2 section the check comes from, e.g. "§11.1",
	// or "okf" for one of okf's own.
	Section string
	// Summary says in a few words what the check finds.
	Summary string
}

// Checks lists every check okf validate makes, errors first: Validate's
// own, and the "okf" ones of the checks okf validate adds through
// Options.Checks (query concepts' SQL, rules' columns), which Validate
// alone does not run.
var Checks = []Check{
	{"file-unreadable", Error, "§4", "the file cannot be read"},
	{"utf8-invalid", Error, "§4", "the file is not valid UTF-8"},
	{"frontmatter-missing", Error, "§11.1", "a concept has no frontmatter block"},
	{"frontmatter-unclosed", Error, "§11.1", "a frontmatter block is opened but never closed"},
	{"frontmatter-yaml", Error, "§11.1", "the frontmatter is not valid YAML"},
	{"frontmatter-not-mapping", Error, "§11.1", "the frontmatter is not a YAML mapping"},
	{"type-missing", Error, "§11.2", "the required `type` key is absent"},
	{"type-blank", Error, "§11.2", "`type` is empty, blank or null"},
	{"type-not-string", Error, "§11.2", "`type` is a list or mapping, not a string"},
	{"index-frontmatter", Error, "§11.3", "an index.md below the root has frontmatter (§8)"},
	{"index-root-yaml", Error, "§11.3", "the root index.md frontmatter is not valid YAML or not a mapping (§12)"},
	{"index-root-keys", Error, "§11.3", "the root index.md frontmatter holds keys other than `okf_version` (§12)"},
	{"log-heading-invalid", Error, "§11.3", "a log.md `##` heading is not a YYYY-MM-DD date (§9)"},
	{"log-entry-undated", Error, "§11.3", "a log.md entry comes before any `## YYYY-MM-DD` date heading (§9)"},
	{"log-order", Error, "§11.3", "log.md dates are not newest first (§9)"},

	{"key-duplicate", Warning, "§4.1", "a frontmatter key appears more than once"},
	{"title-missing", Warning, "§4.1", "the recommended `title` is absent"},
	{"description-missing", Warning, "§4.1", "the recommended `description` is absent"},
	{"tags-missing", Warning, "§4.1", "the recommended `tags` list is absent"},
	{"tags-invalid", Warning, "§4.1", "`tags` is not a list of non-empty strings"},
	{"field-invalid", Warning, "§4.1", "`title`, `description` or `resource` is not a string"},
	{"generated-missing", Warning, "§5.2", "the recommended `generated` is absent"},
	{"timestamp-legacy", Warning, "§13.1", "a v0.1 `timestamp` stands in for `generated`"},
	{"generated-invalid", Warning, "§5.2", "`generated` is not a mapping"},
	{"generated-by-missing", Warning, "§5.2", "`generated` has no `by` actor"},
	{"actor-invalid", Warning, "§7", "an actor is not `<producer>/<version>` or `<prefix>:<id>`"},
	{"actor-near-miss", Warning, "§7", "an actor almost spells `human:` or `process:` and would read as an agent"},
	{"timestamp-invalid", Warning, "§5", "a timestamp is not an ISO 8601 date or datetime"},
	{"timestamp-no-offset", Warning, "§5", "a datetime has no UTC offset, so consumers ignore it"},
	{"verified-invalid", Warning, "§5.2", "`verified` or one of its entries is malformed"},
	{"status-invalid", Warning, "§5.4", "`status` is not draft, stable or deprecated"},
	{"sources-invalid", Warning, "§5.1", "`sources` is not a list of mappings"},
	{"source-resource-missing", Warning, "§5.1", "a `sources` entry has no `resource`"},
	{"source-id-duplicate", Warning, "§5.1", "two `sources` entries share an `id`"},
	{"usage-count-invalid", Warning, "§5.1", "`usage_count` is not a whole number"},
	{"usage-count-no-window", Warning, "§5.1", "a `usage_count` has no `usage_window` to frame it"},
	{"usage-window-invalid", Warning, "§5.1", "`usage_window` is not a mapping with `from` and `to`"},
	{"footnote-unknown-source", Warning, "§5.1", "a footnote label matches no `sources[].id`"},
	{"citations-legacy", Warning, "§13.1", "a v0.1 `# Citations` section stands in for `sources`"},
	{"computation-runtime-missing", Warning, "§10.2", "an Attested Computation has no `runtime`"},
	{"computation-parameters-invalid", Warning, "§10.2", "`parameters` is not a list of mappings with a `name`"},
	{"computation-path-missing", Warning, "§6.2", "a computation, executor or attester path points at nothing"},
	{"okf-version", Warning, "§12", "the declared `okf_version` is not \"0.2\""},
	{"index-out-of-sync", Warning, "§8", "an index.md does not list a concept or folder beside it"},
	{"log-frontmatter", Warning, "§9", "a log.md has frontmatter"},
	{"link-broken", Warning, "§6.1", "a link points at a file that does not exist (tolerated)"},
	{"link-outside-bundle", Warning, "§6.1", "a link climbs above the bundle root"},
	{"orphan", Warning, "§8", "no document links to a concept, not even an index"},
	{"query-sql-missing", Warning, "okf", "a query concept has no `# SQL` section with one fenced `sql` block"},
	{"query-parameters-invalid", Warning, "okf", "a query concept's `parameters` entry is malformed, or declared twice"},
	{"query-placeholder-undeclared", Warning, "okf", "a query's SQL uses a `:name` no parameter declares"},
	{"query-parameter-unused", Warning, "okf", "a query declares a parameter its SQL never uses"},
	{"query-sql-invalid", Warning, "okf", "a query's SQL does not parse, or the SQL guard refuses it"},
	{"rule-column-unknown", Warning, "okf", "a rule's `# Columns used` names a column its table's `# Schema` lacks"},

	{"stale", Info, "§5.5", "a concept is past its `stale_after`"},
	{"link-self", Info, "§6.1", "a document links to itself"},
	{"link-deprecated", Info, "§5.4", "a concept links to a deprecated concept"},
}

var checksByCode = lazy.Value[map[string]Check]{New: func() map[string]Check {
	m := make(map[string]Check, len(Checks))
	for _, r := range Checks {
		m[r.Code] = r
	}
	return m
}}

// CheckFor returns the check of a code.
func CheckFor(code string) (Check, bool) {
	r, ok := checksByCode.Get()[code]
	return r, ok
}

// Finding is one result of Validate.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Section  string   `json:"section"`
	// Path is the bundle path of the file concerned.
	Path string `json:"path"`
	// Line is the 1-based file line, or 0 when the finding concerns the
	// whole file; JSON always has it, as docs/validate.md promises.
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Location returns "path" or "path:line".
func (f Finding) Location() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	return f.Path
}

// String renders a finding on one line: location, section, message, code.
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s %s [%s]", f.Location(), f.Section, f.Message, f.Code)
}

// NewFinding makes a finding of a rule's code, for checks that run beside
// Validate's (see Options.Checks). It panics on an unknown code.
func NewFinding(code, p string, line int, format string, args ...any) Finding {
	return newFinding(code, p, line, format, args...)
}

func newFinding(code, p string, line int, format string, args ...any) Finding {
	r, ok := checksByCode.Get()[code]
	if !ok {
		panic("okf: unknown rule code " + code)
	}
	msg := fmt.Sprintf(format, args...)
	return Finding{Code: code, Severity: r.Severity, Section: r.Section, Path: p, Line: line, Message: strings.TrimSpace(msg)}
}
