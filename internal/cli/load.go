package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/load"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/internal/dsn"
)

func newLoadCmd(e *env) *cobra.Command {
	var (
		into, print           string
		fromMeanings, addKeys bool
	)
	c := &cobra.Command{
		Use:   "load <dir> (--into <database> | --print postgres|sqlite|duckdb)",
		Short: "Create an empty database from a database's documentation",
		Long: `Load creates the tables, keys and enum types a database's documentation
describes, in an empty PostgreSQL database or a new SQLite or DuckDB file, so that the
documentation (and the SQL written from it) can be tried against a real
engine. <dir> is a database folder as okf compile reads it.

A schema dump is not executable DDL, so load maps what it must and says so
on stderr: USER-DEFINED becomes an enum type when its labels are known, a
domain over text named after the enum type when the meaning names one, and
text otherwise; ARRAY becomes text[]. A foreign key whose target column is
missing or not a key is left out, unless --add-missing-keys adds the column
or a unique constraint. Everything runs in one transaction.

--print writes the DDL to stdout instead of running it.`,
		Example: `  okf load livesqlbench-base-lite/solar --into postgres://localhost/solar
  okf load livesqlbench-base-lite/museum --into sqlite:museum.db --add-missing-keys
  okf load livesqlbench-base-lite/solar --into duckdb:solar.duckdb
  okf load livesqlbench-base-lite/credit --print postgres --enums-from-meanings`,
		Args: exactArgs(1, "one database folder"),
		RunE: func(c *cobra.Command, args []string) error {
			if (into == "") == (print == "") {
				return usageError("load needs exactly one of --into and --print")
			}
			dbs, err := source.Read(c.Context(), args[0])
			if err != nil {
				return err
			}
			if len(dbs) != 1 {
				return usageError("%s holds %d databases; load takes one", args[0], len(dbs))
			}
			db := dbs[0]
			opt := load.Options{EnumsFromMeanings: fromMeanings, AddMissingKeys: addKeys}
			target, err := dsn.Parse(into)
			if err != nil {
				return usageError("--into %v", err)
			}
			var plan *load.Plan
			switch {
			case print == "postgres":
				plan, err = load.PostgresDDL(db, opt)
			case print == "sqlite":
				plan, err = load.SQLiteDDL(db, opt)
			case print == "duckdb":
				plan, err = load.DuckDBDDL(db, opt)
			case print != "":
				return usageError("--print %q: want postgres, sqlite or duckdb", print)
			case target.Engine == dsn.Postgres:
				plan, err = load.Postgres(c.Context(), into, db, opt)
			case target.Engine == dsn.SQLite:
				plan, err = load.SQLite(c.Context(), target.Path, db, opt)
			case target.Engine == dsn.DuckDB:
				plan, err = load.DuckDB(c.Context(), target.Path, db, opt)
			default:
				return usageError("--into %q: want postgres://..., sqlite:<path> or duckdb:<path>", into)
			}
			if err != nil {
				return err
			}
			for _, n := range plan.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			if print != "" {
				for _, s := range plan.Statements {
					if _, err := fmt.Fprintf(e.stdout, "%s;\n\n", s); err != nil {
						return err
					}
				}
				return nil
			}
			fmt.Fprintf(e.stderr, "loaded %s: %s\n", db.Name, summary(db, plan))
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&into, "into", "", "database to create the tables in: postgres://... (an existing, empty database), sqlite:<new file> or duckdb:<new file>")
	f.StringVar(&print, "print", "", "print the DDL for postgres, sqlite or duckdb instead of running it")
	f.BoolVar(&fromMeanings, "enums-from-meanings", false, "create enum types from labels listed in column meanings")
	f.BoolVar(&addKeys, "add-missing-keys", false, "add referenced columns and unique constraints so every foreign key can be created")
	return c
}

func summary(db *compile.Database, plan *load.Plan) string {
	return fmt.Sprintf("%d tables, %d statements, %d notes", len(db.Tables), len(plan.Statements), len(plan.Notes))
}
