package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/engine"
)

func newSearchCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		req    engine.SearchRequest
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "search <query>",
		Short: "Rank concepts for a question with BM25 and one hop of links",
		Long: `Search ranks the concepts for a query with BM25 over their names (id and
title), their manifest cells and their bodies, then adds up to k concepts
the hits link to, most-pointed-at first. It prints manifest rows with one
more column, pos: the body offset where the query's words cluster densest
(read there with okf get --offset), or - when only the row matched or the
row came from the link expansion. Bodies are never printed. The text is
exactly what the search tool answers an agent.`,
		Example: `  okf search --dir ./bundles "resource utilization ratio"
  okf search --dir ./bundles -k 3 --bundle solar "panel degradation"
  okf search --dir ./bundles --json "refund"   # digest, hits: id, bundle, row, score, pos, expanded`,
		Args: exactArgs(1, "one query"),
		RunE: func(c *cobra.Command, args []string) error {
			v, now, err := src.open(e, req.Bundle)
			if err != nil {
				return err
			}
			req.Query = args[0]
			hits, err := engine.Search(c.Context(), v, req)
			if err != nil {
				return usageError("%v", err)
			}
			if asJSON {
				return printJSON(e, engine.NewSearchAnswer(v, hits, now))
			}
			fmt.Fprint(e.stdout, engine.SearchText(v, hits, now))
			fmt.Fprintf(e.stderr, "search: %d rows\n", len(hits))
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.IntVarP(&req.K, "k", "k", engine.DefaultK, "direct hits to return, and the cap on rows added by link expansion")
	f.StringVar(&req.Bundle, "bundle", "", "search only this bundle")
	f.BoolVar(&req.NoExpand, "no-expand", false, "do not add the concepts the hits link to")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	return c
}
