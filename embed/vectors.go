package embed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store"
)

// MaxTextRunes bounds the text embedded for a concept: its title and
// summary, then the start of its body. What a concept is about is said
// first, and endpoints cut or refuse long inputs (OpenAI's at 8,192
// tokens, many local models' at 512).
const MaxTextRunes = 2000

// Text is the one text embedded for a concept: its title (its id when it
// has none), its summary, then its body, cut at MaxTextRunes, valid
// UTF-8. An unchanged concept gives the same text, so the same Key.
func Text(s *readmodel.Snapshot, c *readmodel.Concept) string {
	var b strings.Builder
	title := strings.TrimSpace(c.Title)
	if title == "" {
		title = c.ID
	}
	b.WriteString(title)
	if sum := strings.TrimSpace(c.Summary); sum != "" && sum != "-" {
		b.WriteString("\n")
		b.WriteString(sum)
	}
	// More bytes of body than the cut can keep are never copied.
	body := s.Body(c)
	body = body[:min(len(body), utf8.UTFMax*MaxTextRunes)]
	if t := strings.TrimSpace(string(body)); t != "" {
		b.WriteString("\n\n")
		b.WriteString(t)
	}
	text := strings.ToValidUTF8(b.String(), "\uFFFD")
	n := 0
	for i := range text {
		if n == MaxTextRunes {
			return text[:i]
		}
		n++
	}
	return text
}

// Key is the cache key of a text: its SHA-256, in hex.
func Key(text string) string { return store.Hash([]byte(text)) }

// Cache keeps vectors by model and text key.
type Cache interface {
	// Get returns the vectors it holds of the keys, by key.
	Get(ctx context.Context, model string, keys []string) (map[string][]float32, error)
	// Put keeps vectors, replacing those of the same keys.
	Put(ctx context.Context, model string, vecs map[string][]float32) error
}

// Memory is a Cache in memory: a folder's, which lives as long as the
// process serving it, and tests'. It is safe for concurrent use.
type Memory struct {
	mu sync.Mutex
	m  map[string]map[string][]float32 // model → key → vector
}

// NewMemory returns an empty memory cache.
func NewMemory() *Memory { return &Memory{m: map[string]map[string][]float32{}} }

// Get implements Cache.
func (m *Memory) Get(_ context.Context, model string, keys []string) (map[string][]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]float32{}
	for _, k := range keys {
		if v, ok := m.m[model][k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// Put implements Cache.
func (m *Memory) Put(_ context.Context, model string, vecs map[string][]float32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m[model] == nil {
		m.m[model] = map[string][]float32{}
	}
	for k, v := range vecs {
		m.m[model][k] = v
	}
	return nil
}

// Len returns how many vectors it holds of a model.
func (m *Memory) Len(model string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m[model])
}

// StoreCache is the embedding cache of one tenant of a store.
func StoreCache(st store.Store, tenant string) Cache { return storeCache{st, tenant} }

type storeCache struct {
	st     store.Store
	tenant string
}

func (c storeCache) Get(ctx context.Context, model string, keys []string) (map[string][]float32, error) {
	raw, err := c.st.Embeddings(ctx, c.tenant, model, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(raw))
	for k, b := range raw {
		// A vector that does not decode is left out, so it is embedded
		// again and replaced.
		if v, err := DecodeVector(b); err == nil && len(v) > 0 {
			out[k] = v
		}
	}
	return out, nil
}

func (c storeCache) Put(ctx context.Context, model string, vecs map[string][]float32) error {
	raw := make(map[string][]byte, len(vecs))
	for k, v := range vecs {
		raw[k] = EncodeVector(v)
	}
	return c.st.PutEmbeddings(ctx, c.tenant, model, raw)
}

// Vectors are the vectors of a snapshot's concepts as one model gives
// them: each concept's text key, and its unit vector (nil while it has
// none), in snapshot order.
type Vectors struct {
	Model string
	Dim   int
	Keys  []string
	Vecs  [][]float32
}

// NewVectors keys a snapshot's concepts for a model, with no vectors yet.
func NewVectors(model string, s *readmodel.Snapshot) *Vectors {
	v := &Vectors{Model: model, Keys: make([]string, len(s.Concepts)), Vecs: make([][]float32, len(s.Concepts))}
	for i := range s.Concepts {
		v.Keys[i] = Key(Text(s, &s.Concepts[i]))
	}
	return v
}

// Count returns how many concepts have a vector.
func (v *Vectors) Count() int {
	n := 0
	for _, x := range v.Vecs {
		if x != nil {
			n++
		}
	}
	return n
}

// fillChunk is how many texts are embedded between two writes to the
// cache, so that an import that fails half way keeps what it paid for.
const fillChunk = 1024

// Fill gives every concept its vector: those the cache holds of the model
// for the same text are reused, the rest embedded (each distinct text
// once) and put in the cache. On an error, the concepts it had vectors
// for by then keep them: a caller may serve those.
func (v *Vectors) Fill(ctx context.Context, c *Client, s *readmodel.Snapshot, cache Cache) (Usage, error) {
	var u Usage
	if c.Name() != v.Model {
		return u, fmt.Errorf("embeddings: vectors of model %s filled by a client of %s", v.Model, c.Name())
	}
	first := map[string]int{} // key → its first concept
	var keys []string
	for i, k := range v.Keys {
		if _, ok := first[k]; !ok {
			first[k] = i
			keys = append(keys, k)
		}
	}
	have, err := cache.Get(ctx, v.Model, keys)
	if err != nil {
		return u, fmt.Errorf("embeddings: reading the cache of %s: %w", v.Model, err)
	}
	// The cache's vectors are of one dimension, the first concept's: when
	// they are not, they are not all of this model, and none is trusted.
	for _, k := range keys {
		if x, ok := have[k]; ok {
			if v.Dim == 0 {
				v.Dim = len(x)
			} else if len(x) != v.Dim {
				have, v.Dim = nil, 0
				break
			}
		}
	}
	var missing []string
	for _, k := range keys {
		if _, ok := have[k]; !ok {
			missing = append(missing, k)
		}
	}
	u.Reused = len(have)
	got := make(map[string][]float32, len(keys))
	defer func() {
		for k, x := range have {
			got[k] = x
		}
		for i, k := range v.Keys {
			v.Vecs[i] = got[k]
		}
	}()
	checked := false
	for len(missing) > 0 {
		chunk := missing[:min(fillChunk, len(missing))]
		missing = missing[len(chunk):]
		texts := make([]string, len(chunk))
		for i, k := range chunk {
			texts[i] = Text(s, &s.Concepts[first[k]])
		}
		vecs, cu, err := c.Embed(ctx, texts)
		u = u.Add(cu)
		if err != nil {
			return u, err
		}
		if checked && len(vecs[0]) != v.Dim {
			return u, fmt.Errorf("embeddings %s (model %s): vectors of %d dimensions after %d", c.Endpoint(), v.Model, len(vecs[0]), v.Dim)
		}
		if !checked {
			checked = true
			if v.Dim != 0 && len(vecs[0]) != v.Dim {
				// The endpoint gives this model's name to vectors of another
				// dimension now: what the cache holds was another model's.
				for _, k := range keys {
					if _, ok := have[k]; ok {
						missing = append(missing, k)
					}
				}
				have, u.Reused = nil, 0
			}
			v.Dim = len(vecs[0])
		}
		put := make(map[string][]float32, len(chunk))
		for i, k := range chunk {
			put[k], got[k] = vecs[i], vecs[i]
		}
		if err := cache.Put(ctx, v.Model, put); err != nil {
			return u, fmt.Errorf("embeddings: keeping %d vectors of %s: %w", len(put), v.Model, err)
		}
	}
	return u, nil
}

// Fill returns a vector for each concept of a snapshot, in snapshot
// order, reusing what the cache holds and embedding the rest (see
// Vectors.Fill).
func Fill(ctx context.Context, c *Client, s *readmodel.Snapshot, cache Cache) ([][]float32, Usage, error) {
	v := NewVectors(c.Name(), s)
	u, err := v.Fill(ctx, c, s, cache)
	return v.Vecs, u, err
}
