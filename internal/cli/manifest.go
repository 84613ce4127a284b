package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/engine"
)

func newManifestCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		bundle string
	)
	c := &cobra.Command{
		Use:   "manifest",
		Short: "Print the dense manifest: one TSV row a concept",
		Long: `Manifest prints the compiled manifest of the knowledge: two header lines
(# tenant: and # bundles:), the column names, then one row a concept with
id, bundle, kind, status, grain, summary and links. Rows are sorted by bundle
then id, summaries are one line of at most 120 characters, and nothing in it
depends on the clock except a status that reads "stale" once a concept's
stale_after has passed. It is exactly what the manifest tool answers an
agent. Its size and token count go to stderr.`,
		Example: `  okf manifest --dir ./bundles              # every bundle folder under ./bundles
  okf manifest --dir ./bundles --bundle solar
  okf manifest --tenant acme                 # from the store`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v, now, err := src.open(e, bundle)
			if err != nil {
				return err
			}
			m, err := engine.Manifest(v, bundle, now)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(e.stdout, m); err != nil {
				return err
			}
			statLine(e.stderr, "manifest", []byte(m), v)
			return nil
		},
	}
	src.register(c.Flags())
	c.Flags().StringVar(&bundle, "bundle", "", "print only this bundle's rows")
	return c
}
