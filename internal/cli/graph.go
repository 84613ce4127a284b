package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/graph"
	"github.com/okf-tools/okf/internal/atomicfile"
)

func newGraphCmd(e *env) *cobra.Command {
	var (
		out, today string
		bundles    []string
	)
	c := &cobra.Command{
		Use:   "graph <bundle> [-o page.html]",
		Short: "Draw a bundle's concepts and links as one self-contained HTML page",
		Long: `Graph writes one HTML page that draws the concepts of a bundle (or of a
folder of bundles) and the links between them: each bundle a labelled card,
a node a concept, coloured by its type and outlined by its status (draft
dashed, deprecated faded, stale red), an arrow a link. Zoomed out the page
shows the cards and their names; zooming in brings the links, the concepts'
names and the arrows. The search box counts the matches on each card and
flies to the one picked; click a concept to read its manifest row and body
in the side panel, and follow its links from there. The page uses no
network: script, styles and knowledge are all inside it. The same bundle
gives the same bytes (decide stale statuses with --today for that).`,
		Example: `  okf graph bundles/shop -o shop.html
  okf graph bundles -o tenant.html
  okf graph bundles --bundle disaster --bundle solar -o two.html
  okf graph bundles/shop -o - > shop.html`,
		Args: exactArgs(1, "one bundle folder (or a folder of bundles)"),
		RunE: func(c *cobra.Command, args []string) error {
			// The folder is an argument here: checked before the reader
			// of --dir, whose messages name that flag.
			switch info, err := os.Stat(args[0]); {
			case err != nil:
				return usageError("%s: %v", args[0], errors.Unwrap(err))
			case !info.IsDir():
				return usageError("%s: not a directory", args[0])
			}
			src := knowledgeSource{dir: args[0], today: today}
			src.store.tenant = "default"
			now, err := src.now()
			if err != nil {
				return err
			}
			v, err := src.view(e)
			if err != nil {
				return err
			}
			title := filepath.Base(filepath.Clean(args[0]))
			if len(bundles) > 0 {
				title = strings.Join(bundles, "+")
			} else if len(v.Snap.Bundles) == 1 {
				title = v.Snap.Bundles[0].Name
			}
			d, err := graph.Build(v.Snap, title, now, bundles...)
			if err != nil {
				return usageError("%v", err)
			}
			if out == "" {
				out = title + ".html"
			}
			if out == "-" {
				return d.WriteHTML(e.stdout)
			}
			if err := writePage(out, d.WriteHTML); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "wrote %s: %d concepts, %d links; open it in a browser\n", out, len(d.Nodes), len(d.Links))
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "out", "o", "", `the page to write ("-" for standard output; default <bundle>.html)`)
	f.StringArrayVar(&bundles, "bundle", nil, "draw only this bundle of a folder of bundles (repeatable)")
	f.StringVar(&today, "today", "", "decide stale statuses as of this date (YYYY-MM-DD) instead of now")
	return c
}

// writePage writes an HTML page to path whole, by a temporary file renamed
// over it, and only over a regular file.
func writePage(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
