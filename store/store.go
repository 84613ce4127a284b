// Package store keeps the markdown of OKF bundles exactly as written, per
// tenant, with a history of commits, so that a read model can be compiled
// from it on every commit and the markdown handed back byte for byte.
//
// A tenant holds bundles; a bundle holds documents addressed by a
// slash-separated path such as "tables/orders.md". Every change to a tenant
// is a numbered commit (1, 2, 3, … per tenant) that records which documents
// were added, modified or deleted. Document bodies are stored once per
// distinct content, named by their SHA-256, so history costs only the bodies
// that actually changed. A Sync that finds every hash unchanged makes no
// commit at all, which is what lets a caller skip recompiling an unchanged
// tree.
//
// The compiled read model of a commit is kept as a snapshot: an opaque
// blob named by its digest, stored once however many commits share it.
//
// Store is the interface; the backends live in subpackages, each of which
// registers itself with Open when imported: store/sqlite (one embedded file,
// the default) and store/postgres (a database that many servers share).
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Store is a multi-tenant, versioned store of bundle documents. Every method
// is safe for concurrent use, also across handles opened on the same
// database. Tenant, bundle and path arguments are checked with
// ValidateTenant, ValidateBundle and ValidatePath.
//
// A tenant comes into being with its first commit; until then it reads as
// empty: Head is commit 0, and Bundles, Documents and History return
// nothing.
type Store interface {
	// Sync makes each bundle named in bundles hold exactly the given
	// documents (bundle → path → content): documents not listed are
	// deleted, and documents whose content hash is unchanged are left
	// alone. Bundles not named are not touched; an empty document map
	// deletes the bundle. All changes land in one commit. When nothing
	// changed, no commit is made and the current head is returned with
	// Changed false.
	Sync(ctx context.Context, tenant string, bundles map[string]map[string][]byte, message string) (Commit, error)

	// Write creates or replaces one document. ifMatch is the hash the
	// document must have now: "" means it must not exist, Unconditional
	// skips the check. A mismatch returns a *PreconditionError. Writing
	// the content a document already has makes no commit.
	Write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (Commit, error)

	// Delete removes one document whose current hash is ifMatch (or any,
	// with Unconditional). A missing document is ErrNotFound.
	Delete(ctx context.Context, tenant, bundle, path, ifMatch string) (Commit, error)

	// DeleteBundle removes every document of a bundle in one commit.
	DeleteBundle(ctx context.Context, tenant, bundle string) (Commit, error)

	// Tenants lists the tenants that have at least one commit, sorted.
	Tenants(ctx context.Context) ([]string, error)

	// Bundles lists the bundles of a tenant that hold documents, sorted.
	Bundles(ctx context.Context, tenant string) ([]string, error)

	// Documents returns every current document of a tenant, sorted by
	// bundle then path, together with the head commit they belong to, read
	// in one transaction so the two always agree.
	Documents(ctx context.Context, tenant string) (head int64, docs []Document, err error)

	// Document returns one current document.
	Document(ctx context.Context, tenant, bundle, path string) (Document, error)

	// Head returns the latest commit of a tenant, without its Changes;
	// ID 0 means the tenant has no commits.
	Head(ctx context.Context, tenant string) (Commit, error)

	// History returns up to limit commits (all when limit <= 0), newest
	// first, each with its changes sorted by bundle then path.
	History(ctx context.Context, tenant string, limit int) ([]Commit, error)

	// DocumentAt returns a document as it was right after a commit.
	DocumentAt(ctx context.Context, tenant string, commitID int64, bundle, path string) (Document, error)

	// PutSnapshot stores the compiled read model of a commit: blob is the
	// snapshot's bytes and digest the name its producer gives it. Storing
	// again for the same commit replaces it; identical blobs are kept once.
	PutSnapshot(ctx context.Context, tenant string, commitID int64, digest string, blob []byte) error

	// Snapshot returns the snapshot of the newest commit that has one.
	Snapshot(ctx context.Context, tenant string) (commitID int64, digest string, blob []byte, err error)

	// Embeddings returns what a tenant's embedding cache holds for a
	// model (ValidateModel) of the keys given (ValidateEmbeddingKey: the
	// hex digest of the text embedded), by key; keys it lacks are left
	// out. A tenant without a cache reads as empty.
	Embeddings(ctx context.Context, tenant, model string, keys []string) (map[string][]byte, error)

	// PutEmbeddings keeps vectors in a tenant's embedding cache for a
	// model, by key, replacing those of the same keys. A vector is 1 to
	// MaxEmbeddingBytes bytes, opaque to the store (package embed writes
	// little-endian float32). The cache is not part of the history: it
	// makes no commit.
	PutEmbeddings(ctx context.Context, tenant, model string, vecs map[string][]byte) error

	// Close releases the handle.
	Close() error
}

// Document is one markdown document of a bundle with its exact bytes.
type Document struct {
	Bundle  string
	Path    string
	Hash    string // Hash(Content)
	Content []byte
}

// Op says what a commit did to a document.
type Op string

// The operations a change records.
const (
	Added    Op = "added"
	Modified Op = "modified"
	Deleted  Op = "deleted"
)

// Change is what one commit did to one document. Hash is the content the
// document has after the commit, or for a deletion the content it had.
type Change struct {
	Bundle string
	Path   string
	Op     Op
	Hash   string
}

// Commit is one numbered change to a tenant.
type Commit struct {
	// ID numbers the tenant's commits from 1.
	ID      int64
	Time    time.Time
	Message string
	// Changed is false when a write left the tenant as it was; ID is then
	// the current head (0 for a tenant without commits).
	Changed bool
	// Changes lists what the commit did, sorted by bundle then path.
	Changes []Change
}

// Unconditional, passed as ifMatch, skips the precondition of a write.
const Unconditional = "*"

// Errors that callers can test with errors.Is.
var (
	ErrNotFound     = errors.New("not found")
	ErrPrecondition = errors.New("precondition failed")
	ErrInvalid      = errors.New("invalid argument")
)

// PreconditionError reports a write whose ifMatch did not hold. It matches
// ErrPrecondition with errors.Is.
type PreconditionError struct {
	Tenant, Bundle, Path string
	// Expected is the ifMatch given; Current is the document's hash now,
	// "" when it does not exist.
	Expected, Current string
}

func (e *PreconditionError) Error() string {
	where := e.Tenant + "/" + e.Bundle + "/" + e.Path
	switch {
	case e.Current == "":
		return fmt.Sprintf("%s: precondition failed: document does not exist (expected hash %s)", where, e.Expected)
	case e.Expected == "":
		return fmt.Sprintf("%s: precondition failed: document already exists with hash %s", where, e.Current)
	}
	return fmt.Sprintf("%s: precondition failed: current hash is %s, expected %s", where, e.Current, e.Expected)
}

// Invalidf returns an error for a bad argument, with the message given,
// that matches ErrInvalid with errors.Is.
func Invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// Is makes errors.Is(err, ErrPrecondition) hold.
func (e *PreconditionError) Is(target error) bool { return target == ErrPrecondition }

// Hash returns the content hash used everywhere in the store: the
// lowercase hex SHA-256 of the bytes.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}
