package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/okf-tools/okf/internal/yamlplain"
)

// A concept okf generates carries, as generated.digest in its frontmatter,
// a digest of its own text without that line. The digest travels with the
// file (through a store, okf export, git), so a later compile can tell a
// concept still as okf wrote it from one a person edited, even where the
// folder's .okf-bundle record did not come along. 64 bits: it tells edits
// apart, it does not defend against forgery.
const digestKey = "  digest: "

// seal adds the digest line to a rendered concept, at the end of its
// generated block.
func seal(doc []byte) []byte {
	at := bytes.Index(doc, []byte("\ngenerated:\n"))
	if at < 0 {
		return doc
	}
	end := at + len("\ngenerated:\n")
	for end < len(doc) && bytes.HasPrefix(doc[end:], []byte("  ")) {
		next := bytes.IndexByte(doc[end:], '\n')
		if next < 0 {
			return doc
		}
		end += next + 1
	}
	sum := sha256.Sum256(doc)
	digest := hex.EncodeToString(sum[:8])
	if yamlplain.ReadsAs(digest) != yamlplain.String {
		// All digits, or digits around one "e": YAML would read a number.
		digest = `"` + digest + `"`
	}
	line := digestKey + digest + "\n"
	out := make([]byte, 0, len(doc)+len(line))
	return append(append(append(out, doc[:end]...), line...), doc[end:]...)
}

// Sealed reports whether a document carries okf's digest, and whether the
// document is still what that digest was made of.
func Sealed(doc []byte) (sealed, intact bool) {
	want, start, end := digestLine(doc)
	if want == "" {
		return false, false
	}
	rest := append(append([]byte{}, doc[:start]...), doc[end:]...)
	sum := sha256.Sum256(rest)
	return true, want == hex.EncodeToString(sum[:8])
}

// digestOf returns the digest a document was sealed with, or "".
func digestOf(doc []byte) string {
	d, _, _ := digestLine(doc)
	return d
}

// digestLine finds the digest line of a document's frontmatter: its value
// and the line's byte range.
func digestLine(doc []byte) (value string, start, end int) {
	fm, ok := frontmatterOf(doc)
	if !ok {
		return "", 0, 0
	}
	at := bytes.Index(fm, []byte("\n"+digestKey))
	if at < 0 {
		return "", 0, 0
	}
	start = at + 1
	nl := bytes.IndexByte(fm[start:], '\n')
	if nl < 0 {
		return "", 0, 0
	}
	end = start + nl + 1
	return strings.Trim(string(bytes.TrimSpace(fm[start+len(digestKey):end])), `"`), start, end
}

// frontmatterOf returns a document's frontmatter block, its fences
// included.
func frontmatterOf(doc []byte) ([]byte, bool) {
	if !bytes.HasPrefix(doc, []byte("---\n")) {
		return nil, false
	}
	end := bytes.Index(doc[3:], []byte("\n---\n"))
	if end < 0 {
		return nil, false
	}
	return doc[:3+end+1], true
}
