package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/sqlguard"
)

func newValuesCmd(e *env) *cobra.Command {
	var (
		configPath string
		asJSON     bool
		auditPath  string
	)
	c := &cobra.Command{
		Use:   "values <database> <table.column> [text]",
		Short: "The stored spelling of a value: a column's values closest to a text, or its most frequent",
		Long: `Values prints the stored values of one column closest to a text, ignoring
case and forgiving typos (the values that hold the text first, then those
that share the most three-letter runs with it), or, without a text, its
most frequent values with how many rows hold each: what a filter must spell
exactly, since databases compare text exactly. It answers as the values
tool answers an agent, through the SQL guard with its limits: a hidden
column is refused.

<database> is a name from okf.yaml or a DSN (postgres://…, sqlite:PATH,
duckdb:PATH).
At most 20 values; a value longer than 200 characters is cut, and says so.

Exit status: 0 answered, 1 refused or failed, 2 bad usage or configuration.`,
		Example: `  okf values superhero publisher.publisher_name marvel
  okf values superhero gender.gender
  okf values --json sqlite:superhero.sqlite colour.colour "gren"`,
		Args: rangeArgs(2, 3, "a database, a table.column and perhaps a text"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			db, audit, closeAll, err := openGuarded(ctx, configPath, args[0], auditPath)
			if err != nil {
				return err
			}
			defer closeAll()
			text := ""
			if len(args) == 3 {
				text = args[2]
			}
			values, err := engine.ColumnValues(ctx, db, "okf values", args[1], text)
			if auditErr := audit.Err(); auditErr != nil {
				return auditErr
			}
			if ge, ok := sqlguard.AsError(err); ok {
				fmt.Fprintln(e.stderr, ge.Text(""))
				return silentExit(exitFail)
			}
			if engine.IsBadRequest(err) {
				return usageError("%v", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				if values == nil {
					values = []engine.StoredValue{}
				}
				return printJSON(e, struct {
					Column string               `json:"column"`
					Text   string               `json:"text"`
					Values []engine.StoredValue `json:"values"`
				}{args[1], text, values})
			}
			_, err = fmt.Fprintln(e.stdout, printable(engine.ValuesText(args[1], text, values)))
			return err
		},
	}
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file naming the databases")
	c.Flags().BoolVar(&asJSON, "json", false, "print the values as JSON")
	c.Flags().StringVar(&auditPath, "audit", "", "append a JSON line per statement to this file (default: audit_log in okf.yaml)")
	return c
}
