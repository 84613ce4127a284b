package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/sqlguard"
)

func newSQLCmd(e *env) *cobra.Command {
	var (
		configPath string
		asJSON     bool
		shown      int
		auditPath  string
	)
	c := &cobra.Command{
		Use:   "sql <database> <query>",
		Short: "Run one query through the SQL guard, exactly as an agent would",
		Long: `Sql runs one query on a database through every layer of the SQL guard and
prints what an agent would read: the column names, up to --rows rows with
numbers exactly as the database returns them, long cells cut, and "N of M
rows".

<database> is a name from okf.yaml or a DSN: postgres://user@host/db,
sqlite:path/to/file.sqlite or duckdb:path/to/file.duckdb. The query must be
one SELECT, VALUES or WITH;
anything else is refused with the layer that refused it, the position and a
hint. See docs/security.md for the layers.

Exit status: 0 the query ran, 1 it was refused or failed, 2 bad usage or
configuration.`,
		Example: `  okf sql superhero "SELECT superhero_name FROM superhero LIMIT 3"
  okf sql sqlite:superhero.sqlite "SELECT count(*) FROM hero_power"
  okf sql duckdb:hubs.duckdb "SELECT 1"
  okf sql --json solar "SELECT * FROM plant"
  okf sql --audit audit.jsonl solar "SELECT 1"`,
		Args: exactArgs(2, "a database and a query"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			db, audit, closeAll, err := openGuarded(ctx, configPath, args[0], auditPath)
			if err != nil {
				return err
			}
			defer closeAll()
			res, err := db.Query(ctx, "okf sql", args[1])
			if auditErr := audit.Err(); auditErr != nil {
				return auditErr
			}
			if ge, ok := sqlguard.AsError(err); ok {
				fmt.Fprintln(e.stderr, ge.Text(args[1]))
				return silentExit(exitFail)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e, res)
			}
			if shown <= 0 {
				shown = db.Options().ShownRows
			}
			_, err = fmt.Fprintln(e.stdout, printable(res.Text(shown)))
			return err
		},
	}
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file naming the databases")
	c.Flags().BoolVar(&asJSON, "json", false, "print the typed rows as JSON")
	c.Flags().IntVar(&shown, "rows", 0, "rows to print (default: the database's shown_rows, 20)")
	c.Flags().StringVar(&auditPath, "audit", "", "append a JSON line per statement to this file (default: audit_log in okf.yaml)")
	return c
}

// openGuarded opens the database ref through the guard, with the audit log
// appended to auditPath, else to the configuration's audit_log, if either
// is set.
func openGuarded(ctx context.Context, configPath, ref, auditPath string) (*sqlguard.DB, *sqlguard.AuditLog, func(), error) {
	cfg, err := config.LoadOptional(configPath)
	if err != nil {
		return nil, nil, nil, &exitError{code: exitUsage, err: err}
	}
	d, err := cfg.Database(ref)
	if err != nil {
		return nil, nil, nil, &exitError{code: exitUsage, err: err}
	}
	if auditPath == "" {
		auditPath = cfg.AuditPath()
	}
	audit, err := sqlguard.OpenAuditLog(auditPath)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := sqlguard.Open(ctx, d.Name, d.DSN, d.Guard.Options(), audit)
	if err != nil {
		audit.Close()
		return nil, nil, nil, err
	}
	return db, audit, func() {
		db.Close()
		audit.Close()
	}, nil
}
