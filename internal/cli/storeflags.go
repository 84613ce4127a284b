package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/okf-tools/okf/store"
	_ "github.com/okf-tools/okf/store/postgres" // the shared store backend
	_ "github.com/okf-tools/okf/store/sqlite"   // the embedded store backend
)

// storeFlags select a knowledge store and a tenant in it.
type storeFlags struct {
	dsn    string
	data   string
	tenant string
}

func (s *storeFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.dsn, "store", "", "the store: a SQLite file or postgres://… (default: "+store.DefaultFile+" in the data directory)")
	f.StringVar(&s.data, "data", "", "the data directory whose "+store.DefaultFile+" to use (default $OKF_DATA, else $XDG_DATA_HOME/okf, else ~/.local/share/okf)")
	f.StringVar(&s.tenant, "tenant", "default", "the tenant whose knowledge to use")
}

// check refuses a bad tenant name and a store named twice, before a
// command does any work.
func (s *storeFlags) check() error {
	if err := store.ValidateTenant(s.tenant); err != nil {
		return usageError("--tenant: %v", err)
	}
	if s.data != "" && s.dsn != "" {
		return usageError("--store and --data both name a store: give one")
	}
	return nil
}

// open opens the existing store named by --store, or the file in --data:
// a reading command never creates one.
func (s *storeFlags) open(ctx context.Context) (store.Store, error) {
	return s.openWith(ctx, store.OpenExisting)
}

// create opens the store, creating an embedded one that does not exist
// yet: for the commands that write knowledge.
func (s *storeFlags) create(ctx context.Context) (store.Store, error) {
	return s.openWith(ctx, store.Open)
}

func (s *storeFlags) openWith(ctx context.Context, open func(context.Context, string) (store.Store, error)) (store.Store, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	dsn := s.dsn
	if s.data != "" {
		dsn = filepath.Join(s.data, store.DefaultFile)
	}
	st, err := open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	return st, nil
}
