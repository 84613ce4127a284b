package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/trace"
)

func newEvalCompareCmd(e *env) *cobra.Command {
	var (
		runs   string
		a, b   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "compare --a STRATEGY/MODEL --b STRATEGY/MODEL",
		Short: "Pair two strategies or models of an eval on the same questions, with McNemar's test",
		Long: `Compare reads the outcomes okf eval run wrote into --runs (eval-results.jsonl,
and runs.jsonl for tokens and cost) and pairs the scored runs of A and B:
each question's nth run with A is paired with its nth run with B (with
--repeat, the repeats pair in order). Runs the model endpoint failed are not
scored, so not paired; a run without a partner is left out and counted.

It prints the paired table (both right, only A, only B, neither), McNemar's
exact test (a two-sided exact binomial test on the discordant pairs: the
chance of a split at least this uneven if A and B were equally good), and
the difference in tokens and cost per run. The repeats of one question are
not independent of each other, so with --repeat read p as optimistic.

A side is a strategy and a model as the eval named them, joined by a slash:
context/mini, schema/openai/gpt-4.1-mini.`,
		Example: `  okf eval compare --a schema/mini --b context/mini
  okf eval compare --runs runs --a context/mini --b context/haiku --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if a == "" || b == "" {
				return usageError("eval compare needs --a and --b, each strategy/model")
			}
			sideA, err := eval.ParseSide(a)
			if err != nil {
				return usageError("--a: %v", err)
			}
			sideB, err := eval.ParseSide(b)
			if err != nil {
				return usageError("--b: %v", err)
			}
			path := filepath.Join(runs, eval.ResultsFile)
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return usageError("%s does not exist: okf eval run writes it (--runs names its folder)", path)
			}
			records, broken, err := trace.LoadChecked(runs)
			if err != nil {
				return err
			}
			if w := trace.BrokenWarning(runs, broken); w != "" {
				fmt.Fprintln(e.stderr, "okf: warning:", w)
			}
			p, err := eval.Compare(path, records, sideA, sideB)
			if err != nil {
				return usageError("%s: %v", path, err)
			}
			if asJSON {
				return printJSON(e, p)
			}
			return eval.WriteComparison(e.stdout, p)
		},
	}
	f := c.Flags()
	f.StringVar(&runs, "runs", "runs", "the folder okf eval run wrote into (eval-results.jsonl and runs.jsonl)")
	f.StringVar(&a, "a", "", "one side: strategy/model, as the eval named them")
	f.StringVar(&b, "b", "", "the other side: strategy/model")
	f.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return c
}
