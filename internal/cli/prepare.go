package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/sqlguard"
)

// envAdminDSN names the variable holding the admin DSN when neither the
// flag nor okf.yaml gives one.
const envAdminDSN = "OKF_ADMIN_DSN"

func newPrepareCmd(e *env) *cobra.Command {
	var configPath, adminDSN string
	c := &cobra.Command{
		Use:   "prepare <database>",
		Short: "Set a PostgreSQL database up for agents: a read-only role, checked",
		Long: `Prepare creates or updates the agent's login role (the user of the database's
DSN) with CONNECT, USAGE and SELECT only: SELECT on the allowed tables, and
only on the visible columns of tables with denied columns, and a connection
limit (guard.connection_limit, default 20). It revokes CREATE on schema
public and TEMPORARY on the database from PUBLIC, and the role's own grants
on other databases. Running it again brings the grants in line with okf.yaml.

The row filters of every policy in okf.yaml that uses the database become
row-level security policies for the role, which read the caller's values
the guard signs into each transaction; views over filtered tables that
row-level security cannot reach through are not granted.

It then lists what no grant can take away from the role (connecting to
other databases through PUBLIC, signalling its own sessions, functions
PUBLIC may execute) and how an operator could close each.

It connects with an admin DSN: --admin-dsn, else guard.admin_dsn in okf.yaml,
else $OKF_ADMIN_DSN. It ends by trying, as the agent's role and outside the
guard's other layers, a read, a write, DDL and a server-file read, and prints
which are allowed and which are blocked.

Exit status: 0 the role reads and nothing else, 1 setup failed or the role can
do more than read, 2 bad usage or configuration.`,
		Example: `  OKF_AGENT_PASSWORD=… okf prepare solar
  okf prepare --admin-dsn postgres://postgres@localhost/solar solar`,
		Args: exactArgs(1, "one database"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			cfg, err := config.LoadOptional(configPath)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			d, err := cfg.Database(args[0])
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if p, _ := dsn.Parse(d.DSN); p.Engine == dsn.SQLite || p.Engine == dsn.DuckDB {
				// Nothing to set up: say what the agent can reach.
				g, err := sqlguard.Open(ctx, d.Name, d.DSN, d.Guard.Options(), nil)
				if err != nil {
					return err
				}
				defer g.Close()
				fmt.Fprintf(e.stdout, "%s needs no preparing:\n", args[0])
				for _, l := range readableLines(p.Engine, g.Readable()) {
					fmt.Fprintf(e.stdout, "  %s\n", l)
				}
				return nil
			}
			admin := firstNonEmpty(adminDSN, d.Guard.AdminDSN, os.Getenv(envAdminDSN))
			if admin == "" {
				return usageError("no admin DSN: pass --admin-dsn, set guard.admin_dsn in %s, or set %s", configPath, envAdminDSN)
			}
			setup, err := sqlguard.PreparePostgres(ctx, admin, d.DSN, d.Guard.Options(), policyOptions(cfg, d)...)
			if err != nil {
				return fmt.Errorf("preparing %s: %w", d.Name, err)
			}
			for _, s := range setup.Steps {
				fmt.Fprintf(e.stdout, "  %s\n", s)
			}
			fmt.Fprintf(e.stdout, "role %s can read %s in %s", setup.Role, countNoun(len(setup.Tables), "table"), setup.Database)
			if len(setup.Hidden) > 0 {
				fmt.Fprintf(e.stdout, "; %s hidden", countNoun(len(setup.Hidden), "column"))
			}
			fmt.Fprintln(e.stdout)
			if len(setup.Tables) == 0 {
				return fmt.Errorf("role %s can read no table: check guard.tables and guard.schemas", setup.Role)
			}
			probes, err := sqlguard.ProbePostgres(ctx, d.DSN, setup.Tables[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nwhat %s can do in %s:\n", setup.Role, setup.Database)
			wrong := 0
			for _, p := range probes {
				verdict := "blocked"
				if p.Allowed {
					verdict = "allowed"
				}
				mark := ""
				if p.Allowed != p.Want {
					wrong++
					mark = "  <- should be " + map[bool]string{true: "allowed", false: "blocked"}[p.Want]
				}
				fmt.Fprintf(e.stdout, "  %-8s %s: %s%s\n", verdict, p.What, p.Result, mark)
			}
			fmt.Fprintf(e.stdout, "\nwhat okf cannot take away from %s:\n", setup.Role)
			for _, n := range setup.Reach.Notes() {
				fmt.Fprintf(e.stdout, "  - %s\n", n)
			}
			if wrong > 0 {
				return fmt.Errorf("role %s can do %d things it should not (see above)", setup.Role, wrong)
			}
			return nil
		},
	}
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file naming the databases")
	c.Flags().StringVar(&adminDSN, "admin-dsn", "", "DSN of a role allowed to create roles and grant privileges")
	return c
}

// policyOptions are the guard options of d under each policy of cfg that
// may use it, in okf.yaml's order.
func policyOptions(cfg *config.Config, d config.Database) []sqlguard.Options {
	var out []sqlguard.Options
	byName := policies(cfg)
	for _, p := range cfg.Policies {
		if ep := byName[p.Name]; ep.Allows(d.Name) {
			out = append(out, ep.Options(d.Guard.Options()))
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
