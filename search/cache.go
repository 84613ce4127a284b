package search

import (
	"sync"

	"github.com/okf-tools/okf/readmodel"
)

// Cache keeps the index of the latest snapshot it was asked about and
// builds a new one only when the snapshot's digest changes, so a sync that
// changed nothing costs no rebuild. It is safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	ix     *Index
	builds int
}

// Index returns the index of s, building it if s is not the snapshot the
// cache last indexed.
func (c *Cache) Index(s *readmodel.Snapshot) *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ix == nil || c.ix.snap.Digest != s.Digest {
		c.ix = Build(s)
		c.builds++
	}
	return c.ix
}

// Builds reports how many indexes the cache has built.
func (c *Cache) Builds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}
