package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/trace"
)

func newAskCmd(e *env) *cobra.Command {
	var (
		f         agentFlags
		task      string
		questions string
	)
	c := &cobra.Command{
		Use:   `ask "<question>" --db <name>`,
		Short: "Answer a question about a database: knowledge first, then SQL through the guard",
		Long: `Ask answers one question about a real database the way okf intends: the
agent finds the business knowledge the question needs, writes SQL, runs it
through the SQL guard (read-only, validated, limited), repairs errors, and
submits an answer. Each step is printed as it happens; the answer, its rows
as a table and a one-line summary (model calls, tokens, cost, SQL errors)
follow. The run's full record is appended to runs/runs.jsonl (see okf runs).

--strategy picks how knowledge is read: context (default: one context pack,
then get), engine (manifest, search, get), browse (read the bundle's files
from index.md down), raw (every document pasted into the prompt), schema
(every table's schema and no business knowledge: the baseline) or auto (raw
when pasting the documents costs no more than one context pack, else
context). The SQL tools are the same whatever the strategy.

--task <instance_id> --questions <jsonl> asks a question of a LiveSQLBench
question set; its selected_database is the default --db.

Exit status: 0 submitted or declined, 1 step limit or error, 2 bad usage or
configuration.`,
		Example: `  okf ask "Which hubs have a resource utilization ratio above 5?" --db disaster
  okf ask "How many heroes are there?" --db sqlite:superhero.sqlite --dir bundles/superhero --model openai/gpt-4.1-mini
  okf ask --task disaster_1 --questions livesqlbench_data.jsonl --strategy engine`,
		RunE: func(c *cobra.Command, args []string) error {
			question, taskID := "", ""
			switch {
			case task != "" && len(args) > 0:
				return usageError("give a question or --task, not both")
			case task != "":
				if questions == "" {
					return usageError("--task needs --questions <jsonl>")
				}
				qs, err := eval.LoadQuestions(questions)
				if err != nil {
					return usageError("%v", err)
				}
				for _, q := range qs {
					if q.ID == task {
						question, taskID = q.Text, q.ID
						if f.db == "" {
							f.db = q.Database
						}
					}
				}
				if taskID == "" {
					return usageError("%s holds no task %q", questions, task)
				}
			case len(args) == 1:
				question = args[0]
			default:
				return usageError("ask takes one question (quote it), or --task with --questions")
			}
			if strings.TrimSpace(question) == "" {
				return usageError("the question is empty")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			s, err := openSession(ctx, e, &f)
			if err != nil {
				return err
			}
			defer s.close()
			color := isTerminal(e.stdout)
			fmt.Fprintf(e.stderr, "%s · %s · %s\n", s.dbName, s.strategy, s.model.Name())
			out, path, err := s.run(ctx, question, taskID, e.stderr, isTerminal(e.stderr))
			printOutcome(e.stdout, out, s.db.Options().ShownRows, color)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "run %s saved to %s\n", out.Record.ID, path)
			if err := s.audit.Err(); err != nil {
				return err
			}
			if r := out.Record.StopReason; r != trace.Submitted && r != trace.Declined {
				return silentExit(exitFail)
			}
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&task, "task", "", "ask the question with this instance_id from --questions")
	c.Flags().StringVar(&questions, "questions", "", "a question set (JSON lines, LiveSQLBench shape)")
	return c
}

// printOutcome writes the answer, its rows and the summary line.
func printOutcome(w io.Writer, out agent.Outcome, shown int, color bool) {
	r := out.Record
	if r.Answer != nil {
		fmt.Fprintf(w, "\n%s\n", printable(r.Answer.Text))
		if r.Answer.SQL != "" {
			fmt.Fprintf(w, "\n%s\n", highlightSQL(r.Answer.SQL, color))
		}
	}
	if out.Rows != nil {
		fmt.Fprintf(w, "\n%s", resultTable(out.Rows, shown))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\nerror: %s\n", printable(r.Error))
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary())
}
