package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/internal/atomicfile"
	"github.com/okf-tools/okf/store"
)

func newExportCmd(e *env) *cobra.Command {
	var (
		sf     storeFlags
		bundle string
		force  bool
	)
	c := &cobra.Command{
		Use:   "export <dir>",
		Short: "Write the stored markdown back to a folder, byte for byte",
		Long: `Export writes the current documents of a tenant to <dir> with exactly the
bytes they were imported or written with: each bundle in a subfolder named
after it, or, with --bundle, that one bundle's documents straight into <dir>.
Exporting what was imported gives back identical files, so okflint, a
visualizer or Obsidian keep working on the folder.

<dir> must not exist or be empty; --force replaces a non-empty folder and
everything in it. The files are written to a temporary folder beside <dir>
that is renamed into place only when complete, so a failed export leaves
<dir> as it was.`,
		Example: `  okf export ./out                    # every bundle, one subfolder each
  okf export ./sales --bundle sales   # one bundle, the folder is the bundle
  okf export ./out --tenant acme --force`,
		Args: exactArgs(1, "one folder"),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if bundle != "" {
				if err := store.ValidateBundle(bundle); err != nil {
					return usageError("--bundle: %v", err)
				}
			}
			if err := checkExportTarget(dir, force); err != nil {
				return err
			}
			ctx := context.Background()
			st, err := sf.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			head, docs, err := st.Documents(ctx, sf.tenant)
			if err != nil {
				return err
			}
			files, bundles := exportFiles(docs, bundle)
			if len(files) == 0 {
				if bundle != "" {
					return fmt.Errorf("tenant %s has no bundle %s", sf.tenant, bundle)
				}
				return fmt.Errorf("tenant %s has no documents", sf.tenant)
			}
			if err := writeFolder(dir, files); err != nil {
				return err
			}
			what := "bundle " + bundles[0]
			if len(bundles) > 1 {
				what = fmt.Sprintf("%d bundles", len(bundles))
			}
			_, err = fmt.Fprintf(e.stdout, "exported %d documents of %s (tenant %s, commit %d) to %s\n", len(files), what, sf.tenant, head, dir)
			return err
		},
	}
	sf.register(c.Flags())
	c.Flags().StringVar(&bundle, "bundle", "", "export only this bundle, its documents straight into <dir>")
	c.Flags().BoolVar(&force, "force", false, "replace <dir> and everything in it when it is not empty")
	return c
}

// exportFiles lays documents out as slash paths under the export folder:
// bundle/path, or just path when one bundle is exported on its own. It
// also returns the bundles exported, sorted.
func exportFiles(docs []store.Document, only string) (map[string][]byte, []string) {
	files := map[string][]byte{}
	var bundles []string
	for _, d := range docs {
		switch {
		case only == "":
			files[d.Bundle+"/"+d.Path] = d.Content
		case d.Bundle == only:
			files[d.Path] = d.Content
		default:
			continue
		}
		// Documents come sorted by bundle.
		if len(bundles) == 0 || bundles[len(bundles)-1] != d.Bundle {
			bundles = append(bundles, d.Bundle)
		}
	}
	return files, bundles
}

// checkExportTarget refuses a target that is not a folder, or that holds
// something when force is off.
func checkExportTarget(dir string, force bool) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return usageError("%s is a symbolic link: export to the folder it points at", dir)
	}
	if !info.IsDir() {
		return usageError("%s exists and is not a folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 && !force {
		return usageError("%s is not empty: pass --force to replace it and everything in it", dir)
	}
	return nil
}

// writeFolder writes files (slash path → bytes) into a temporary folder
// beside dir and renames it into place, replacing dir if it exists.
func writeFolder(dir string, files map[string][]byte) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(abs), err)
	}
	d, err := atomicfile.NewDir(abs)
	if err != nil {
		return fmt.Errorf("export to %s: %w", dir, err)
	}
	defer d.Discard()
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := d.WriteFile(p, files[p]); err != nil {
			return fmt.Errorf("export to %s: %w", dir, err)
		}
	}
	if err := d.Commit(); err != nil {
		return fmt.Errorf("export to %s: %w", dir, err)
	}
	return nil
}
