package dsn

import "sync"

// Registry holds one T for each engine whose support lives in a package
// of its own (DuckDB's driver): that package registers it when imported,
// so that programs and tests that do not import it do not link it. The
// zero value is ready; a fixed array, so that registering from an init
// allocates nothing.
type Registry[T any] struct {
	mu      sync.Mutex
	engines [4]Engine
	items   [4]T
}

// Register makes item the one of engine e, replacing any before it.
func (r *Registry[T]) Register(e Engine, item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, have := range r.engines {
		if have == e || have == None {
			r.engines[i], r.items[i] = e, item
			return
		}
	}
	panic("dsn: too many registered engines")
}

// Lookup returns the item of engine e, and whether one is registered.
func (r *Registry[T]) Lookup(e Engine) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, have := range r.engines {
		if have == e && e != None {
			return r.items[i], true
		}
	}
	var zero T
	return zero, false
}
