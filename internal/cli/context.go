package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/engine"
)

func newContextCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		req    engine.ContextRequest
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "context <question>",
		Short: "Pack the knowledge a question needs into one answer, under a token budget",
		Long: `Context builds a context pack for a question: the business rules it most
likely needs with the rules they depend on, the schema rows of the columns
those rules use and of the columns the question asks for, the joins that
connect their tables, then the manifest row of the next candidate, all
within a token budget counted with the o200k tokenizer. Without --bundle the
question is routed to the bundle it belongs to (--json shows the evidence).
It is the one-call way for an agent to get started, and the text is exactly
what the context tool answers; read more with okf get.`,
		Example: `  okf context --dir ./bundles/disaster "Which hubs have a resource utilization ratio above 5?"
  okf context --dir ./bundles --budget 1000 --json "on-time delivery rate by carrier"`,
		Args: exactArgs(1, "one question"),
		RunE: func(c *cobra.Command, args []string) error {
			if req.Budget < 100 {
				return usageError("--budget %d is too small to hold anything useful (at least 100)", req.Budget)
			}
			v, _, err := src.open(e, req.Bundle)
			if err != nil {
				return err
			}
			req.Question = args[0]
			pack, err := engine.Context(c.Context(), v, req)
			if err != nil {
				return usageError("%v", err)
			}
			if asJSON {
				return printJSON(e, engine.NewContextAnswer(v, pack))
			}
			fmt.Fprint(e.stdout, pack.Text)
			fmt.Fprintf(e.stderr, "context: %d tokens of %d: %d rules, %d tables, %d stored values, %d worked examples, %d candidates\n",
				pack.Tokens, req.Budget, len(pack.Rules), len(pack.Tables), len(pack.Values), len(pack.Examples), len(pack.Candidates))
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.IntVar(&req.Budget, "budget", engine.DefaultBudget, "the most tokens the pack may cost")
	f.StringVar(&req.Bundle, "bundle", "", "use only this bundle")
	f.BoolVar(&asJSON, "json", false, "print the pack as JSON: digest, text, tokens, rules, tables, candidates")
	return c
}
