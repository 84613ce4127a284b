package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/tokens"
)

func newEvalCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval quality and token cost, and the agent's execution accuracy",
		Long: `Eval measures okf on a question set: retrieval scores each way of reading
knowledge with no model (recall of the gold rules, tables and columns, and
the tokens read); run asks the agent every question and scores its answers
against the gold SQL's rows; compare pairs two strategies or models of a run
on the same questions.`,
		Example: `  okf eval retrieval --bundles bundles --questions examples/shop/shop_questions.jsonl --raw examples
  okf eval run --questions examples/shop/shop_questions.jsonl --db sqlite:.demo/shop.db --strategies schema,raw,browse,engine
  okf eval compare --a schema/mini --b context/mini`,
	}
	c.AddCommand(newEvalRetrievalCmd(e))
	c.AddCommand(newEvalRunCmd(e))
	c.AddCommand(newEvalCompareCmd(e))
	return c
}

func newEvalRetrievalCmd(e *env) *cobra.Command {
	var (
		questions  []string
		bundles    string
		raw        string
		opt        = eval.DefaultOptions()
		asJSON     bool
		configPath string
	)
	c := &cobra.Command{
		Use:   "retrieval --questions <jsonl> --bundles <dir>",
		Short: "Recall, MRR and tokens of each knowledge strategy, with no model",
		Long: `Retrieval evaluates, for every question of a LiveSQLBench or BIRD question set
whose database has a bundle, how each way of reading knowledge serves it:

  raw        the raw documentation pasted whole (needs --raw)
  navigator  an ideal index navigator: root index, folder index, then exactly
             the needed files
  manifest   the bundle's manifest, then one batched get of the needed concepts
  schema     every table's schema, no business knowledge (the baseline)
  search     search (k rows plus link expansion), then get of the needed
             concepts it surfaced
  context    one context pack
  auto       raw when a session of the database's questions is cheaper pasted
             (raw tokens <= questions x budget), context otherwise (needs --raw)

It reports the recall of the gold rules (external_knowledge), of the gold
tables and columns (what the gold SQL reads, parsed with PostgreSQL's parser
and resolved against the bundle's tables), literal recall (the string values
the gold SQL compares columns against with =, <>, IN or a LIKE without
wildcards that the question, and its evidence with --evidence, does not
spell: how many of them what the agent was shown holds exactly, case
included; "-" when a set has none), the share of complete answers
(every gold rule, table and column seen), MRR, the tokens read per question
(o200k), and the tokens a whole session of each database's questions would
be billed when earlier context is re-read at a 10% cache rate. Below the
table, each question whose context pack missed a gold rule is listed with
the rank a search for the question gives that rule (top 50, no link
expansion). A question whose gold SQL does not parse is listed with the
reason and skipped.

When the configuration (okf.yaml, or --config) names an embeddings model,
search and context packs add dense similarity as okf serve's do: the
concepts are embedded once, each question once, and the cost is printed on
standard error.`,
		Example: `  okf eval retrieval --bundles ./bundles --questions train.jsonl --raw ./base-lite
  okf eval retrieval --bundles ./bundles --questions bird.jsonl --evidence
  okf eval retrieval --bundles ./bundles --questions a.jsonl --questions b.jsonl --mixed --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if len(questions) == 0 || bundles == "" {
				return usageError("eval retrieval needs --questions and --bundles")
			}
			qs, err := eval.LoadQuestions(questions...)
			if err != nil {
				return err
			}
			corpus, err := eval.LoadCorpus(bundles, raw, opt.Weights)
			if err != nil {
				return err
			}
			opt.Count = tokens.Count
			opt.Now = time.Now()
			embedder, err := evalEmbeddings(c.Context(), e, corpus, configPath, c.Flags().Changed("config"))
			if err != nil {
				return err
			}
			if embedder != nil {
				opt.QueryVector = embedder.Vector
			}
			outcomes, skipped, err := eval.Retrieval(corpus, qs, opt)
			if err != nil {
				return err
			}
			if embedder != nil {
				printEmbedderCost(e, embedder)
			}
			for _, s := range skipped {
				fmt.Fprintf(e.stderr, "skipped %s: %s\n", s.Question, s.Reason)
			}
			sums := eval.Summarize(outcomes)
			if asJSON {
				return printJSON(e, map[string]any{"summaries": sums, "outcomes": outcomes, "skipped": skipped})
			}
			if err := eval.WriteTable(e.stdout, sums); err != nil {
				return err
			}
			return eval.WriteMisses(e.stdout, outcomes)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&questions, "questions", nil, "a question set (JSON lines); repeat to combine sets")
	f.StringVar(&bundles, "bundles", "", "a folder of bundles, one subfolder a database")
	f.StringVar(&raw, "raw", "", "a folder of raw LiveSQLBench documents (<db>/<db>_schema.txt, ...), for the raw strategy")
	f.IntVarP(&opt.K, "k", "k", opt.K, "search depth")
	f.IntVar(&opt.Budget, "budget", opt.Budget, "context pack budget in tokens")
	f.BoolVar(&opt.Evidence, "evidence", false, "append each question's evidence (BIRD's hint) to its text")
	f.BoolVar(&opt.Mixed, "mixed", false, "ask every question of all the bundles at once, without naming its database")
	f.BoolVar(&asJSON, "json", false, "print summaries and per-question outcomes as JSON")
	f.StringVar(&configPath, "config", config.DefaultFile, "configuration file whose embeddings section, if any, adds dense similarity as okf serve does")
	// Tuning knobs, for the sweeps behind the defaults.
	f.Float32Var(&opt.Weights.Name, "name-weight", opt.Weights.Name, "search weight of a concept's id and title (for sweeps)")
	f.Float32Var(&opt.Weights.Cell, "cell-weight", opt.Weights.Cell, "search weight of a concept's other manifest cells (for sweeps)")
	f.Float32Var(&opt.Weights.Cover, "cover-boost", opt.Weights.Cover, "share of the best search score a rule gains when the question holds every word of its title (for sweeps)")
	f.Float32Var(&opt.Weights.Uses, "uses-weight", opt.Weights.Uses, "search weight of the meanings of the columns a rule uses (for sweeps)")
	f.IntVar(&opt.Pack.Rules, "pack-rules", opt.Pack.Rules, "rule hits a context pack takes (for sweeps)")
	f.Float64Var(&opt.Pack.MinRelevance, "min-relevance", opt.Pack.MinRelevance, "share of the best rule score a pack's rules need (for sweeps)")
	f.IntVar(&opt.Pack.Columns, "pack-columns", opt.Pack.Columns, "question columns a context pack takes (for sweeps)")
	f.Float64Var(&opt.Pack.ColumnRelevance, "column-relevance", opt.Pack.ColumnRelevance, "share of the best column score a pack's question columns need (for sweeps)")
	f.IntVar(&opt.Pack.HedgeRules, "hedge-rules", opt.Pack.HedgeRules, "rule hits a context pack takes for a question that names no rule (for sweeps)")
	f.Float64Var(&opt.Pack.HedgeRelevance, "hedge-relevance", opt.Pack.HedgeRelevance, "share of the best rule score those rules need (for sweeps)")
	f.IntVar(&opt.Pack.HedgeFirst, "hedge-first", opt.Pack.HedgeFirst, "how many of those come before the question's columns (for sweeps)")
	f.Float64Var(&opt.Pack.NewTableRelevance, "new-table-relevance", opt.Pack.NewTableRelevance, "share of the best column score a column needs to bring its own table into a pack with rules (for sweeps)")
	return c
}
