package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/engine"
)

func newGetCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		req    engine.GetRequest
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "get <id>[#section] [<id>[#section]...]",
		Short: "Read concepts, or one section of each, by id",
		Long: `Get prints the body of each concept named, framed by a line
"@@ bundle/id#section [start..end of total]", exactly as the get tool answers
an agent. An id is the concept's path without .md; when two bundles hold the
same id, write bundle/id. A #section (or --section) narrows the read to one
heading's section, named by its slug ("# Common query patterns" is
common_query_patterns). --offset and --limit cut a window of bytes (at most
15000 a concept, the frame says where the text goes on); --find returns a
window around the first match of a phrase, with the offsets of every match.
Unknown ids are listed in a final "@@ missing" line, ids that cannot be read
in "@@ error" lines; either makes the exit status 1.`,
		Example: `  okf get --dir ./bundles tables/orders
  okf get --dir ./bundles tables/orders#schema knowledge/active-customer
  okf get --dir ./bundles tables/events_ --find "event_params" --limit 800
  okf get --dir ./bundles --json tables/orders   # digest, slices, missing, errors`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("get takes at least one id")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			v, _, err := src.open(e, "")
			if err != nil {
				return err
			}
			req.IDs = args
			g, err := engine.Get(v, req)
			if err != nil {
				return usageError("%v", err)
			}
			if asJSON {
				err = printJSON(e, engine.NewGetAnswer(v, g))
			} else {
				_, err = fmt.Fprint(e.stdout, engine.GetText(g))
			}
			if err != nil {
				return err
			}
			if len(g.Missing) > 0 || len(g.Problems) > 0 {
				return silentExit(exitFail)
			}
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.StringVar(&req.Section, "section", "", "read only this section (a heading slug) of every id")
	f.IntVar(&req.Offset, "offset", 0, "start the read this many bytes into the text")
	f.IntVar(&req.Limit, "limit", 0, "read at most this many bytes (0: up to 15000)")
	f.StringVar(&req.Find, "find", "", "return a window around the first match of this phrase (case-insensitive)")
	f.BoolVar(&asJSON, "json", false, "print the slices as JSON")
	return c
}
