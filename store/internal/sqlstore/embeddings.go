package sqlstore

import (
	"context"
	"fmt"

	"github.com/okf-tools/okf/store"
)

// batchKeys bounds the keys of one IN list, well under SQLite's and
// PostgreSQL's limits on bound parameters.
const batchKeys = 500

// checkEmbeddings validates what both embedding calls take.
func checkEmbeddings(tenant, model string) error {
	if err := store.ValidateTenant(tenant); err != nil {
		return err
	}
	return store.ValidateModel(model)
}

// Embeddings implements store.Store.
func (s *Store) Embeddings(ctx context.Context, tenant, model string, keys []string) (map[string][]byte, error) {
	if err := checkEmbeddings(tenant, model); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(keys))
	uniq := make([]string, 0, len(keys))
	for _, k := range keys {
		if err := store.ValidateEmbeddingKey(k); err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	out := map[string][]byte{}
	for start := 0; start < len(uniq); start += batchKeys {
		batch := uniq[start:min(start+batchKeys, len(uniq))]
		args := append([]any{tenant, model}, anySlice(batch)...)
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT text_hash, vector FROM okf_embeddings
			WHERE tenant = ? AND model = ? AND text_hash IN (`+placeholders(len(batch))+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("tenant %q: reading embeddings of %s: %w", tenant, model, err)
		}
		for rows.Next() {
			var (
				k   string
				vec []byte
			)
			if err := rows.Scan(&k, &vec); err != nil {
				rows.Close()
				return nil, fmt.Errorf("tenant %q: reading embeddings of %s: %w", tenant, model, err)
			}
			out[k] = vec
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("tenant %q: reading embeddings of %s: %w", tenant, model, err)
		}
	}
	return out, nil
}

// PutEmbeddings implements store.Store.
func (s *Store) PutEmbeddings(ctx context.Context, tenant, model string, vecs map[string][]byte) error {
	if err := checkEmbeddings(tenant, model); err != nil {
		return err
	}
	// Checked and written in key order: the same bad input names the same
	// culprit, and concurrent writers take the rows' locks in one order.
	keys := sortedKeys(vecs)
	rows := make([][]any, 0, len(keys))
	for _, k := range keys {
		if err := store.ValidateEmbeddingKey(k); err != nil {
			return err
		}
		if n := len(vecs[k]); n == 0 || n > store.MaxEmbeddingBytes {
			return store.Invalidf("embedding %s of %s: %d bytes, want 1 to %d", k, model, n, store.MaxEmbeddingBytes)
		}
		rows = append(rows, []any{tenant, model, k, vecs[k]})
	}
	if len(rows) == 0 {
		return nil
	}
	if s.dialect.SerializeWrites {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("tenant %q: storing embeddings of %s: %w", tenant, model, err)
	}
	defer tx.Rollback()
	if err := s.insert(ctx, tx, `INSERT INTO okf_embeddings (tenant, model, text_hash, vector) VALUES `, 4, rows,
		` ON CONFLICT (tenant, model, text_hash) DO UPDATE SET vector = excluded.vector`); err != nil {
		return fmt.Errorf("tenant %q: storing embeddings of %s: %w", tenant, model, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("tenant %q: storing embeddings of %s: %w", tenant, model, err)
	}
	return nil
}
