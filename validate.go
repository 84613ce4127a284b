package okf

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"go.yaml.in/yaml/v3"
)

// Options tune Validate.
type Options struct {
	// Now is the instant staleness is decided against. The zero value means
	// the current time. A date-form stale_after is compared with Now's date
	// in Now's location.
	Now time.Time
	// Checks are further checks run after the format's own, for
	// conventions beyond the spec (okf validate adds the read model's
	// check of the columns rules use).
	Checks []func(*Bundle) []Finding
}

// Counts are the number of files of each kind in a bundle.
type Counts struct {
	Concepts int `json:"concepts"`
	Indexes  int `json:"indexes"`
	Logs     int `json:"logs"`
}

// Report is the result of validating a bundle.
type Report struct {
	Counts   Counts
	Findings []Finding // sorted: severity, path, line, code, message
}

// Count returns how many findings have the given severity.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Conformant reports whether the bundle has no errors (§11).
func (r *Report) Conformant() bool { return r.Count(Error) == 0 }

// Passed reports whether the bundle is conformant with at most maxWarnings
// warnings; a negative maxWarnings allows any number.
func (r *Report) Passed(maxWarnings int) bool {
	return r.Conformant() && (maxWarnings < 0 || r.Count(Warning) <= maxWarnings)
}

// Validate checks a bundle against OKF v0.2.
func Validate(b *Bundle, opt Options) *Report {
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	v := &validator{b: b, now: now, today: now.Format("2006-01-02"), rep: &Report{}}
	for _, d := range b.Docs {
		v.document(d)
	}
	v.orphans()
	v.indexSync()
	for _, check := range opt.Checks {
		v.rep.Findings = append(v.rep.Findings, check(b)...)
	}
	sort.SliceStable(v.rep.Findings, func(i, j int) bool {
		a, c := v.rep.Findings[i], v.rep.Findings[j]
		if a.Severity != c.Severity {
			return a.Severity < c.Severity
		}
		if a.Path != c.Path {
			return a.Path < c.Path
		}
		if a.Line != c.Line {
			return a.Line < c.Line
		}
		if a.Code != c.Code {
			return a.Code < c.Code
		}
		return a.Message < c.Message
	})
	return v.rep
}

type validator struct {
	b     *Bundle
	now   time.Time
	today string
	rep   *Report
}

func (v *validator) add(code string, d *Document, line int, format string, args ...any) {
	v.rep.Findings = append(v.rep.Findings, newFinding(code, d.Path, line, format, args...))
}

// usable reports whether a document could be read as UTF-8 text.
func usable(d *Document) bool { return d.ReadErr == nil && d.ValidUTF8 }

func (v *validator) document(d *Document) {
	switch d.Kind() {
	case IndexKind:
		v.rep.Counts.Indexes++
	case LogKind:
		v.rep.Counts.Logs++
	default:
		v.rep.Counts.Concepts++
	}
	if d.ReadErr != nil {
		v.add("file-unreadable", d, 0, "cannot read file: %v", d.ReadErr)
		return
	}
	if !d.ValidUTF8 {
		off := firstInvalidUTF8(d.Raw)
		v.add("utf8-invalid", d, d.LineAt(off), "not valid UTF-8 (first bad byte at offset %d)", off)
		return
	}
	switch d.Kind() {
	case IndexKind:
		v.index(d)
	case LogKind:
		v.log(d)
	default:
		v.concept(d)
	}
	v.links(d)
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func (v *validator) concept(d *Document) {
	fm := d.Frontmatter
	switch {
	case fm.Unclosed:
		v.add("frontmatter-unclosed", d, 1, "no parseable YAML frontmatter block: the opening `---` is never closed")
		return
	case !fm.Present:
		v.add("frontmatter-missing", d, 1, "no parseable YAML frontmatter block")
		return
	case fm.NotMapping:
		v.add("frontmatter-not-mapping", d, fm.Line, "%v", fm.Err)
		return
	case fm.Err != nil:
		v.add("frontmatter-yaml", d, fm.Line, "frontmatter is not valid YAML: %v", fm.Err)
		return
	}
	v.duplicateKeys(d)
	v.typeField(d)
	for _, key := range []string{"title", "description"} {
		n := d.Field(key)
		text, _ := scalarText(n)
		switch {
		case n == nil:
			v.add(key+"-missing", d, 0, "recommended field `%s` is absent", key)
		case isScalar(n) && strings.TrimSpace(text) == "":
			v.add(key+"-missing", d, n.Line, "recommended field `%s` is empty", key)
		case !isScalar(n):
			v.add("field-invalid", d, n.Line, "`%s` is a %s, not a string", key, nodeKindName(n))
		}
	}
	if n := d.Field("resource"); n != nil && !isScalar(n) {
		v.add("field-invalid", d, n.Line, "`resource` is a %s, not a string", nodeKindName(n))
	}
	v.tags(d)
	v.generated(d)
	v.verified(d)
	if n := d.Field("status"); n != nil {
		s, ok := scalarText(n)
		switch strings.TrimSpace(s) {
		case "draft", "stable", "deprecated":
		default:
			if ok {
				v.add("status-invalid", d, n.Line, "`status` is %q; expected draft, stable or deprecated", s)
			} else {
				v.add("status-invalid", d, n.Line, "`status` is a %s; expected draft, stable or deprecated", nodeKindName(n))
			}
		}
	}
	v.staleAfter(d)
	v.sources(d)
	for _, s := range d.Sections {
		if s.Level > 0 && strings.EqualFold(s.Title, "citations") {
			v.add("citations-legacy", d, s.Line, "legacy v0.1 `# Citations` section; list sources in frontmatter `sources` instead")
		}
	}
	if IsQuery(d) {
		_, findings := ParseQuery(d)
		v.rep.Findings = append(v.rep.Findings, findings...)
	}
	if strings.EqualFold(d.Type(), "Attested Computation") {
		v.computation(d)
	}
}

func (v *validator) duplicateKeys(d *Document) {
	m := d.Frontmatter.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if seen[k.Value] {
			v.add("key-duplicate", d, k.Line, "key `%s` appears more than once; the first one is used", k.Value)
		}
		seen[k.Value] = true
	}
}

func (v *validator) typeField(d *Document) {
	n := d.Field("type")
	switch {
	case n == nil:
		v.add("type-missing", d, d.Frontmatter.Line, "missing required `type` field")
	case !isScalar(n):
		v.add("type-not-string", d, n.Line, "`type` is a %s, not a string", nodeKindName(n))
	case n.Tag == "!!null" || strings.TrimSpace(n.Value) == "":
		v.add("type-blank", d, n.Line, "required `type` field is empty")
	}
}

func isScalar(n *yaml.Node) bool {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n != nil && n.Kind == yaml.ScalarNode
}

func (v *validator) tags(d *Document) {
	n := d.Field("tags")
	if n == nil {
		v.add("tags-missing", d, 0, "recommended field `tags` is absent")
		return
	}
	if n.Kind != yaml.SequenceNode {
		v.add("tags-invalid", d, n.Line, "`tags` is a %s, not a list (write `tags: [a, b]`)", nodeKindName(n))
		return
	}
	for i, t := range n.Content {
		if s, ok := scalarText(t); !ok || strings.TrimSpace(s) == "" {
			v.add("tags-invalid", d, t.Line, "tag %d is not a non-empty string", i+1)
		}
	}
}

func (v *validator) generated(d *Document) {
	n := d.Field("generated")
	if n == nil {
		if d.Field("timestamp") != nil {
			v.add("timestamp-legacy", d, d.Field("timestamp").Line, "legacy v0.1 `timestamp`; write `generated: {by, at}` instead")
		} else {
			v.add("generated-missing", d, 0, "recommended field `generated` is absent")
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		v.add("generated-invalid", d, n.Line, "`generated` is a %s, not a mapping of `by` and `at`", nodeKindName(n))
		return
	}
	by := mapValue(n, "by")
	if s, ok := scalarText(by); !ok || strings.TrimSpace(s) == "" {
		v.add("generated-by-missing", d, n.Line, "`generated` has no `by` actor")
	} else {
		v.actor(d, by, "generated.by")
	}
	v.timestamp(d, mapValue(n, "at"), "generated.at")
}

func (v *validator) verified(d *Document) {
	n := d.Field("verified")
	if n == nil {
		return
	}
	var entries []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		entries = []*yaml.Node{n} // a bare mapping is a one-element list (§5.2)
	case yaml.SequenceNode:
		entries = n.Content
	default:
		v.add("verified-invalid", d, n.Line, "`verified` is a %s, not a mapping or a list of them", nodeKindName(n))
		return
	}
	for i, e := range entries {
		field := fmt.Sprintf("verified[%d]", i)
		if e.Kind != yaml.MappingNode {
			v.add("verified-invalid", d, e.Line, "`%s` is a %s, not a mapping of `by` and `at`", field, nodeKindName(e))
			continue
		}
		by := mapValue(e, "by")
		if s, ok := scalarText(by); !ok || strings.TrimSpace(s) == "" {
			v.add("verified-invalid", d, e.Line, "`%s` has no `by` actor", field)
		} else {
			v.actor(d, by, field+".by")
		}
		v.timestamp(d, mapValue(e, "at"), field+".at")
	}
}

// nearMiss reports whether an actor starts with "human" or "process" in
// any case, then a character that cannot continue a word: what
// `(?i)^(human|process)[^A-Za-z0-9_]` matches, case folding included (the
// long s, U+017F, is an "s", and the Kelvin sign, U+212A, a "k").
func nearMiss(s string) bool {
	for _, word := range []string{"human", "process"} {
		rest := s
		ok := true
		for _, c := range word {
			r, n := utf8.DecodeRuneInString(rest)
			if n == 0 || !strings.EqualFold(string(r), string(c)) {
				ok = false
				break
			}
			rest = rest[n:]
		}
		if !ok {
			continue
		}
		r, n := utf8.DecodeRuneInString(rest)
		return n > 0 && !(r == '_' || r < utf8.RuneSelf && isAlnum(byte(r)) || r == '\u017f' || r == '\u212a')
	}
	return false
}

func isAlnum(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

// splitActor reports whether an actor is two parts joined at the first
// sep (":" for "human:<id>", "/" for "<producer>/<version>"), neither
// empty, the first without other, nor any white space in either: what
// `^[^\s:/]+:\S+$` and `^[^\s/:]+/\S+$` match.
func splitActor(s string, sep, other byte) bool {
	i := strings.IndexByte(s, sep)
	if i <= 0 || i == len(s)-1 || strings.IndexByte(s[:i], other) >= 0 {
		return false
	}
	for j := 0; j < len(s); j++ {
		if isRESpace(s[j]) {
			return false
		}
	}
	return true
}

// actor checks the §7 shape of an actor value.
func (v *validator) actor(d *Document, n *yaml.Node, field string) {
	s, ok := scalarText(n)
	if !ok {
		v.add("actor-invalid", d, n.Line, "`%s` is a %s, not an actor string", field, nodeKindName(n))
		return
	}
	s = strings.TrimSpace(s)
	if nearMiss(s) && !strings.HasPrefix(s, "human:") && !strings.HasPrefix(s, "process:") {
		v.add("actor-near-miss", d, n.Line, "`%s` is %q: it almost spells `human:` or `process:`, so it reads as an agent", field, s)
		return
	}
	if s == "human:" || s == "process:" || (!splitActor(s, ':', '/') && !splitActor(s, '/', ':')) {
		v.add("actor-invalid", d, n.Line, "`%s` is %q; expected `<producer>/<version>`, `human:<id>` or `process:<id>`", field, s)
	}
}

type timeForm int

const (
	badTime timeForm = iota
	dateForm
	instantForm
	noOffsetForm
)

// isDate reports whether s is written YYYY-MM-DD, in ASCII digits.
func isDate(s string) bool {
	if len(s) != len("2006-01-02") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseTime reads a timestamp in the forms §5 and its July text allow: a date
// (YYYY-MM-DD) or an RFC 3339 datetime with an offset ("T" or a space between
// date and time). A datetime without an offset is recognised but unusable.
func parseTime(s string) (time.Time, timeForm) {
	s = strings.TrimSpace(s)
	if isDate(s) {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return time.Time{}, badTime
		}
		return t, dateForm
	}
	if len(s) > 10 && (s[10] == ' ' || s[10] == 't') {
		s = s[:10] + "T" + s[11:]
	}
	s = strings.Replace(s, "z", "Z", 1)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, instantForm
	}
	// ISO 8601 also allows an offset without a colon (+0200).
	if t, err := time.Parse("2006-01-02T15:04:05.999999999-0700", s); err == nil {
		return t, instantForm
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if _, err := time.Parse(layout, s); err == nil {
			return time.Time{}, noOffsetForm
		}
	}
	return time.Time{}, badTime
}

// timestamp checks an optional timestamp value and returns what it read.
func (v *validator) timestamp(d *Document, n *yaml.Node, field string) (time.Time, timeForm) {
	if n == nil {
		return time.Time{}, badTime
	}
	s, ok := scalarText(n)
	if !ok {
		v.add("timestamp-invalid", d, n.Line, "`%s` is a %s, not a timestamp", field, nodeKindName(n))
		return time.Time{}, badTime
	}
	t, form := parseTime(s)
	switch form {
	case badTime:
		v.add("timestamp-invalid", d, n.Line, "`%s` is %q; expected an ISO 8601 datetime with an offset (2026-06-30T14:00:00Z) or a date (2026-06-30)", field, s)
	case noOffsetForm:
		v.add("timestamp-no-offset", d, n.Line, "`%s` is %q, a datetime without a UTC offset; add one (e.g. Z), consumers ignore it as written", field, s)
	}
	return t, form
}

func (v *validator) staleAfter(d *Document) {
	n := d.Field("stale_after")
	t, form := v.timestamp(d, n, "stale_after")
	switch form {
	case dateForm:
		if day := t.Format("2006-01-02"); v.today >= day {
			v.add("stale", d, n.Line, "stale since %s (today is %s)", day, v.today)
		}
	case instantForm:
		if !v.now.Before(t) {
			v.add("stale", d, n.Line, "stale since %s (now is %s)", strings.TrimSpace(n.Value), v.now.UTC().Format(time.RFC3339))
		}
	}
}

func (v *validator) sources(d *Document) {
	top := d.Field("usage_window")
	if top != nil {
		v.usageWindow(d, top, "usage_window")
	}
	n := d.Field("sources")
	ids := map[string]bool{}
	if n != nil {
		if n.Kind != yaml.SequenceNode {
			v.add("sources-invalid", d, n.Line, "`sources` is a %s, not a list", nodeKindName(n))
		} else {
			for i, e := range n.Content {
				v.source(d, e, i, top, ids)
			}
		}
	}
	reported := map[string]bool{}
	for _, f := range d.Footnotes {
		if !ids[f.Label] && !reported[f.Label] {
			reported[f.Label] = true
			v.add("footnote-unknown-source", d, f.Line, "footnote `[^%s]` matches no `sources[].id`", f.Label)
		}
	}
}

func (v *validator) source(d *Document, e *yaml.Node, i int, topWindow *yaml.Node, ids map[string]bool) {
	field := fmt.Sprintf("sources[%d]", i)
	if e.Kind != yaml.MappingNode {
		v.add("sources-invalid", d, e.Line, "`%s` is a %s, not a mapping", field, nodeKindName(e))
		return
	}
	if s, ok := scalarText(mapValue(e, "resource")); !ok || strings.TrimSpace(s) == "" {
		v.add("source-resource-missing", d, e.Line, "`%s` has no `resource`", field)
	}
	if id, ok := scalarText(mapValue(e, "id")); ok && id != "" {
		if ids[id] {
			v.add("source-id-duplicate", d, mapValue(e, "id").Line, "`%s.id` %q is used by an earlier source", field, id)
		}
		ids[id] = true
	}
	if a := mapValue(e, "author"); a != nil {
		v.actor(d, a, field+".author")
	}
	v.timestamp(d, mapValue(e, "last_modified"), field+".last_modified")
	own := mapValue(e, "usage_window")
	if own != nil {
		v.usageWindow(d, own, field+".usage_window")
	}
	if c := mapValue(e, "usage_count"); c != nil {
		s, _ := scalarText(c)
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil || n < 0 {
			v.add("usage-count-invalid", d, c.Line, "`%s.usage_count` is %q, not a whole number", field, s)
		}
		if own == nil && topWindow == nil {
			v.add("usage-count-no-window", d, c.Line, "`%s.usage_count` has no `usage_window`, on the entry or beside `sources`", field)
		}
	}
}

func (v *validator) usageWindow(d *Document, n *yaml.Node, field string) {
	if n.Kind != yaml.MappingNode {
		v.add("usage-window-invalid", d, n.Line, "`%s` is a %s, not a mapping of `from` and `to`", field, nodeKindName(n))
		return
	}
	for _, k := range []string{"from", "to"} {
		if mapValue(n, k) == nil {
			v.add("usage-window-invalid", d, n.Line, "`%s` has no `%s`", field, k)
		} else {
			v.timestamp(d, mapValue(n, k), field+"."+k)
		}
	}
}

func (v *validator) computation(d *Document) {
	if s, ok := d.Text("runtime"); !ok || strings.TrimSpace(s) == "" {
		v.add("computation-runtime-missing", d, d.Frontmatter.Line, "an Attested Computation needs a `runtime`")
	}
	if p := d.Field("parameters"); p != nil {
		if p.Kind != yaml.SequenceNode {
			v.add("computation-parameters-invalid", d, p.Line, "`parameters` is a %s, not a list", nodeKindName(p))
		} else {
			for i, e := range p.Content {
				if name, ok := scalarText(mapValue(e, "name")); e.Kind != yaml.MappingNode || !ok || name == "" {
					v.add("computation-parameters-invalid", d, e.Line, "`parameters[%d]` needs a `name`", i)
				}
			}
		}
	}
	v.pathField(d, d.Field("computation"), "computation")
	v.pathField(d, mapValue(d.Field("executor"), "resource"), "executor.resource")
	v.pathField(d, mapValue(d.Field("attester"), "resource"), "attester.resource")
}

// pathField checks that a path-valued field (§6.2) inside the bundle exists.
func (v *validator) pathField(d *Document, n *yaml.Node, field string) {
	s, ok := scalarText(n)
	s = strings.TrimSpace(s)
	if !ok || s == "" || hasScheme(s) {
		return
	}
	p, kind := ResolvePath(d.Path, s)
	if kind != InternalLink {
		return
	}
	if !v.b.Exists(Link{Kind: InternalLink, Path: p}) {
		v.add("computation-path-missing", d, n.Line, "`%s` %q resolves to `%s`, which does not exist", field, s, p)
	}
}

func (v *validator) index(d *Document) {
	fm := d.Frontmatter
	if !fm.Present {
		return
	}
	if d.Path != "index.md" {
		v.add("index-frontmatter", d, 1, "an index.md below the bundle root must not have frontmatter (§8)")
		return
	}
	if fm.Err != nil {
		v.add("index-root-yaml", d, fm.Line, "root index.md frontmatter: %v (§12)", fm.Err)
		return
	}
	var extra []string
	m := fm.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; k != "okf_version" {
			extra = append(extra, "`"+k+"`")
		}
	}
	if len(extra) > 0 {
		v.add("index-root-keys", d, fm.Line, "root index.md frontmatter may hold only `okf_version`, not %s (§12)", strings.Join(extra, ", "))
	}
	if n := mapValue(m, "okf_version"); n != nil {
		if s, _ := scalarText(n); strings.TrimSpace(s) != "0.2" {
			v.add("okf-version", d, n.Line, "`okf_version` is %q; this validator checks OKF \"0.2\" and reads the bundle best-effort", s)
		}
	}
}

func (v *validator) log(d *Document) {
	if d.Frontmatter.Present {
		v.add("log-frontmatter", d, 1, "log.md should not have frontmatter")
	}
	for _, line := range undatedEntries(d) {
		v.add("log-entry-undated", d, line, "log entry outside any date group; put it under a `## YYYY-MM-DD` heading (§9)")
	}
	prev := ""
	for _, s := range d.Sections {
		if s.Level != 2 {
			continue
		}
		if _, form := parseTime(s.Title); form != dateForm || !isDate(s.Title) {
			v.add("log-heading-invalid", d, s.Line, "log heading `## %s` is not a YYYY-MM-DD date (§9)", s.Title)
			continue
		}
		if prev != "" && s.Title > prev {
			v.add("log-order", d, s.Line, "`## %s` comes after the older `## %s`; log entries go newest first (§9)", s.Title, prev)
		}
		prev = s.Title
	}
}

// undatedEntries returns the lines of the log entries (list items) that
// come before the first `##` heading: §9 groups every entry under a date.
// Lists inside code or quotes are not entries.
func undatedEntries(d *Document) []int {
	body := d.Body()
	root := markdown.Get().Parse(text.NewReader(body))
	var lines []int
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 2 {
			break
		}
		if _, ok := n.(*ast.List); !ok {
			continue
		}
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			lines = append(lines, d.LineAt(d.BodyStart+itemStart(item, body)))
		}
	}
	return lines
}

// itemStart returns the offset of the line a list item begins on. An item
// holds no text lines of its own, so its first block that does stands in.
func itemStart(item ast.Node, body []byte) int {
	for n := item.FirstChild(); n != nil; n = n.FirstChild() {
		if lines := n.Lines(); lines != nil && lines.Len() > 0 {
			return blockStart(n, body)
		}
	}
	return blockStart(item, body)
}

func (v *validator) links(d *Document) {
	deprecated := map[string]bool{}
	for _, l := range d.Links {
		switch l.Kind {
		case OutsideLink:
			v.add("link-outside-bundle", d, l.Line, "link `%s` climbs above the bundle root", l.Target)
		case InternalLink:
			if !v.b.Exists(l) {
				v.add("link-broken", d, l.Line, "cross-link target not found: `%s` (tolerated under §6.1)", l.Target)
				continue
			}
			// Target also catches a self-link written without ".md".
			if l.Path == d.Path || v.b.Target(l) == d.ID() {
				v.add("link-self", d, l.Line, "link `%s` points at this document", l.Target)
				continue
			}
			if d.Kind() == ConceptKind && d.Status() != "deprecated" {
				if t := v.b.Concept(v.b.Target(l)); t != nil && usable(t) && t.Status() == "deprecated" && !deprecated[t.ID()] {
					deprecated[t.ID()] = true
					v.add("link-deprecated", d, l.Line, "link `%s` points at the deprecated concept `%s`", l.Target, t.ID())
				}
			}
		}
	}
}

// orphans reports concepts that no other document links to.
func (v *validator) orphans() {
	linked := map[string]bool{}
	for _, d := range v.b.Docs {
		for _, l := range d.Links {
			if t := v.b.Target(l); t != "" && t != d.ID() {
				linked[t] = true
			}
		}
	}
	for _, d := range v.b.Docs {
		if d.Kind() == ConceptKind && !linked[d.ID()] {
			v.add("orphan", d, 0, "no document links to this concept, not even an index.md")
		}
	}
}

// indexSync reports, for each index.md, the concepts and folders beside it
// that it does not list. A folder counts as listed when the index links to
// it or to anything inside it.
func (v *validator) indexSync() {
	for _, idx := range v.b.Docs {
		if idx.Kind() != IndexKind || !usable(idx) {
			continue
		}
		parent := path.Dir(idx.Path)
		prefix := parent + "/"
		if parent == "." {
			prefix = ""
		}
		listed := map[string]bool{}
		for _, l := range idx.Links {
			if l.Kind != InternalLink || !strings.HasPrefix(l.Path, prefix) {
				continue
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(l.Path, prefix), "/")
			if i := strings.IndexByte(rel, '/'); i >= 0 {
				rel = rel[:i]
			}
			listed[rel] = true
			listed[rel+".md"] = true
		}
		var missing []string
		for _, d := range v.b.Docs {
			if path.Dir(d.Path) == parent && d.Kind() == ConceptKind && !listed[path.Base(d.Path)] {
				missing = append(missing, path.Base(d.Path))
			}
		}
		for sub := range v.b.Dirs {
			if sub != "" && path.Dir(sub) == parent && v.holdsMarkdown(sub) && !listed[path.Base(sub)] {
				missing = append(missing, path.Base(sub)+"/")
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			v.add("index-out-of-sync", idx, 0, "does not list `%s`", m)
		}
	}
}

func (v *validator) holdsMarkdown(dir string) bool {
	for _, d := range v.b.Docs {
		if strings.HasPrefix(d.Path, dir+"/") {
			return true
		}
	}
	return false
}
