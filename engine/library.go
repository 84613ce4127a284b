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
func servedView(ctx context.Context, emb *Embeddings, tenant string, snap *readmodel.Snapshot, commit int64, diags []readmodel.Diagnostic, cache embed.Cache) *View {
	v := newView(tenant, snap, commit, diags)
	if emb != nil {
		v.emb, v.vectors = emb, emb.fill(ctx, tenant, snap, cache)
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

// Library is the knowledge a server serves, tenant by tenant: a store's
// (StoreLibrary) or a folder's (FolderLibrary). Both are safe for
// concurrent use.
type Library interface {
	// View returns a tenant's current view.
	View(ctx context.Context, tenant string) (*View, error)
	// Writable reports whether the library takes writes and lists its
	// documents; a folder's does not (its files are edited instead), and
	// its Write, Delete, Documents and Document return ErrReadOnly.
	Writable() bool
	// Write creates or replaces one document when its current hash is
	// ifMatch ("" for a document that must not exist yet), then compiles
	// the tenant's new view, which it returns.
	Write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (store.Commit, *View, error)
	// Delete removes one document whose current hash is ifMatch, then
	// compiles the tenant's new view.
	Delete(ctx context.Context, tenant, bundle, path, ifMatch string) (store.Commit, *View, error)
	// Documents lists a tenant's current documents with the head commit.
	Documents(ctx context.Context, tenant string) (int64, []store.Document, error)
	// Document returns one current document.
	Document(ctx context.Context, tenant, bundle, path string) (store.Document, error)
}

// CurrentOf is a tenant's current view in l, as a toolbox reads it.
func CurrentOf(l Library, tenant string) Current {
	return func(ctx context.Context) (*View, error) { return l.View(ctx, tenant) }
}

// tenantState is what a library keeps of one tenant.
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

func newTenantState() *tenantState { return &tenantState{builder: readmodel.NewBuilder()} }

type docKey struct{ bundle, path string }

// LibraryOption sets up a library.
type LibraryOption func(*libraryOptions)

type libraryOptions struct {
	emb *Embeddings // nil ranks by BM25 alone
}

// WithEmbeddings ranks a library's searches by meaning too (dense.go).
func WithEmbeddings(e *Embeddings) LibraryOption { return func(o *libraryOptions) { o.emb = e } }

func options(opts []LibraryOption) libraryOptions {
	var o libraryOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// StoreLibrary serves every tenant of a store: each view is the tenant's
// head commit, its stored snapshot, or the documents compiled (and the
// snapshot stored) when the store has none yet.
type StoreLibrary struct {
	st  store.Store
	emb *Embeddings

	mu      sync.Mutex
	tenants map[string]*tenantState
}

// NewStoreLibrary serves every tenant of a store.
func NewStoreLibrary(st store.Store, opts ...LibraryOption) *StoreLibrary {
	return &StoreLibrary{st: st, emb: options(opts).emb, tenants: map[string]*tenantState{}}
}

func (l *StoreLibrary) state(tenant string) *tenantState {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.tenants[tenant]
	if ts == nil {
		ts = newTenantState()
		l.tenants[tenant] = ts
	}
	return ts
}

// View asks for the tenant's head commit on every call, so a commit made
// by another process is seen by the next read; a tenant without commits
// reads as empty.
func (l *StoreLibrary) View(ctx context.Context, tenant string) (*View, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, err
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

// refresh builds the view of a tenant's head commit.
func (l *StoreLibrary) refresh(ctx context.Context, tenant string, ts *tenantState, head int64) (*View, error) {
	ts.compile.Lock()
	defer ts.compile.Unlock()
	if v := ts.view.Load(); v != nil && v.Commit >= head {
		return v, nil // built while this call waited
	}
	snap, at, diags, err := HeadSnapshot(ctx, l.st, tenant, head, ts.builder)
	if err != nil {
		return nil, err
	}
	v := servedView(ctx, l.emb, tenant, snap, at, diags, embed.StoreCache(l.st, tenant))
	ts.view.Store(v)
	return v, nil
}

// Writable reports true: a store takes writes.
func (l *StoreLibrary) Writable() bool { return true }

// Write stores one document, then builds the tenant's new view.
func (l *StoreLibrary) Write(ctx context.Context, tenant, bundle, path string, content []byte, ifMatch string) (store.Commit, *View, error) {
	c, err := l.st.Write(ctx, tenant, bundle, path, content, ifMatch)
	if err != nil {
		return c, nil, err
	}
	v, err := l.View(ctx, tenant)
	return c, v, err
}

// Delete removes one document, then builds the tenant's new view.
func (l *StoreLibrary) Delete(ctx context.Context, tenant, bundle, path, ifMatch string) (store.Commit, *View, error) {
	c, err := l.st.Delete(ctx, tenant, bundle, path, ifMatch)
	if err != nil {
		return c, nil, err
	}
	v, err := l.View(ctx, tenant)
	return c, v, err
}

// Documents lists a tenant's current documents with the head commit.
func (l *StoreLibrary) Documents(ctx context.Context, tenant string) (int64, []store.Document, error) {
	return l.st.Documents(ctx, tenant)
}

// Document returns one current document.
func (l *StoreLibrary) Document(ctx context.Context, tenant, bundle, path string) (store.Document, error) {
	return l.st.Document(ctx, tenant, bundle, path)
}

// FolderLibrary serves the documents of a folder as one tenant, built on
// start and again whenever Reload is called (Watch calls it on a change).
type FolderLibrary struct {
	tenant string
	emb    *Embeddings
	ts     *tenantState
}

// NewFolderLibrary serves documents read from a folder as one tenant;
// Reload replaces them.
func NewFolderLibrary(tenant string, docs []readmodel.Doc, opts ...LibraryOption) (*FolderLibrary, readmodel.Stats) {
	l := &FolderLibrary{tenant: tenant, emb: options(opts).emb, ts: newTenantState()}
	st := l.Reload(docs)
	return l, st
}

// Reload builds a folder library's documents anew; the next read sees
// them. Documents whose bytes did not change are not parsed again. A
// document that now builds with a diagnostic (a file caught half
// written, its frontmatter unclosed) is served as it last built without
// one, if it ever did; its diagnostics are returned, saying so.
func (l *FolderLibrary) Reload(docs []readmodel.Doc) readmodel.Stats {
	ts := l.ts
	ts.compile.Lock()
	defer ts.compile.Unlock()
	snap, st := ts.builder.Build(l.tenant, docs)
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
		snap, st = ts.builder.Build(l.tenant, docs)
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
	ts.view.Store(servedView(context.Background(), l.emb, l.tenant, snap, 0, st.Diagnostics, ts.vectors))
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

// View returns the folder's view; the folder is its one tenant.
func (l *FolderLibrary) View(_ context.Context, tenant string) (*View, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	if tenant != l.tenant {
		return nil, fmt.Errorf("%w: tenant %s (a folder is read as the one tenant %s)", ErrNoTenant, tenant, l.tenant)
	}
	return l.ts.view.Load(), nil
}

// Writable reports false: a folder's files are edited, not written here.
func (l *FolderLibrary) Writable() bool { return false }

// Write returns ErrReadOnly.
func (l *FolderLibrary) Write(context.Context, string, string, string, []byte, string) (store.Commit, *View, error) {
	return store.Commit{}, nil, ErrReadOnly
}

// Delete returns ErrReadOnly.
func (l *FolderLibrary) Delete(context.Context, string, string, string, string) (store.Commit, *View, error) {
	return store.Commit{}, nil, ErrReadOnly
}

// Documents returns ErrReadOnly.
func (l *FolderLibrary) Documents(context.Context, string) (int64, []store.Document, error) {
	return 0, nil, ErrReadOnly
}

// Document returns ErrReadOnly.
func (l *FolderLibrary) Document(context.Context, string, string, string) (store.Document, error) {
	return store.Document{}, ErrReadOnly
}

// Build builds the read model of documents with b and encodes it, as an
// import does before it stores the snapshot.
func Build(b *readmodel.Builder, tenant string, docs []readmodel.Doc) (*readmodel.Snapshot, []byte, readmodel.Stats) {
	snap, stats := b.Build(tenant, docs)
	// The encoding is as large as the snapshot: collect the build's garbage
	// first, so that the collector's next goal is not the build's peak plus
	// the encoding (at 20,000 concepts, 60 MB of peak memory).
	runtime.GC()
	return snap, snap.Encode(), stats
}

// HeadSnapshot returns the read model of a tenant's head commit (head; 0
// for a tenant without commits, which reads as empty) and the commit it
// builds: the stored snapshot when it is current, else the documents
// built with b and stored, so that the next reader, in this process or
// another, does not build again. Diagnostics come only from a build.
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
	snap, enc, stats := Build(b, tenant, in)
	if err := st.PutSnapshot(ctx, tenant, at, snap.Digest, enc); err != nil {
		return nil, 0, nil, fmt.Errorf("storing the snapshot of tenant %s: %w", tenant, err)
	}
	return snap, at, stats.Diagnostics, nil
}
