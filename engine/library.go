package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
	"github.com/okf-tools/okf/store"
)

// View is one tenant's knowledge as of one snapshot, with its search
// index. A request reads one view throughout, so it never mixes two
// snapshots. Treat it as immutable.
type View struct {
	Tenant string
	Snap   *readmodel.Snapshot
	// index is built on first use: okf get and okf manifest never search,
	// and building it is most of what opening a view costs them.
	index func() *search.Index
	// Commit is the store commit the snapshot compiles; 0 for a folder and
	// for a tenant with no commits.
	Commit int64
	// Diagnostics are what the compiler noticed, when this process
	// compiled the snapshot (nil when it was read back from the store).
	Diagnostics []readmodel.Diagnostic

	staleable []int // concepts with a stale_after date

	// emb, when set, embeds the view's questions, and vectors are its
	// concepts' (dense.go); both are set before the index is built.
	emb     *Embeddings
	vectors [][]float32
}

// NewView is the view of a snapshot compiled outside a library: one
// bundle of a tenant for an agent, a folder for a reading command.
func NewView(tenant string, snap *readmodel.Snapshot) *View { return newView(tenant, snap, 0, nil) }

func newView(tenant string, snap *readmodel.Snapshot, commit int64, diags []readmodel.Diagnostic) *View {
	v := &View{Tenant: tenant, Snap: snap, Commit: commit, Diagnostics: diags}
	v.index = sync.OnceValue(func() *search.Index {
		ix := search.Build(snap)
		if v.vectors != nil {
			ix.SetVectors(v.vectors)
		}
		return ix
	})
	for i := range snap.Concepts {
		if snap.Concepts[i].StaleAfter != "" {
			v.staleable = append(v.staleable, i)
		}
	}
	return v
}

// servedView is a view a library serves: its concepts have their vectors
// when the library has embeddings (from cache), and its index is built
// before the first request, which would otherwise wait for it.
func (l *Library) servedView(ctx context.Context, tenant string, snap *readmodel.Snapshot, commit int64, diags []readmodel.Diagnostic, cache embed.Cache) *View {
	v := newView(tenant, snap, commit, diags)
	if l.emb != nil {
		v.emb, v.vectors = l.emb, l.emb.fill(ctx, tenant, snap, cache)
	}
	v.Index()
	return v
}

// Index is the view's search index, built the first time it is asked for.
func (v *View) Index() *search.Index { return v.index() }

// ETag is the entity tag of every read of the view at now: the snapshot
// digest, and, once concepts have gone stale, how many, because a stale
// status is decided at read time and changes what a read returns. The
// count only grows while the digest stays, so it tells every change.
func (v *View) ETag(now time.Time) string {
	stale := 0
	for _, i := range v.staleable {
		if v.Snap.Concepts[i].Stale(now) {
			stale++
		}
	}
	if stale == 0 {
		return `"` + v.Snap.Digest + `"`
	}
	return fmt.Sprintf(`"%s+%dstale"`, v.Snap.Digest, stale)
}

// ErrReadOnly is returned by writes to a library that reads a folder.
var ErrReadOnly = errors.New("this knowledge is read from a folder, not the store: edit the files instead")

// ErrNoTenant is returned for a tenant a folder library does not serve.
var ErrNoTenant = errors.New("no such tenant here")

// Library finds each tenant's current view: in the store, compiling the
// head commit when it has no stored snapshot yet, or in a folder that is
// compiled on start and again whenever Reload is called. It is safe for
// concurrent use.
type Library struct {
	st     store.Store // nil for a folder
	folder string      // the one tenant of a folder library
	emb    *Embeddings // nil ranks by BM25 alone

	mu      sync.Mutex
	tenants map[string]*tenantState
}

type tenantState struct {
	compile sync.Mutex // one compile at a time; guards builder and good
	builder *readmodel.Builder
	view    atomic.Pointer[View]
	// good holds, for a folder, the last bytes of each document that
	// compiled without a diagnostic, by bundle and path.
	good map[docKey][]byte
	// vectors is a folder's embedding cache, which lives as long as the
	// library: a reload embeds only the concepts that changed.
	vectors *embed.Memory
}

type docKey struct{ bundle, path string }

// LibraryOption sets up a library.
type LibraryOption func(*Library)

// WithEmbeddings ranks a library's searches by meaning too (dense.go).
func WithEmbeddings(e *Embeddings) LibraryOption { return func(l *Library) { l.emb = e } }

// NewStoreLibrary serves every tenant of a store.
func NewStoreLibrary(st store.Store, opts ...LibraryOption) *Library {
	l := &Library{st: st, tenants: map[string]*tenantState{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// NewFolderLibrary serves documents read from a folder as one tenant;
// Reload replaces them.
func NewFolderLibrary(tenant string, docs []readmodel.Doc, opts ...LibraryOption) (*Library, readmodel.Stats) {
	l := &Library{folder: tenant, tenants: map[string]*tenantState{}}
	for _, o := range opts {
		o(l)
	}
	st := l.Reload(docs)
	return l, st
}

// Current is the current view of one tenant, as a toolbox reads it.
func (l *Library) Current(tenant string) Current {
	return func(ctx context.Context) (*View, error) { return l.View(ctx, tenant) }
}

// Writable reports whether the library takes writes (it reads a store).
func (l *Library) Writable() bool { return l.st != nil }

func (l *Library) state(tenant string) *tenantState {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.tenants[tenant]
	if ts == nil {
		ts = &tenantState{builder: readmodel.NewBuilder()}
		l.tenants[tenant] = ts
	}
	return ts
}

// Reload compiles a folder library's documents anew; the next read sees
// them. Documents whose bytes did not change are not parsed again. A
// document that now compiles with a diagnostic (a file caught half
// written, its frontmatter unclosed) is served as it last compiled
// without one, if it ever did; its diagnostics are returned, saying so.
func (l *Library) Reload(docs []readmodel.Doc) readmodel.Stats {
	ts := l.state(l.folder)
	ts.compile.Lock()
	defer ts.compile.Unlock()
	snap, st := ts.builder.Build(l.folder, docs)
	flawed := flawedDocs(st)
	var kept []readmodel.Diagnostic
	for _, d := range st.Diagnostics {
		if _, ok := ts.good[docKey{d.Bundle, d.Path}]; ok {
			d.Message += " (still serving its last good version)"
			kept = append(kept, d)
		}
	}
	if len(kept) > 0 {
		served := make([]readmodel.Doc, len(docs))
		for i, d := range docs {
			served[i] = d
			if good, ok := ts.good[docKey{d.Bundle, d.Path}]; ok && flawed[docKey{d.Bundle, d.Path}] {
				served[i].Content = good
			}
		}
		docs = served
		snap, st = ts.builder.Build(l.folder, docs)
		flawed = flawedDocs(st)
		st.Diagnostics = append(st.Diagnostics, kept...)
	}
	good := make(map[docKey][]byte, len(docs))
	for _, d := range docs {
		if k := (docKey{d.Bundle, d.Path}); !flawed[k] {
			good[k] = d.Content
		}
	}
	ts.good = good
	if ts.vectors == nil {
		ts.vectors = embed.NewMemory()
	}
	ts.view.Store(l.servedView(context.Background(), l.folder, snap, 0, st.Diagnostics, ts.vectors))
	return st
}

// flawedDocs are the documents a build has diagnostics for.
func flawedDocs(st readmodel.Stats) map[docKey]bool {
	flawed := map[docKey]bool{}
	for _, d := range st.Diagnostics {
		flawed[docKey{d.Bundle, d.Path}] = true
	}
	return flawed
}

// View returns a tenant's current view. In the store, it asks for the head
// commit on every call, so a commit made by another process is seen by the
// next read; a tenant without commits reads as empty.
func (l *Library) View(ctx context.Context, tenant string) (*View, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	if l.st == nil {
		if tenant != l.folder {
			return nil, fmt.Errorf("%w: tenant %s (a folder is read as the one tenant %s)", ErrNoTenant, tenant, l.folder)
		}
		return l.state(tenant).view.Load(), nil
	}
	head, err := l.st.Head(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", tenant, err)
	}
	ts := l.state(tenant)
	if v := ts.view.Load(); v != nil && v.Commit == head.ID {
		return v, nil
	}
	return l.refresh(ctx, tenant, ts, head.ID)
}

// refresh compiles the view of a tenant's head commit.
func (l *Library) refresh(ctx context.Context, tenant string, ts *tenantState, head int64) (*View, error) {
	ts.compile.Lock()
	defer ts.compile.Unlock()
	if v := ts.view.Load(); v != nil && v.Commit >= head {
		return v, nil // compiled while this call waited
	}
	snap, at, diags, err := HeadSnapshot(ctx, l.st, tenant, head, ts.builder)
	if err != nil {
		return nil, err
	}
	v := l.servedView(ctx, tenant, snap, at, diags, embed.StoreCache(l.st, tenant))
	ts.view.Store(v)
	return v, nil
}

// Compile builds the read model of documents with b and encodes it, as an
// import does before it stores the snapshot.
func Compile(b *readmodel.Builder, tenant string, docs []readmodel.Doc) (*readmodel.Snapshot, []byte, readmodel.Stats) {
	snap, stats := b.Build(tenant, docs)
	// The encoding is as large as the snapshot: collect the build's garbage
	// first, so that the collector's next goal is not the build's peak plus
	// the encoding (at 20,000 concepts, 60 MB of peak memory).
	runtime.GC()
	return snap, snap.Encode(), stats
}

// HeadSnapshot returns the read model of a tenant's head commit (head; 0
// for a tenant without commits, which reads as empty) and the commit it
// compiles: the stored snapshot when it is current, else the documents
// compiled with b and stored, so that the next reader, in this process or
// another, does not compile again. Diagnostics come only from a compile.
func HeadSnapshot(ctx context.Context, st store.Store, tenant string, head int64, b *readmodel.Builder) (*readmodel.Snapshot, int64, []readmodel.Diagnostic, error) {
	if head == 0 {
		snap, _ := readmodel.Build(tenant, nil)
		return snap, 0, nil, nil
	}
	if id, digest, blob, err := st.Snapshot(ctx, tenant); err == nil && id == head {
		if snap, derr := readmodel.Decode(blob); derr == nil && snap.Digest == digest {
			return snap, id, nil, nil
		}
	}
	at, docs, err := st.Documents(ctx, tenant)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("reading tenant %s: %w", tenant, err)
	}
	in := make([]readmodel.Doc, len(docs))
	for i, d := range docs {
		in[i] = readmodel.Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content}
	}
	snap, enc, stats := Compile(b, tenant, in)
	if err := st.PutSnapshot(ctx, tenant, at, snap.Digest, enc); err != nil {
		return nil, 0, nil, fmt.Errorf("storing the snapshot of tenant %s: %w", tenant, err)
	}
	return snap, at, stats.Diagnostics, nil
}

// Write creates or replaces one document when its current hash is ifMatch
// ("" for a document that must not exist yet), then compiles the tenant's
// new view, which it returns.
func (l *Library) Write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (store.Commit, *View, error) {
	if l.st == nil {
		return store.Commit{}, nil, ErrReadOnly
	}
	c, err := l.st.Write(ctx, tenant, bundle, path, content, ifMatch)
	if err != nil {
		return c, nil, err
	}
	v, err := l.View(ctx, tenant)
	return c, v, err
}

// Delete removes one document whose current hash is ifMatch, then compiles
// the tenant's new view.
func (l *Library) Delete(ctx context.Context, tenant, bundle, path, ifMatch string) (store.Commit, *View, error) {
	if l.st == nil {
		return store.Commit{}, nil, ErrReadOnly
	}
	c, err := l.st.Delete(ctx, tenant, bundle, path, ifMatch)
	if err != nil {
		return c, nil, err
	}
	v, err := l.View(ctx, tenant)
	return c, v, err
}

// Documents lists a tenant's current documents with the head commit.
func (l *Library) Documents(ctx context.Context, tenant string) (int64, []store.Document, error) {
	if l.st == nil {
		return 0, nil, ErrReadOnly
	}
	return l.st.Documents(ctx, tenant)
}

// Document returns one current document.
func (l *Library) Document(ctx context.Context, tenant, bundle, path string) (store.Document, error) {
	if l.st == nil {
		return store.Document{}, ErrReadOnly
	}
	return l.st.Document(ctx, tenant, bundle, path)
}
