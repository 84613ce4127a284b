// Package sqlstore is the store.Store that both SQL backends share: the
// schema, the diffing of syncs, commits, history and snapshots, written
// once over database/sql. What differs between SQLite and PostgreSQL (column
// types, placeholders, locking) comes in a Dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/okf-tools/okf/store"
)

// SchemaVersion is the version of the tables below; a store written by a
// different version is refused rather than misread.
const SchemaVersion = "1"

// Tables added since version 1 that an okf without them can ignore are
// no new version: each is created on open when its okf_meta row is
// absent, so that servers of both versions can share a store during an
// upgrade. additions are those rows' keys.
var additions = [...]string{"embeddings"}

// Dialect is what a backend tells the shared store about its database.
type Dialect struct {
	// Name names the backend in error messages.
	Name string
	// BlobType is the column type for bytes (BLOB, BYTEA).
	BlobType string
	// BeforeSchema runs first in the transaction that creates the tables,
	// e.g. to take a lock against other processes doing the same.
	BeforeSchema string
	// Rebind rewrites the ? placeholders of a query; nil keeps them.
	Rebind func(query string) string
	// ReadTx opens the transactions of reads that must see one state.
	ReadTx sql.TxOptions
	// LockRow ends the SELECT that reads a tenant's head in a write
	// transaction, to hold other writers of that tenant off until commit.
	LockRow string
	// SerializeWrites runs one write transaction at a time per handle, for
	// a database that allows one writer anyway.
	SerializeWrites bool
}

// schema returns the statements that create the tables, given the column
// type the database uses for bytes. BIGINT and TEXT mean the same on both.
func schema(blobType string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS okf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS okf_blobs (hash TEXT PRIMARY KEY, content ` + blobType + ` NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS okf_tenants (name TEXT PRIMARY KEY, head BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS okf_commits (
			tenant TEXT NOT NULL REFERENCES okf_tenants (name),
			id BIGINT NOT NULL,
			message TEXT NOT NULL,
			created_ns BIGINT NOT NULL,
			PRIMARY KEY (tenant, id))`,
		`CREATE TABLE IF NOT EXISTS okf_documents (
			tenant TEXT NOT NULL REFERENCES okf_tenants (name),
			bundle TEXT NOT NULL,
			path TEXT NOT NULL,
			hash TEXT NOT NULL REFERENCES okf_blobs (hash),
			PRIMARY KEY (tenant, bundle, path))`,
		`CREATE TABLE IF NOT EXISTS okf_changes (
			tenant TEXT NOT NULL,
			bundle TEXT NOT NULL,
			path TEXT NOT NULL,
			commit_id BIGINT NOT NULL,
			op TEXT NOT NULL CHECK (op IN ('added', 'modified', 'deleted')),
			hash TEXT NOT NULL REFERENCES okf_blobs (hash),
			PRIMARY KEY (tenant, bundle, path, commit_id),
			FOREIGN KEY (tenant, commit_id) REFERENCES okf_commits (tenant, id))`,
		`CREATE INDEX IF NOT EXISTS okf_changes_by_commit ON okf_changes (tenant, commit_id)`,
		`CREATE TABLE IF NOT EXISTS okf_snapshots (
			tenant TEXT NOT NULL,
			commit_id BIGINT NOT NULL,
			digest TEXT NOT NULL,
			blob_hash TEXT NOT NULL REFERENCES okf_blobs (hash),
			PRIMARY KEY (tenant, commit_id),
			FOREIGN KEY (tenant, commit_id) REFERENCES okf_commits (tenant, id))`,
		// The embedding cache: a vector by model and by the digest of the
		// text embedded, outside the history (no commit references it).
		`CREATE TABLE IF NOT EXISTS okf_embeddings (
			tenant TEXT NOT NULL,
			model TEXT NOT NULL,
			text_hash TEXT NOT NULL,
			vector ` + blobType + ` NOT NULL,
			PRIMARY KEY (tenant, model, text_hash))`,
	}
}

// Store implements store.Store on a database/sql handle.
type Store struct {
	db      *sql.DB
	dialect Dialect
	writeMu sync.Mutex
}

// New creates the schema if absent, checks its version and returns the
// store. It takes ownership of db.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{db: db, dialect: d}
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	// A store already at this version, with every addition, needs no
	// write at all, so opening one for reading never waits for a writer.
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM okf_meta WHERE key = 'schema'`).Scan(&v); err == nil && v == SchemaVersion {
		var n int
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM okf_meta WHERE key IN (`+placeholders(len(additions))+`)`),
			anySlice(additions[:])...).Scan(&n); err == nil && n == len(additions) {
			return nil
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s store: creating schema: %w", s.dialect.Name, err)
	}
	defer tx.Rollback()
	stmts := schema(s.dialect.BlobType)
	if s.dialect.BeforeSchema != "" {
		stmts = append([]string{s.dialect.BeforeSchema}, stmts...)
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s store: creating schema: %w", s.dialect.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO NOTHING`), SchemaVersion); err != nil {
		return fmt.Errorf("%s store: recording schema version: %w", s.dialect.Name, err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM okf_meta WHERE key = 'schema'`).Scan(&v); err != nil {
		return fmt.Errorf("%s store: reading schema version: %w", s.dialect.Name, err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("%s store: schema version %s, this okf reads version %s", s.dialect.Name, v, SchemaVersion)
	}
	for _, key := range additions {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING`), key); err != nil {
			return fmt.Errorf("%s store: recording the %s table: %w", s.dialect.Name, key, err)
		}
	}
	return tx.Commit()
}

// placeholders returns n comma-separated ? placeholders.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// Close closes the database handle.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) q(query string) string {
	if s.dialect.Rebind == nil {
		return query
	}
	return s.dialect.Rebind(query)
}

// pending is a change about to be committed, with the content to store.
type pending struct {
	store.Change
	content []byte
}

// plan inspects the tenant inside the write transaction and says what to
// commit; no changes means no commit.
type plan func(tx *sql.Tx) ([]pending, error)

// commit runs a write transaction on a tenant: it locks the tenant's row,
// lets plan decide the changes and records them as the next commit.
func (s *Store) commit(ctx context.Context, tenant, message string, plan plan) (store.Commit, error) {
	if s.dialect.SerializeWrites {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: starting a write: %w", tenant, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_tenants (name, head) VALUES (?, 0) ON CONFLICT (name) DO NOTHING`), tenant); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: creating: %w", tenant, err)
	}
	var head int64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT head FROM okf_tenants WHERE name = ?`+s.dialect.LockRow), tenant).Scan(&head); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: locking: %w", tenant, err)
	}
	changes, err := plan(tx)
	if err != nil {
		return store.Commit{}, err
	}
	if len(changes) == 0 {
		if head == 0 {
			return store.Commit{}, nil
		}
		c, err := s.readCommit(ctx, tx, tenant, head)
		return c, err
	}
	sort.Slice(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if a.Bundle != b.Bundle {
			return a.Bundle < b.Bundle
		}
		return a.Path < b.Path
	})
	c := store.Commit{ID: head + 1, Time: time.Now().UTC(), Message: cleanMessage(message), Changed: true}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_commits (tenant, id, message, created_ns) VALUES (?, ?, ?, ?)`),
		tenant, c.ID, c.Message, c.Time.UnixNano()); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: recording commit %d: %w", tenant, c.ID, err)
	}
	if err := s.apply(ctx, tx, tenant, c.ID, changes); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: commit %d: %w", tenant, c.ID, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE okf_tenants SET head = ? WHERE name = ?`), c.ID, tenant); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: moving head to %d: %w", tenant, c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: committing %d: %w", tenant, c.ID, err)
	}
	for _, p := range changes {
		c.Changes = append(c.Changes, p.Change)
	}
	return c, nil
}

// batchRows bounds the rows of one multi-row INSERT, well under SQLite's
// and PostgreSQL's limits on bound parameters.
const batchRows = 200

// apply writes the bodies, the current documents and the change records of
// one commit.
func (s *Store) apply(ctx context.Context, tx *sql.Tx, tenant string, commitID int64, changes []pending) error {
	// Bodies go in hash order: concurrent syncs of different tenants
	// that share content then take the rows' locks in the same order and
	// cannot deadlock.
	bodies := map[string][]byte{}
	for _, p := range changes {
		if p.Op != store.Deleted {
			bodies[p.Hash] = p.content
		}
	}
	hashes := make([]string, 0, len(bodies))
	for h := range bodies {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	var rows [][]any
	for _, h := range hashes {
		rows = append(rows, []any{h, nonNil(bodies[h])})
	}
	if err := s.insert(ctx, tx, `INSERT INTO okf_blobs (hash, content) VALUES `, 2, rows, ` ON CONFLICT (hash) DO NOTHING`); err != nil {
		return fmt.Errorf("storing contents: %w", err)
	}

	rows = rows[:0]
	var changeRows [][]any
	for _, p := range changes {
		changeRows = append(changeRows, []any{tenant, p.Bundle, p.Path, commitID, string(p.Op), p.Hash})
		if p.Op == store.Deleted {
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM okf_documents WHERE tenant = ? AND bundle = ? AND path = ?`), tenant, p.Bundle, p.Path); err != nil {
				return fmt.Errorf("deleting %s/%s: %w", p.Bundle, p.Path, err)
			}
			continue
		}
		rows = append(rows, []any{tenant, p.Bundle, p.Path, p.Hash})
	}
	if err := s.insert(ctx, tx, `INSERT INTO okf_documents (tenant, bundle, path, hash) VALUES `, 4, rows,
		` ON CONFLICT (tenant, bundle, path) DO UPDATE SET hash = excluded.hash`); err != nil {
		return fmt.Errorf("updating documents: %w", err)
	}
	if err := s.insert(ctx, tx, `INSERT INTO okf_changes (tenant, bundle, path, commit_id, op, hash) VALUES `, 6, changeRows, ``); err != nil {
		return fmt.Errorf("recording changes: %w", err)
	}
	return nil
}

// insert runs a multi-row INSERT in batches.
func (s *Store) insert(ctx context.Context, tx *sql.Tx, head string, ncols int, rows [][]any, tail string) error {
	tuple := "(" + placeholders(ncols) + ")"
	for start := 0; start < len(rows); start += batchRows {
		batch := rows[start:min(start+batchRows, len(rows))]
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, len(batch)*ncols)
		for i, r := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tuple)
			args = append(args, r...)
		}
		b.WriteString(tail)
		if _, err := tx.ExecContext(ctx, s.q(b.String()), args...); err != nil {
			return err
		}
	}
	return nil
}

// nonNil keeps an empty document an empty value rather than NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// querier is what reads need of a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) readCommit(ctx context.Context, q querier, tenant string, id int64) (store.Commit, error) {
	c := store.Commit{ID: id}
	var ns int64
	err := q.QueryRowContext(ctx, s.q(`SELECT message, created_ns FROM okf_commits WHERE tenant = ? AND id = ?`), tenant, id).Scan(&c.Message, &ns)
	if err != nil {
		return store.Commit{}, fmt.Errorf("tenant %q: reading commit %d: %w", tenant, id, err)
	}
	c.Time = time.Unix(0, ns).UTC()
	return c, nil
}

// head returns a tenant's head commit id, 0 for a tenant without commits.
func (s *Store) head(ctx context.Context, q querier, tenant string) (int64, error) {
	var head int64
	err := q.QueryRowContext(ctx, s.q(`SELECT head FROM okf_tenants WHERE name = ?`), tenant).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("tenant %q: reading head: %w", tenant, err)
	}
	return head, nil
}

// currentHashes returns path → hash for the documents of one bundle.
func (s *Store) currentHashes(ctx context.Context, q querier, tenant, bundle string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT path, hash FROM okf_documents WHERE tenant = ? AND bundle = ?`), tenant, bundle)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: reading bundle %s: %w", tenant, bundle, err)
	}
	defer rows.Close()
	cur := map[string]string{}
	for rows.Next() {
		var p, h string
		if err := rows.Scan(&p, &h); err != nil {
			return nil, fmt.Errorf("tenant %q: reading bundle %s: %w", tenant, bundle, err)
		}
		cur[p] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tenant %q: reading bundle %s: %w", tenant, bundle, err)
	}
	return cur, nil
}

// currentHash returns the hash of one document, "" when it does not exist.
func (s *Store) currentHash(ctx context.Context, q querier, tenant, bundle, path string) (string, error) {
	var h string
	err := q.QueryRowContext(ctx, s.q(`SELECT hash FROM okf_documents WHERE tenant = ? AND bundle = ? AND path = ?`), tenant, bundle, path).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("tenant %q: reading %s/%s: %w", tenant, bundle, path, err)
	}
	return h, nil
}

func validate(tenant, bundle string, paths ...string) error {
	if err := store.ValidateTenant(tenant); err != nil {
		return err
	}
	if err := store.ValidateBundle(bundle); err != nil {
		return err
	}
	for _, p := range paths {
		if err := store.ValidatePath(p); err != nil {
			return fmt.Errorf("bundle %s: %w", bundle, err)
		}
	}
	return nil
}

// cleanMessage makes a commit message storable as text everywhere:
// PostgreSQL refuses NUL bytes and invalid UTF-8.
func cleanMessage(m string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(m, "\x00", ""), "\uFFFD")
}
