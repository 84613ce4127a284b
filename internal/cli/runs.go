package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/trace"
)

func newRunsCmd(e *env) *cobra.Command {
	var (
		configPath string
		dir        string
		last       int
		htmlOut    string
		promoteOut string
	)
	c := &cobra.Command{
		Use:   "runs [show <run> | compare <run> <run>... | promote <run>]",
		Short: "List, show and compare the agent's recorded runs",
		Long: `Runs reads the run log (runs/runs.jsonl, one JSON line per okf ask or chat
question) and lists the runs: id, start, database, strategy, model, stop
reason, model calls, tokens, cost and question.

show prints one run step by step: every tool call with its arguments and
the start of its result, the concepts read, and the summary. compare puts
runs side by side: calls, concepts read, SQL attempts and errors, tokens,
cost, times and the submitted SQL. promote turns a run's submitted SQL into
a draft query concept (docs/queries.md) in <out>/<bundle>/queries/, for a
person to review: the values the question states become parameters, and
the draft stays off every tool list until its status is changed.

A <run> is an id (or its first characters), a number of up to four digits
from the list (1 the oldest, -1 the newest), or last for the newest; a
longer number is read as the start of an id.

--html writes the runs as one self-contained page instead (no network): the
listed runs newest first, or the run of show, or the runs of compare; each
with its steps, tokens and times, tool calls with their SQL and results,
the concepts read and the answer.`,
		Example: `  okf runs
  okf runs show last
  okf runs compare 3f2a1 9c07e
  okf runs promote last --out bundles
  okf runs show last --html run.html
  okf runs --last 50 --html runs.html`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if dir == "" {
				cfg, err := config.LoadOptional(configPath)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				dir = "runs"
				if cfg.Agent.Runs != "" {
					dir = cfg.Agent.Runs
					if cfg.Path != "" && !filepath.IsAbs(dir) {
						dir = filepath.Join(filepath.Dir(cfg.Path), dir)
					}
				}
			}
			runs, broken, err := trace.LoadChecked(dir)
			if err != nil {
				return err
			}
			if w := trace.BrokenWarning(dir, broken); w != "" {
				fmt.Fprintln(e.stderr, "okf: warning:", w)
			}
			// Naming a run in an empty log is not bad usage: say where
			// runs would be and what records them.
			if len(runs) == 0 && (len(args) > 1 || htmlOut != "") {
				return fmt.Errorf("there are no runs yet in %s: okf ask and okf chat record one a question", filepath.Join(dir, trace.File))
			}
			if htmlOut != "" {
				return writeRunsHTML(e, htmlOut, runs, args, last)
			}
			if len(args) == 0 {
				if len(runs) == 0 {
					fmt.Fprintf(e.stderr, "no runs in %s\n", filepath.Join(dir, trace.File))
					return nil
				}
				from := 0
				if last > 0 && len(runs) > last {
					from = len(runs) - last
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprint(tw, trace.List(runs, from))
				return tw.Flush()
			}
			var picked []*trace.Record
			for _, ref := range args[1:] {
				r, err := trace.Find(runs, ref)
				if err != nil {
					return usageError("%v", err)
				}
				picked = append(picked, r)
			}
			switch {
			case args[0] == "show" && len(picked) == 1:
				fmt.Fprint(e.stdout, trace.Show(picked[0]))
			case args[0] == "compare" && len(picked) >= 2:
				fmt.Fprint(e.stdout, trace.Compare(picked))
			case args[0] == "promote" && len(picked) == 1:
				return promoteRun(e, picked[0], promoteOut)
			default:
				return usageError("runs takes no argument, show <run>, compare <run> <run>..., or promote <run>")
			}
			return nil
		},
	}
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file naming the runs folder")
	c.Flags().StringVar(&dir, "runs", "", "the runs folder (default: okf.yaml's agent.runs, else runs)")
	c.Flags().IntVar(&last, "last", 20, "list only the newest runs (0: all)")
	c.Flags().StringVar(&promoteOut, "out", "bundles", "promote: the folder of bundles the draft goes into")
	c.Flags().StringVar(&htmlOut, "html", "", `write the runs as a self-contained HTML page to this file ("-" for standard output)`)
	return c
}

// writeRunsHTML writes the run viewer: the runs picked by args (show or
// compare), else the newest last runs, newest first.
func writeRunsHTML(e *env, out string, runs []trace.Record, args []string, last int) error {
	var picked []*trace.Record
	switch {
	case len(args) == 0:
		from := 0
		if last > 0 && len(runs) > last {
			from = len(runs) - last
		}
		for i := len(runs) - 1; i >= from; i-- {
			picked = append(picked, &runs[i])
		}
	case (args[0] == "show" && len(args) == 2) || (args[0] == "compare" && len(args) >= 3):
		for _, ref := range args[1:] {
			r, err := trace.Find(runs, ref)
			if err != nil {
				return usageError("%v", err)
			}
			picked = append(picked, r)
		}
	default:
		return usageError("runs takes no argument, show <run>, or compare <run> <run>...")
	}
	title := "okf runs"
	if len(picked) == 1 {
		title = "okf run " + picked[0].ID
	}
	if out == "-" {
		return trace.WriteHTML(e.stdout, title, picked)
	}
	if err := writePage(out, func(w io.Writer) error { return trace.WriteHTML(w, title, picked) }); err != nil {
		return err
	}
	noun := "runs"
	if len(picked) == 1 {
		noun = "run"
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d %s; open it in a browser\n", out, len(picked), noun)
	return nil
}
