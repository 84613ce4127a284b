package store

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/okf-tools/okf"
)

// MaxPathLen bounds a document path, in bytes.
const MaxPathLen = 1024

// ValidateTenant checks a tenant name: [a-z0-9][a-z0-9_-]{0,63}.
func ValidateTenant(name string) error {
	if err := checkName(name, "_-"); err != nil {
		return Invalidf("tenant name %q: %v (want [a-z0-9][a-z0-9_-]{0,63})", name, err)
	}
	return nil
}

// ValidateBundle checks a bundle name: [a-z0-9][a-z0-9_.-]{0,63}.
func ValidateBundle(name string) error {
	if err := checkName(name, "_.-"); err != nil {
		return Invalidf("bundle name %q: %v (want [a-z0-9][a-z0-9_.-]{0,63})", name, err)
	}
	return nil
}

func checkName(name, punct string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case len(name) > 64:
		return fmt.Errorf("%d characters, at most 64", len(name))
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune(punct, r)
		if !ok {
			if i == 0 {
				return fmt.Errorf("must start with a lowercase letter or digit, not %q", r)
			}
			return fmt.Errorf("character %q at offset %d is not allowed", r, i)
		}
	}
	return nil
}

// MaxEmbeddingBytes bounds one vector of an embedding cache: 16,384
// float32 dimensions, four times the widest model okf has seen.
const MaxEmbeddingBytes = 64 << 10

// ValidateModel checks the name an embedding cache keeps a model's
// vectors under, as endpoints name models ("text-embedding-3-small",
// "nomic-ai/nomic-embed-text-v1.5", "mxbai-embed-large:latest"): 1 to
// 128 ASCII letters, digits and . _ - : / @ +, a letter or digit first.
func ValidateModel(name string) error {
	if err := checkModel(name); err != nil {
		return Invalidf("embedding model %q: %v", name, err)
	}
	return nil
}

func checkModel(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case len(name) > 128:
		return fmt.Errorf("%d bytes, at most 128", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._-:/@+", rune(c))) {
			return fmt.Errorf("character %q at offset %d is not allowed", c, i)
		}
	}
	return nil
}

// ValidateEmbeddingKey checks a key of an embedding cache: the lowercase
// hex SHA-256 of the text embedded, as Hash writes it.
func ValidateEmbeddingKey(key string) error {
	if len(key) != 64 {
		return Invalidf("embedding key %.80q: %d characters, want a SHA-256 in 64 hex digits", key, len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return Invalidf("embedding key %q: character %q at offset %d is not a lowercase hex digit", key, c, i)
		}
	}
	return nil
}

// ValidatePath checks a document path: relative, slash-separated, valid
// UTF-8 without control characters, no empty segment and no segment that
// starts with a dot (so no "." or "..", and no hidden files, which a bundle
// folder would not carry back on import), ending in ".md".
func ValidatePath(p string) error {
	if err := checkPath(p); err != nil {
		return Invalidf("document path %q: %v", p, err)
	}
	return nil
}

func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > MaxPathLen:
		return fmt.Errorf("%d bytes, at most %d", len(p), MaxPathLen)
	case !utf8.ValidString(p):
		return fmt.Errorf("not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("must be relative to the bundle, without a leading /")
	case strings.Contains(p, `\`):
		return fmt.Errorf(`must use / as separator, not \`)
	case !strings.HasSuffix(p, ".md"):
		return fmt.Errorf("only markdown documents (.md) are stored")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return fmt.Errorf("control character %q", r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("empty path segment")
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("segment %q starts with a dot", seg)
		}
	}
	return nil
}

// ReadFolder reads the documents of a bundle folder by okf.ReadFolder's
// rules, each path checked by ValidatePath, so that a name the store would
// refuse is refused naming its file, before anything is written.
func ReadFolder(dir string) (map[string][]byte, error) {
	docs, err := okf.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(maps.Keys(docs)) {
		if err := ValidatePath(p); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(p)), err)
		}
	}
	return docs, nil
}
