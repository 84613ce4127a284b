package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/okf-tools/okf/store"
)

// Sync implements store.Store.
func (s *Store) Sync(ctx context.Context, tenant string, bundles map[string]map[string][]byte, message string) (store.Commit, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return store.Commit{}, err
	}
	// Checked in sorted order, so the same bad input always names the
	// same culprit.
	names := sortedKeys(bundles)
	hashes := map[string]map[string]string{}
	for _, name := range names {
		if err := store.ValidateBundle(name); err != nil {
			return store.Commit{}, err
		}
		docs := bundles[name]
		hashes[name] = make(map[string]string, len(docs))
		for _, p := range sortedKeys(docs) {
			if err := store.ValidatePath(p); err != nil {
				return store.Commit{}, fmt.Errorf("bundle %s: %w", name, err)
			}
			// Hashing happens before the tenant is locked, so other
			// writers wait only for the comparison and the writes.
			hashes[name][p] = store.Hash(docs[p])
		}
	}
	if message == "" {
		message = "sync"
	}
	return s.commit(ctx, tenant, message, func(tx *sql.Tx) ([]pending, error) {
		var changes []pending
		for _, name := range names {
			cur, err := s.currentHashes(ctx, tx, tenant, name)
			if err != nil {
				return nil, err
			}
			for p, h := range hashes[name] {
				old, ok := cur[p]
				switch {
				case !ok:
					changes = append(changes, pending{store.Change{Bundle: name, Path: p, Op: store.Added, Hash: h}, bundles[name][p]})
				case old != h:
					changes = append(changes, pending{store.Change{Bundle: name, Path: p, Op: store.Modified, Hash: h}, bundles[name][p]})
				}
			}
			for p, old := range cur {
				if _, keep := hashes[name][p]; !keep {
					changes = append(changes, pending{Change: store.Change{Bundle: name, Path: p, Op: store.Deleted, Hash: old}})
				}
			}
		}
		return changes, nil
	})
}

// Write implements store.Store.
func (s *Store) Write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (store.Commit, error) {
	if err := validate(tenant, bundle, path); err != nil {
		return store.Commit{}, err
	}
	h := store.Hash(content)
	return s.commit(ctx, tenant, "write "+bundle+"/"+path, func(tx *sql.Tx) ([]pending, error) {
		cur, err := s.currentHash(ctx, tx, tenant, bundle, path)
		if err != nil {
			return nil, err
		}
		if ifMatch != store.Unconditional && ifMatch != cur {
			return nil, &store.PreconditionError{Tenant: tenant, Bundle: bundle, Path: path, Expected: ifMatch, Current: cur}
		}
		switch cur {
		case h:
			return nil, nil
		case "":
			return []pending{{store.Change{Bundle: bundle, Path: path, Op: store.Added, Hash: h}, content}}, nil
		}
		return []pending{{store.Change{Bundle: bundle, Path: path, Op: store.Modified, Hash: h}, content}}, nil
	})
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, tenant, bundle, path, ifMatch string) (store.Commit, error) {
	if err := validate(tenant, bundle, path); err != nil {
		return store.Commit{}, err
	}
	return s.commit(ctx, tenant, "delete "+bundle+"/"+path, func(tx *sql.Tx) ([]pending, error) {
		cur, err := s.currentHash(ctx, tx, tenant, bundle, path)
		if err != nil {
			return nil, err
		}
		if cur == "" {
			return nil, fmt.Errorf("tenant %q: document %s/%s: %w", tenant, bundle, path, store.ErrNotFound)
		}
		if ifMatch != store.Unconditional && ifMatch != cur {
			return nil, &store.PreconditionError{Tenant: tenant, Bundle: bundle, Path: path, Expected: ifMatch, Current: cur}
		}
		return []pending{{Change: store.Change{Bundle: bundle, Path: path, Op: store.Deleted, Hash: cur}}}, nil
	})
}

// DeleteBundle implements store.Store.
func (s *Store) DeleteBundle(ctx context.Context, tenant, bundle string) (store.Commit, error) {
	if err := validate(tenant, bundle); err != nil {
		return store.Commit{}, err
	}
	return s.commit(ctx, tenant, "delete bundle "+bundle, func(tx *sql.Tx) ([]pending, error) {
		cur, err := s.currentHashes(ctx, tx, tenant, bundle)
		if err != nil {
			return nil, err
		}
		if len(cur) == 0 {
			return nil, fmt.Errorf("tenant %q: bundle %s: %w", tenant, bundle, store.ErrNotFound)
		}
		changes := make([]pending, 0, len(cur))
		for p, h := range cur {
			changes = append(changes, pending{Change: store.Change{Bundle: bundle, Path: p, Op: store.Deleted, Hash: h}})
		}
		return changes, nil
	})
}

// PutSnapshot implements store.Store.
func (s *Store) PutSnapshot(ctx context.Context, tenant string, commitID int64, digest string, blob []byte) error {
	if err := store.ValidateTenant(tenant); err != nil {
		return err
	}
	if err := checkDigest(digest); err != nil {
		return store.Invalidf("tenant %q: snapshot of commit %d: digest %q: %v", tenant, commitID, digest, err)
	}
	if s.dialect.SerializeWrites {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("tenant %q: storing snapshot: %w", tenant, err)
	}
	defer tx.Rollback()
	// Commits are never removed, so a commit seen here stays valid.
	head, err := s.head(ctx, tx, tenant)
	if err != nil {
		return err
	}
	if commitID < 1 || commitID > head {
		return fmt.Errorf("tenant %q: snapshot for commit %d: %w (head is %d)", tenant, commitID, store.ErrNotFound, head)
	}
	h := store.Hash(blob)
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_blobs (hash, content) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`), h, nonNil(blob)); err != nil {
		return fmt.Errorf("tenant %q: storing snapshot %s: %w", tenant, digest, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO okf_snapshots (tenant, commit_id, digest, blob_hash) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant, commit_id) DO UPDATE SET digest = excluded.digest, blob_hash = excluded.blob_hash`),
		tenant, commitID, digest, h); err != nil {
		return fmt.Errorf("tenant %q: recording snapshot %s of commit %d: %w", tenant, digest, commitID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("tenant %q: storing snapshot %s: %w", tenant, digest, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkDigest accepts the names a snapshot producer may give its bytes:
// short printable ASCII such as a hex hash, optionally "sha256:"-prefixed.
func checkDigest(d string) error {
	if d == "" || len(d) > 128 {
		return fmt.Errorf("want 1 to 128 characters")
	}
	for _, r := range d {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("character %q is not printable ASCII", r)
		}
	}
	return nil
}
