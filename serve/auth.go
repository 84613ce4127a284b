package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/atomicfile"
	"github.com/okf-tools/okf/store"
)

// Grant is what one bearer token allows: reading one tenant, and writing it
// when Write is set. Only the token's SHA-256 is kept.
type Grant struct {
	Name   string
	Tenant string
	Write  bool
	// Policy and Caller are what a caller's sign-in says of it (OAuth):
	// the policy its claims name, and its values by name.
	Policy string
	Caller map[string]string
	hash   [sha256.Size]byte
}

// MinTokenLen is the shortest token accepted: guessing must be hopeless.
const MinTokenLen = 24

// NewGrant makes the grant of a token.
func NewGrant(name, tenant string, write bool, token string) (Grant, error) {
	if len(token) < MinTokenLen {
		return Grant{}, fmt.Errorf("token %s: %d characters, at least %d (mint one with okf serve token)", name, len(token), MinTokenLen)
	}
	if err := store.ValidateTenant(tenant); err != nil {
		return Grant{}, fmt.Errorf("token %s: %w", name, err)
	}
	return Grant{Name: name, Tenant: tenant, Write: write, hash: sha256.Sum256([]byte(token))}, nil
}

// TokensFile is the name of the tokens file in the data directory.
const TokensFile = "tokens.json"

// tokensDoc is the tokens file: the SHA-256 of each token, never the token.
type tokensDoc struct {
	Tokens []tokenEntry `json:"tokens"`
}

type tokenEntry struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Write  bool   `json:"write,omitempty"`
	Policy string `json:"policy,omitempty"`
	SHA256 string `json:"sha256"`
}

// LoadTokens reads the grants of a tokens file; a missing file holds none.
func LoadTokens(path string) ([]Grant, error) {
	doc, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	grants := make([]Grant, 0, len(doc.Tokens))
	for i, e := range doc.Tokens {
		g := Grant{Name: e.Name, Tenant: e.Tenant, Write: e.Write, Policy: e.Policy}
		sum, err := hex.DecodeString(e.SHA256)
		switch {
		case e.Name == "":
			return nil, fmt.Errorf("%s: tokens[%d]: name is missing", path, i)
		case err != nil || len(sum) != sha256.Size:
			return nil, fmt.Errorf("%s: tokens[%d] (%s): sha256 is not 64 hex digits", path, i, e.Name)
		}
		if err := store.ValidateTenant(e.Tenant); err != nil {
			return nil, fmt.Errorf("%s: tokens[%d] (%s): %w", path, i, e.Name, err)
		}
		copy(g.hash[:], sum)
		grants = append(grants, g)
	}
	return grants, nil
}

func readTokens(path string) (tokensDoc, error) {
	var doc tokensDoc
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("reading tokens: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// MintToken makes a new random token with a grant (its name, tenant, write
// and policy), records its SHA-256 in the tokens file (created with mode 0600 if missing, and
// replaced whole, never half-written) and returns the token, which is shown
// once and kept nowhere.
func MintToken(path string, g Grant) (string, error) {
	name, tenant := g.Name, g.Tenant
	if name == "" {
		return "", errors.New("a token needs a name")
	}
	if err := store.ValidateTenant(tenant); err != nil {
		return "", err
	}
	doc, err := readTokens(path)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(doc.Tokens, func(e tokenEntry) bool { return e.Name == name }) {
		return "", fmt.Errorf("%s already has a token called %q", path, name)
	}
	token := "okf_" + rand.Text() // 130 random bits
	sum := sha256.Sum256([]byte(token))
	doc.Tokens = append(doc.Tokens, tokenEntry{Name: name, Tenant: tenant, Write: g.Write, Policy: g.Policy, SHA256: hex.EncodeToString(sum[:])})
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("writing tokens: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("writing tokens: %w", err)
	}
	return token, nil
}
