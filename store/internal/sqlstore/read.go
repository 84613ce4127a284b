package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/okf-tools/okf/store"
)

// Tenants implements store.Store.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM okf_tenants WHERE head > 0`)
	if err != nil {
		return nil, fmt.Errorf("listing tenants: %w", err)
	}
	names, err := scanStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("listing tenants: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// Bundles implements store.Store.
func (s *Store) Bundles(ctx context.Context, tenant string) ([]string, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT DISTINCT bundle FROM okf_documents WHERE tenant = ?`), tenant)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: listing bundles: %w", tenant, err)
	}
	names, err := scanStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: listing bundles: %w", tenant, err)
	}
	sort.Strings(names)
	return names, nil
}

func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Documents implements store.Store.
func (s *Store) Documents(ctx context.Context, tenant string) (int64, []store.Document, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return 0, nil, err
	}
	tx, err := s.db.BeginTx(ctx, &s.dialect.ReadTx)
	if err != nil {
		return 0, nil, fmt.Errorf("tenant %q: reading documents: %w", tenant, err)
	}
	defer tx.Rollback()
	head, err := s.head(ctx, tx, tenant)
	if err != nil {
		return 0, nil, err
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT d.bundle, d.path, d.hash, b.content
		FROM okf_documents d JOIN okf_blobs b ON b.hash = d.hash WHERE d.tenant = ?`), tenant)
	if err != nil {
		return 0, nil, fmt.Errorf("tenant %q: reading documents: %w", tenant, err)
	}
	defer rows.Close()
	var docs []store.Document
	for rows.Next() {
		var d store.Document
		if err := rows.Scan(&d.Bundle, &d.Path, &d.Hash, &d.Content); err != nil {
			return 0, nil, fmt.Errorf("tenant %q: reading documents: %w", tenant, err)
		}
		d.Content = nonNil(d.Content)
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("tenant %q: reading documents: %w", tenant, err)
	}
	// Sorted here, by code unit, rather than by ORDER BY, whose text order
	// follows the database's collation.
	sort.Slice(docs, func(i, j int) bool {
		if docs[i].Bundle != docs[j].Bundle {
			return docs[i].Bundle < docs[j].Bundle
		}
		return docs[i].Path < docs[j].Path
	})
	return head, docs, nil
}

// Document implements store.Store.
func (s *Store) Document(ctx context.Context, tenant, bundle, path string) (store.Document, error) {
	if err := validate(tenant, bundle, path); err != nil {
		return store.Document{}, err
	}
	d := store.Document{Bundle: bundle, Path: path}
	err := s.db.QueryRowContext(ctx, s.q(`SELECT d.hash, b.content FROM okf_documents d JOIN okf_blobs b ON b.hash = d.hash
		WHERE d.tenant = ? AND d.bundle = ? AND d.path = ?`), tenant, bundle, path).Scan(&d.Hash, &d.Content)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Document{}, fmt.Errorf("tenant %q: document %s/%s: %w", tenant, bundle, path, store.ErrNotFound)
	}
	if err != nil {
		return store.Document{}, fmt.Errorf("tenant %q: reading %s/%s: %w", tenant, bundle, path, err)
	}
	d.Content = nonNil(d.Content)
	return d, nil
}

// Head implements store.Store.
func (s *Store) Head(ctx context.Context, tenant string) (store.Commit, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return store.Commit{}, err
	}
	head, err := s.head(ctx, s.db, tenant)
	if err != nil || head == 0 {
		return store.Commit{}, err
	}
	return s.readCommit(ctx, s.db, tenant, head)
}

// History implements store.Store.
func (s *Store) History(ctx context.Context, tenant string, limit int) ([]store.Commit, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	head, err := s.head(ctx, s.db, tenant)
	if err != nil || head == 0 {
		return nil, err
	}
	// Commits are numbered without gaps, so the newest limit of them are
	// a range of ids.
	oldest := int64(1)
	if limit > 0 && head-int64(limit)+1 > oldest {
		oldest = head - int64(limit) + 1
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, message, created_ns FROM okf_commits
		WHERE tenant = ? AND id >= ? AND id <= ? ORDER BY id DESC`), tenant, oldest, head)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: reading history: %w", tenant, err)
	}
	var commits []store.Commit
	index := map[int64]int{}
	for rows.Next() {
		c := store.Commit{Changed: true}
		var ns int64
		if err := rows.Scan(&c.ID, &c.Message, &ns); err != nil {
			rows.Close()
			return nil, fmt.Errorf("tenant %q: reading history: %w", tenant, err)
		}
		c.Time = time.Unix(0, ns).UTC()
		index[c.ID] = len(commits)
		commits = append(commits, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tenant %q: reading history: %w", tenant, err)
	}
	rows, err = s.db.QueryContext(ctx, s.q(`SELECT commit_id, bundle, path, op, hash FROM okf_changes
		WHERE tenant = ? AND commit_id >= ? AND commit_id <= ?`), tenant, oldest, head)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: reading changes: %w", tenant, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var ch store.Change
		if err := rows.Scan(&id, &ch.Bundle, &ch.Path, &ch.Op, &ch.Hash); err != nil {
			return nil, fmt.Errorf("tenant %q: reading changes: %w", tenant, err)
		}
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("tenant %q: change of %s/%s names commit %d, which is missing", tenant, ch.Bundle, ch.Path, id)
		}
		commits[i].Changes = append(commits[i].Changes, ch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tenant %q: reading changes: %w", tenant, err)
	}
	for _, c := range commits {
		sort.Slice(c.Changes, func(i, j int) bool {
			if c.Changes[i].Bundle != c.Changes[j].Bundle {
				return c.Changes[i].Bundle < c.Changes[j].Bundle
			}
			return c.Changes[i].Path < c.Changes[j].Path
		})
	}
	return commits, nil
}

// DocumentAt implements store.Store.
func (s *Store) DocumentAt(ctx context.Context, tenant string, commitID int64, bundle, path string) (store.Document, error) {
	if err := validate(tenant, bundle, path); err != nil {
		return store.Document{}, err
	}
	head, err := s.head(ctx, s.db, tenant)
	if err != nil {
		return store.Document{}, err
	}
	if commitID < 1 || commitID > head {
		return store.Document{}, fmt.Errorf("tenant %q: commit %d: %w (head is %d)", tenant, commitID, store.ErrNotFound, head)
	}
	var op store.Op
	d := store.Document{Bundle: bundle, Path: path}
	err = s.db.QueryRowContext(ctx, s.q(`SELECT c.op, c.hash, b.content FROM okf_changes c JOIN okf_blobs b ON b.hash = c.hash
		WHERE c.tenant = ? AND c.bundle = ? AND c.path = ? AND c.commit_id <= ?
		ORDER BY c.commit_id DESC LIMIT 1`), tenant, bundle, path, commitID).Scan(&op, &d.Hash, &d.Content)
	if errors.Is(err, sql.ErrNoRows) || err == nil && op == store.Deleted {
		return store.Document{}, fmt.Errorf("tenant %q: document %s/%s at commit %d: %w", tenant, bundle, path, commitID, store.ErrNotFound)
	}
	if err != nil {
		return store.Document{}, fmt.Errorf("tenant %q: reading %s/%s at commit %d: %w", tenant, bundle, path, commitID, err)
	}
	d.Content = nonNil(d.Content)
	return d, nil
}

// Snapshot implements store.Store.
func (s *Store) Snapshot(ctx context.Context, tenant string) (int64, string, []byte, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return 0, "", nil, err
	}
	var (
		id     int64
		digest string
		blob   []byte
	)
	err := s.db.QueryRowContext(ctx, s.q(`SELECT s.commit_id, s.digest, b.content FROM okf_snapshots s JOIN okf_blobs b ON b.hash = s.blob_hash
		WHERE s.tenant = ? ORDER BY s.commit_id DESC LIMIT 1`), tenant).Scan(&id, &digest, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil, fmt.Errorf("tenant %q: snapshot: %w", tenant, store.ErrNotFound)
	}
	if err != nil {
		return 0, "", nil, fmt.Errorf("tenant %q: reading snapshot: %w", tenant, err)
	}
	return id, digest, nonNil(blob), nil
}

// Rebind numbers ? placeholders as $1, $2, … for PostgreSQL. The queries of
// this package carry no ? inside literals.
func Rebind(query string) string {
	b := make([]byte, 0, len(query)+16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b = append(b, query[i])
			continue
		}
		n++
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(b)
}
