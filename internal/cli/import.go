package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/store"
)

func newImportCmd(e *env) *cobra.Command {
	var (
		sf         storeFlags
		bundle     string
		message    string
		configPath string
	)
	c := &cobra.Command{
		Use:   "import <dir>",
		Short: "Store a folder of bundles in the knowledge store, byte for byte",
		Long: `Import stores the markdown of a folder of bundles in the knowledge store,
keeping every byte, as one commit of the tenant.

Each subfolder of <dir> that holds markdown is a bundle named after it (lower
case, other characters than a-z 0-9 _ - . made "-"); with --bundle, <dir>
itself is one bundle. Files are read by the rules of a bundle: every .md file,
hidden files and folders and symbolic links skipped. Each imported bundle is
made equal to its folder: new files are added, changed ones modified, and
documents whose file is gone are deleted. Bundles of the tenant that are not
in <dir> are left alone.

Documents are compared by content hash, so importing an unchanged folder makes
no commit and costs no recompile. Nothing is written unless every file is
readable and every name is valid.

When okf.yaml names an embeddings model, import also gives each concept of
the tenant its vector, kept in the store: only the concepts whose text is new
are embedded, and the cost is printed (calls, tokens, vectors reused).`,
		Example: `  okf import ./bundles                      # each subfolder a bundle
  okf import ./docs/sales --bundle sales    # the folder itself as one bundle
  okf import ./bundles --tenant acme --store postgres://okf@db/okf`,
		Args: exactArgs(1, "one folder"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := sf.check(); err != nil {
				return err
			}
			dir := args[0]
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				return usageError("%s: not a directory", dir)
			}
			if bundle != "" {
				if err := store.ValidateBundle(bundle); err != nil {
					return usageError("--bundle: %v", err)
				}
			}
			bundles, err := readBundles(dir, bundle)
			if err != nil {
				return err
			}
			embedder, err := configEmbeddings(e, configPath, c.Flags().Changed("config"), "importing")
			if err != nil {
				return err
			}
			if message == "" {
				message = "import " + filepath.Clean(dir)
			}
			ctx := context.Background()
			st, err := sf.create(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			commit, err := st.Sync(ctx, sf.tenant, bundles, message)
			if err != nil {
				return fmt.Errorf("importing %s: %w", dir, err)
			}
			if err := printImport(e, sf.tenant, bundles, commit); err != nil {
				return err
			}
			if commit.Changed || embedder != nil && commit.ID > 0 {
				// Compile the read model now, so readers do not pay for it.
				snap, _, err := engine.StoreHead(st, sf.tenant).Snapshot(ctx, "")
				if err != nil {
					return fmt.Errorf("commit %d is stored, but compiling its read model failed: %w", commit.ID, err)
				}
				if commit.Changed {
					fmt.Fprintf(e.stderr, "snapshot %s: %d bundles, %d concepts\n", snap.Digest[:12], len(snap.Bundles), len(snap.Concepts))
				}
				// An unchanged import embeds too: the cache may lack
				// what an import without embeddings, or one that failed,
				// left out.
				if embedder != nil {
					u, have, total, err := engine.EmbedSnapshot(ctx, st, sf.tenant, snap, embedder)
					fmt.Fprintf(e.stderr, "embeddings: %d calls, %d tokens, %d reused\n", u.Calls, u.Tokens, u.Reused)
					if err != nil {
						return fmt.Errorf("embedding the concepts of tenant %s (%d of %d have vectors; importing again embeds the rest): %w", sf.tenant, have, total, err)
					}
				}
			}
			return nil
		},
	}
	sf.register(c.Flags())
	c.Flags().StringVar(&bundle, "bundle", "", "import <dir> itself as the bundle of this name")
	c.Flags().StringVarP(&message, "message", "m", "", `the commit message (default "import <dir>")`)
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file whose embeddings section, if any, embeds the concepts")
	return c
}

// readBundles reads the bundles to import: dir itself as the bundle name,
// or, when name is "", each bundle folder in dir (okf.Bundles).
func readBundles(dir, name string) (map[string]map[string][]byte, error) {
	if name != "" {
		docs, err := store.ReadFolder(dir)
		if err != nil {
			return nil, err
		}
		return map[string]map[string][]byte{name: docs}, nil
	}
	found, loose, err := okf.Bundles(dir)
	if err != nil {
		return nil, err
	}
	if len(loose) > 0 {
		return nil, usageError("%s has markdown files at its top (%s), which belong to no bundle: import the folder as one bundle with --bundle NAME, or move them into a bundle folder", dir, strings.Join(loose, ", "))
	}
	if len(found) == 0 {
		return nil, usageError("%s has no bundle folders: import a folder of bundle folders, or the bundle folder itself with --bundle NAME", dir)
	}
	bundles := map[string]map[string][]byte{}
	for _, b := range found {
		docs, err := store.ReadFolder(b.Dir)
		if err != nil {
			return nil, err
		}
		bundles[b.Name] = docs
	}
	return bundles, nil
}

// printImport writes a table of what the import did to each bundle, then
// the commit.
func printImport(e *env, tenant string, bundles map[string]map[string][]byte, c store.Commit) error {
	type counts struct{ added, modified, deleted int }
	per := map[string]*counts{}
	names := make([]string, 0, len(bundles))
	for name := range bundles {
		per[name] = &counts{}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, ch := range c.Changes {
		n := per[ch.Bundle]
		switch ch.Op {
		case store.Added:
			n.added++
		case store.Modified:
			n.modified++
		case store.Deleted:
			n.deleted++
		}
	}
	width := len("bundle")
	for _, name := range names {
		width = max(width, len(name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %5s  %8s  %7s  %9s\n", width, "bundle", "added", "modified", "deleted", "unchanged")
	for _, name := range names {
		n := per[name]
		fmt.Fprintf(&b, "%-*s  %5d  %8d  %7d  %9d\n", width, name, n.added, n.modified, n.deleted, len(bundles[name])-n.added-n.modified)
	}
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return err
	}
	var err error
	switch {
	case c.Changed:
		_, err = fmt.Fprintf(e.stdout, "tenant %s: commit %d, %d documents changed\n", tenant, c.ID, len(c.Changes))
	case c.ID == 0:
		_, err = fmt.Fprintf(e.stdout, "tenant %s: nothing to import, no commit\n", tenant)
	default:
		_, err = fmt.Fprintf(e.stdout, "tenant %s: nothing changed, still at commit %d\n", tenant, c.ID)
	}
	return err
}
