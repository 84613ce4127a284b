package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store"
)

// A Source is where a tenant's knowledge is read from: a folder of
// bundles (Folder) or a store's head commit (StoreHead). Open reads one
// into a View; every command, the agent and okf serve open knowledge
// through it, so the read model is built in one place.
type Source interface {
	// Tenant names whose knowledge it is.
	Tenant() string
	// Snapshot returns the knowledge as a snapshot: of every bundle, or
	// of the one named bundle alone (its searches then rank within it).
	// Diagnostics are those of the documents this call compiled.
	Snapshot(ctx context.Context, bundle string) (*readmodel.Snapshot, []readmodel.Diagnostic, error)
	// Bundles names the bundles it holds, sorted.
	Bundles(ctx context.Context) ([]string, error)
}

// Folder is the knowledge of dir, a bundle folder or a folder of bundle
// folders, as tenant.
func Folder(dir, tenant string) Source { return folderSource{dir: dir, tenant: tenant} }

type folderSource struct{ dir, tenant string }

func (f folderSource) Tenant() string { return f.tenant }

func (f folderSource) Bundles(context.Context) ([]string, error) {
	bundles, err := okf.FindBundles(f.dir)
	if err != nil {
		return nil, err
	}
	return folderNames(bundles), nil
}

func (f folderSource) Snapshot(_ context.Context, bundle string) (*readmodel.Snapshot, []readmodel.Diagnostic, error) {
	bundles, err := okf.FindBundles(f.dir)
	if err != nil {
		return nil, nil, err
	}
	if bundle != "" {
		var one []okf.BundleFolder
		for _, b := range bundles {
			if b.Name == bundle {
				one = append(one, b)
			}
		}
		if len(one) == 0 {
			return nil, nil, noBundle(bundle, folderNames(bundles))
		}
		bundles = one
	}
	docs, err := ReadBundles(bundles)
	if err != nil {
		return nil, nil, err
	}
	snap, st := readmodel.Build(f.tenant, docs)
	return snap, st.Diagnostics, nil
}

func folderNames(bundles []okf.BundleFolder) []string {
	names := make([]string, len(bundles))
	for i, b := range bundles {
		names[i] = b.Name
	}
	return names
}

// StoreHead is the knowledge of a tenant's head commit in st. The whole
// tenant's snapshot is the stored one, compiled and stored first when the
// store has none yet; one bundle's is compiled from its documents.
func StoreHead(st store.Store, tenant string) Source { return &storeSource{st: st, tenant: tenant} }

type storeSource struct {
	st     store.Store
	tenant string
	// whole is the head snapshot once read: an agent asks for the bundles,
	// then for one of them, and decoding a stored snapshot costs
	// milliseconds a thousand concepts. A source is read for one command.
	whole *readmodel.Snapshot
	diags []readmodel.Diagnostic
}

func (s *storeSource) Tenant() string { return s.tenant }

func (s *storeSource) head(ctx context.Context) (int64, error) {
	head, err := s.st.Head(ctx, s.tenant)
	if err != nil {
		return 0, fmt.Errorf("tenant %s: %w", s.tenant, err)
	}
	if head.ID == 0 {
		return 0, fmt.Errorf("tenant %s has no knowledge yet: run 'okf import <dir>' first, or pass --dir", s.tenant)
	}
	return head.ID, nil
}

func (s *storeSource) Bundles(ctx context.Context) ([]string, error) {
	snap, _, err := s.Snapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	return snapshotBundles(snap), nil
}

func (s *storeSource) Snapshot(ctx context.Context, bundle string) (*readmodel.Snapshot, []readmodel.Diagnostic, error) {
	if s.whole == nil {
		head, err := s.head(ctx)
		if err != nil {
			return nil, nil, err
		}
		if s.whole, _, s.diags, err = HeadSnapshot(ctx, s.st, s.tenant, head, new(readmodel.Builder)); err != nil {
			return nil, nil, err
		}
	}
	snap, diags := s.whole, s.diags
	if bundle == "" {
		return snap, diags, nil
	}
	if _, ok := snap.Bundle(bundle); !ok {
		return nil, nil, noBundle(bundle, snapshotBundles(snap))
	}
	if len(snap.Bundles) == 1 {
		return snap, diags, nil
	}
	_, docs, err := s.st.Documents(ctx, s.tenant)
	if err != nil {
		return nil, nil, fmt.Errorf("tenant %s: %w", s.tenant, err)
	}
	var in []readmodel.Doc
	for _, d := range docs {
		if d.Bundle == bundle {
			in = append(in, readmodel.Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
		}
	}
	// Its notes were shown when it was imported.
	one, _ := readmodel.Build(s.tenant, in)
	return one, nil, nil
}

// ErrNoBundle is returned for a bundle a source does not hold.
var ErrNoBundle = errors.New("no such bundle")

func noBundle(name string, have []string) error {
	return fmt.Errorf("%w %q (bundles: %s)", ErrNoBundle, name, strings.Join(slices.Sorted(slices.Values(have)), " "))
}

// Open reads src into a view: of every bundle, or of the named one alone.
// The view's Diagnostics are those of the documents Open compiled.
func Open(ctx context.Context, src Source, bundle string) (*View, error) {
	snap, diags, err := src.Snapshot(ctx, bundle)
	if err != nil {
		return nil, err
	}
	return newView(src.Tenant(), snap, 0, diags), nil
}

// Pick is the bundle an agent for database reads among names: the first
// of candidates (the bundle okf.yaml names, the database's name) that
// names one, else the only one; "" when none fits.
func Pick(names []string, candidates ...string) string {
	for _, c := range candidates {
		for _, n := range names {
			if c != "" && n == c {
				return n
			}
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return ""
}

// Files presents bundle, of a view src was opened into, as a read-only
// folder for the browse strategy: the bundle's own folder when src is a
// folder, else its concepts as files (SnapshotFiles). done releases it.
func Files(src Source, v *View, bundle string) (files fs.FS, done func(), err error) {
	f, ok := src.(folderSource)
	if !ok {
		return SnapshotFiles(v.Snap, bundle), func() {}, nil
	}
	bundles, err := okf.FindBundles(f.dir)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range bundles {
		if b.Name == bundle {
			root, err := os.OpenRoot(b.Dir)
			if err != nil {
				return nil, nil, fmt.Errorf("opening the bundle folder: %w", err)
			}
			return root.FS(), func() { root.Close() }, nil
		}
	}
	return nil, nil, noBundle(bundle, folderNames(bundles))
}
