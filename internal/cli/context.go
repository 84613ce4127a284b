package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/search"
)

func newContextCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		opt    search.PackOptions
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "context <question>",
		Short: "Pack the knowledge a question needs into one answer, under a token budget",
		Long: `Context builds a context pack for a question: the business rules it most
likely needs with the rules they depend on, only the schema rows of the
columns those rules use, the join path between their tables, then manifest
rows of the next candidates, all within a token budget counted with the
o200k tokenizer. It is the one-call way for an agent to get started; read
more with okf get.`,
		Example: `  okf context --dir ./bundles/disaster "Which hubs have a resource utilization ratio above 5?"
  okf context --dir ./bundles --budget 1000 --json "on-time delivery rate by carrier"`,
		Args: exactArgs(1, "one question"),
		RunE: func(c *cobra.Command, args []string) error {
			if opt.Budget < 100 {
				return usageError("--budget %d is too small to hold anything useful (at least 100)", opt.Budget)
			}
			s, _, err := src.open(e, opt.Bundle)
			if err != nil {
				return err
			}
			opt.Count = tokens.Count
			pack := search.Build(s).Context(args[0], opt)
			if asJSON {
				out, err := json.MarshalIndent(pack, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", out)
				return nil
			}
			fmt.Fprint(e.stdout, pack.Text)
			fmt.Fprintf(e.stderr, "context: %d tokens of %d: %d rules, %d tables, %d candidates\n",
				pack.Tokens, opt.Budget, len(pack.Rules), len(pack.Tables), len(pack.Candidates))
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.IntVar(&opt.Budget, "budget", search.DefaultBudget, "the most tokens the pack may cost")
	f.StringVar(&opt.Bundle, "bundle", "", "use only this bundle")
	f.BoolVar(&asJSON, "json", false, "print the pack as JSON: text, tokens, rules, tables, candidates")
	return c
}
