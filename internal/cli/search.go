package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/search"
)

func newSearchCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		opt    search.Options
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
row came from the link expansion. Bodies are never printed.`,
		Example: `  okf search --dir ./bundles "resource utilization ratio"
  okf search --dir ./bundles -k 3 --bundle solar "panel degradation"`,
		Args: exactArgs(1, "one query"),
		RunE: func(c *cobra.Command, args []string) error {
			s, now, err := src.open(e, opt.Bundle)
			if err != nil {
				return err
			}
			ix := search.Build(s)
			hits := ix.Search(args[0], opt)
			if asJSON {
				out, err := json.MarshalIndent(ix.Results(hits, now), "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", out)
				return nil
			}
			var b strings.Builder
			b.WriteString("id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n")
			for _, h := range hits {
				pos := "-"
				if h.Pos >= 0 {
					pos = fmt.Sprint(h.Pos)
				}
				b.WriteString(s.Row(h.Concept, now) + "\t" + pos + "\n")
			}
			fmt.Fprint(e.stdout, b.String())
			fmt.Fprintf(e.stderr, "search: %d rows\n", len(hits))
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.IntVarP(&opt.K, "k", "k", search.DefaultK, "direct hits to return, and the cap on rows added by link expansion")
	f.StringVar(&opt.Bundle, "bundle", "", "search only this bundle")
	f.BoolVar(&opt.NoExpand, "no-expand", false, "do not add the concepts the hits link to")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	return c
}
