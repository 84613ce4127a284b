package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/drift"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
)

func newCompileCmd(e *env) *cobra.Command {
	var (
		out, from, generatedAt, sourceBase, schema, configPath string
		asJSON, strict, force, check, noValues                 bool
		skipValues                                             []string
	)
	c := &cobra.Command{
		Use:   "compile [<dir>...] --out <bundles>",
		Short: "Compile database documentation into OKF bundles, with a gap report",
		Long: `Compile turns what a team already has about a database into an OKF v0.2
bundle an agent can navigate: a concept per table and per business rule,
linked to each other, an index per folder and a log.

Each <dir> is one database or a folder of them. A database is recognised by
its files:

  <db>/<db>_schema.txt (+ _column_meaning_base.json, _kb.jsonl)   LiveSQLBench
  <db>/<db>.sqlite + <db>/database_description/*.csv              BIRD

--from reads one database from its live catalog instead: tables, columns,
keys, comments, enum labels and JSON key paths. A <dir> given with --from
layers that folder's meanings and rules (LiveSQLBench files or BIRD CSVs) on
top of the catalog.

From a live database (--from, or a BIRD folder's .sqlite), the table
concepts also list the values of text columns: all of them for a column of
at most 64, else the 5 most frequent, read through the SQL guard with
bounded queries. Columns okf.yaml's guard denies for that database (the
entry of the same DSN, or of the same name) are never read, nor are columns
marked as personal data; --skip-values leaves more out, --no-values reads
none.

A column is personal data where the sources say so (a dbt column's meta
pii, contains_pii, sensitive or personal_data, or such a tag), or where a
person wrote personal_data: [column, ...] in its table concept. okf never
writes okf.yaml: after the bundles, stderr names the marked columns okf.yaml
neither masks nor denies, with the guard.masked_columns lines to add.

Each bundle goes to <bundles>/<db>, replacing the previous one only once
every bundle of the run is complete. Into a bundle it compiled before (the
folder's .okf-bundle record says what okf wrote), a compile merges: files
still as okf wrote them are regenerated, files people edited or added are
kept (a hand-written rule in knowledge/ is also indexed and linked), an edit
the sources now contradict is reported, and the log gains a dated entry. A
folder okf did not write is refused unless --force is given; a folder that
is or holds the sources being compiled is always refused. The gap report (columns without a
meaning, rules linked to no table, ambiguous links, rules naming columns
that do not exist) goes to stdout; progress goes to stderr.

No time is written unless --generated-at or SOURCE_DATE_EPOCH gives one, so
the same input gives the same bytes; the log's entry then goes under the date
1970-01-01 (OKF wants every entry under a date, and the input names none).

With --check, nothing is written: each bundle in --out is compared with
what the sources say now (tables and columns added, removed or retyped,
concepts whose Columns used name a column that is gone, concepts past their
stale_after), and the exit status is 1 when anything drifted.

Exit status: 0 compiled (even with gaps) or no drift, 1 bad input, gaps
under --strict or drift under --check, 2 bad usage.`,
		Example: `  okf compile examples/shop --out bundles
  okf compile livesqlbench-base-lite/disaster --out bundles
  okf compile livesqlbench-base-lite --out bundles --json
  okf compile bird/superhero --out bundles
  okf compile jaffle_shop --out bundles
  okf compile --from postgres://localhost/solar --out bundles
  okf compile --from sqlite:shop.db docs/shop --out bundles
  SOURCE_DATE_EPOCH=1767225600 okf compile base-lite/solar --out bundles
  okf compile --from postgres://localhost/solar --out bundles --check --json`,
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageError("compile needs --out <bundles folder>")
			}
			// Refused before anything is read, so that nothing is written
			// beside the file or reported about its inside.
			if info, err := os.Stat(out); err == nil && !info.IsDir() {
				return usageError("--out %s: is a file, not a folder", out)
			}
			if from == "" && len(args) == 0 {
				return usageError("compile needs a database folder, or --from")
			}
			for _, s := range skipValues {
				if table, column, ok := strings.Cut(s, "."); !ok || table == "" || column == "" {
					return usageError("--skip-values %q: want table.column", s)
				}
			}
			if from != "" && len(args) > 1 {
				return usageError("--from compiles one database; give at most one folder of documentation to layer on it")
			}
			opt := compile.Options{Generator: "okf/" + version(), SourceBase: sourceBase}
			var err error
			if opt.GeneratedAt, err = generationTime(generatedAt); err != nil {
				return err
			}
			ctx := c.Context()
			dbs, err := readDatabases(ctx, from, schema, args)
			if err != nil {
				return err
			}
			for _, db := range dbs {
				// Columns people marked as personal data in the bundle are
				// marked before any value is read.
				if err := compile.KeepPersonalData(db, filepath.Join(out, db.Name)); err != nil {
					return err
				}
			}
			if !noValues {
				if err := readValues(ctx, e, configPath, skipValues, dbs); err != nil {
					return err
				}
			}
			bundles, err := buildBundles(e, dbs, out, opt)
			if err != nil {
				return err
			}
			if check {
				return checkDrift(e, out, bundles, asJSON)
			}
			note, err := personalDataNote(configPath, dbs)
			if err != nil {
				return err
			}
			sources := slices.Clone(args)
			if d, err := dsn.Parse(from); err == nil && (d.Engine == dsn.SQLite || d.Engine == dsn.DuckDB) {
				sources = append(sources, d.Path)
			}
			read := map[string]map[string][]byte{} // the bundles' documents, read once
			for _, b := range bundles {
				if current, err := store.ReadFolder(filepath.Join(out, b.Name)); err == nil {
					read[b.Name] = current
					if r := drift.Compare(b.Name, current, b.Files, time.Now()); r.Drifted() {
						fmt.Fprint(e.stderr, r.Text())
					}
				}
			}
			conflict := func(bundle, path, why string) { fmt.Fprintf(e.stderr, "%s: %s: %s\n", bundle, path, why) }
			if err := compile.Write(out, compile.WriteOptions{Force: force, Sources: sources, Conflict: conflict, Read: read}, bundles...); err != nil {
				return err
			}
			noun := "bundles"
			if len(bundles) == 1 {
				noun = "bundle"
			}
			fmt.Fprintf(e.stderr, "wrote %d %s to %s\n", len(bundles), noun, out)
			fmt.Fprint(e.stderr, note)
			gaps := 0
			for _, b := range bundles {
				gaps += b.Gaps.Count()
			}
			if err := writeGaps(e, out, bundles, asJSON); err != nil {
				return err
			}
			if strict && gaps > 0 {
				fmt.Fprintf(e.stderr, "okf: %d gaps, and --strict allows none\n", gaps)
				return silentExit(exitFail)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "out", "o", "", "folder that receives one bundle per database, as <out>/<db>")
	f.StringVar(&from, "from", "", "read the database from its catalog: postgres://..., sqlite:<path> or duckdb:<path>")
	f.StringVar(&schema, "schema", "", "with --from postgres or duckdb: the schema to read (default public, main for DuckDB)")
	f.BoolVar(&asJSON, "json", false, "print the gap report as JSON")
	f.BoolVar(&check, "check", false, "write nothing: compare the sources with the bundles in --out and exit 1 on drift (for CI)")
	f.BoolVar(&force, "force", false, "replace <out>/<db> folders okf did not write, whole")
	f.BoolVar(&strict, "strict", false, "exit 1 when the sources leave any gap")
	f.StringVar(&generatedAt, "generated-at", "", "write this time (RFC 3339, or a date) as generated.at and in the log; default $SOURCE_DATE_EPOCH, else none")
	f.StringVar(&sourceBase, "source-base", "", "URL prefixed to the source file names cited in frontmatter")
	f.BoolVar(&noValues, "no-values", false, "read no column values from the database")
	f.StringSliceVar(&skipValues, "skip-values", nil, "columns whose values are not read, as table.column,...")
	f.StringVar(&configPath, "config", config.DefaultFile, "configuration file whose guard options (denied columns) apply to the database's values")
	return c
}

// readDatabases reads what okf compile compiles: the catalog of --from
// (with a folder of documentation layered on it), else each folder.
func readDatabases(ctx context.Context, from, schema string, args []string) ([]*compile.Database, error) {
	if from == "" {
		var dbs []*compile.Database
		for _, dir := range args {
			found, err := source.Read(ctx, dir)
			if err != nil {
				return nil, err
			}
			dbs = append(dbs, found...)
		}
		return dbs, nil
	}
	switch d, err := dsn.Parse(from); {
	case err != nil:
		return nil, usageError("--from %v", err)
	case d.Engine == dsn.None:
		return nil, usageError("--from %q: want postgres://..., sqlite:<path> or duckdb:<path>", from)
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
	}
	db, err := source.ReadCatalog(ctx, from, schema, dir)
	if err != nil {
		return nil, err
	}
	return []*compile.Database{db}, nil
}

// buildBundles builds each database's bundle, with the concepts people
// added to its folder in out since it was compiled taking part in linking
// and indexes.
func buildBundles(e *env, dbs []*compile.Database, out string, opt compile.Options) ([]*compile.Bundle, error) {
	var bundles []*compile.Bundle
	for _, db := range dbs {
		kept, err := compile.AddKept(db, filepath.Join(out, db.Name))
		if err != nil {
			return nil, err
		}
		if kept > 0 {
			fmt.Fprintf(e.stderr, "%s: keeping %d concepts people wrote\n", db.Name, kept)
		}
		b, err := compile.Build(db, opt)
		if err != nil {
			return nil, fmt.Errorf("compiling %s: %w", db.Name, err)
		}
		fmt.Fprintf(e.stderr, "compiled %s: %d tables, %d rules, %d gaps\n", b.Name, b.Tables, b.Rules, b.Gaps.Count())
		bundles = append(bundles, b)
	}
	return bundles, nil
}

// readValues reads the values of the text columns of each database okf can
// query, through the SQL guard with okf.yaml's options for it, and says
// on stderr what it read.
func readValues(ctx context.Context, e *env, configPath string, skip []string, dbs []*compile.Database) error {
	var cfg *config.Config
	for _, db := range dbs {
		if db.Live == nil {
			continue
		}
		if cfg == nil {
			var err error
			if cfg, err = config.LoadOptional(configPath); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
		}
		audit, err := sqlguard.OpenAuditLog(cfg.AuditPath())
		if err != nil {
			return err
		}
		st, err := catalog.ReadValues(ctx, db, catalog.ValueOptions{Guard: valueGuard(cfg, db), Skip: skip, Audit: audit})
		if auditErr := audit.Close(); err == nil {
			err = auditErr
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: no values read: %v\n", db.Name, err)
			continue
		}
		fmt.Fprintf(e.stderr, "%s: the values of %d columns read from the database: %d queries, %d rows\n", db.Name, st.Columns, st.Queries, st.Rows)
		if n := len(st.Unread); n > 0 {
			fmt.Fprintf(e.stderr, "%s: %d text columns left unread: %s\n", db.Name, n, strings.Join(st.Unread[:min(n, 5)], "; "))
		}
	}
	return nil
}

// personalDataNote says, per database, which columns the sources or the
// bundle mark as personal data that okf.yaml (its entries of the same name
// or DSN) neither masks nor denies, and the lines that would mask them:
// okf never writes okf.yaml itself.
func personalDataNote(configPath string, dbs []*compile.Database) (string, error) {
	var cfg *config.Config
	var b strings.Builder
	for _, db := range dbs {
		uncovered := db.PersonalData()
		if len(uncovered) == 0 {
			continue
		}
		if cfg == nil {
			var err error
			if cfg, err = config.LoadOptional(configPath); err != nil {
				return "", &exitError{code: exitUsage, err: err}
			}
		}
		for _, d := range cfg.Databases {
			if d.Name == db.Name || db.Live != nil && sameDatabase(d.DSN, db.Live.DSN) {
				uncovered = d.Guard.Uncovered(uncovered)
			}
		}
		switch len(uncovered) {
		case 0:
			continue
		case 1:
			fmt.Fprintf(&b, "%s: 1 column marked as personal data is neither masked nor denied in %s", db.Name, configPath)
		default:
			fmt.Fprintf(&b, "%s: %d columns marked as personal data are neither masked nor denied in %s", db.Name, len(uncovered), configPath)
		}
		fmt.Fprintf(&b, "; add to the entry of %s:\n  guard:\n    masked_columns: [%s]\n", db.Name, strings.Join(uncovered, ", "))
	}
	return b.String(), nil
}

// valueGuard returns the guard options okf.yaml gives a database: those of
// the entry of the same DSN (the same SQLite file), else of the same
// name, with the columns either entry denies.
func valueGuard(cfg *config.Config, db *compile.Database) sqlguard.Options {
	var opts *sqlguard.Options
	var denied []string
	for _, d := range cfg.Databases {
		same := sameDatabase(d.DSN, db.Live.DSN)
		if !same && d.Name != db.Name {
			continue
		}
		denied = append(denied, d.Guard.DeniedColumns...)
		if o := d.Guard.Options(); opts == nil || same {
			opts = &o
		}
	}
	if opts == nil {
		return sqlguard.Options{}
	}
	opts.DeniedColumns = denied
	return *opts
}

// sameDatabase reports whether two DSNs name the same SQLite or DuckDB
// file, or are the same PostgreSQL DSN.
func sameDatabase(a, b string) bool {
	da, errA := dsn.Parse(a)
	db, errB := dsn.Parse(b)
	if errA != nil || errB != nil || da.Engine != db.Engine || da.Engine == dsn.None {
		return false
	}
	if da.Engine == dsn.SQLite || da.Engine == dsn.DuckDB {
		pa, errA := filepath.Abs(da.Path)
		pb, errB := filepath.Abs(db.Path)
		return errA == nil && errB == nil && pa == pb
	}
	return a == b
}

// generationTime reads --generated-at, else SOURCE_DATE_EPOCH; the zero
// time means none.
func generationTime(flag string) (time.Time, error) {
	if flag != "" {
		if t, err := time.Parse(time.RFC3339, flag); err == nil {
			return t, nil
		}
		if t, err := time.Parse("2006-01-02", flag); err == nil {
			return t, nil
		}
		return time.Time{}, usageError("--generated-at %q: want an RFC 3339 time (2026-11-29T12:00:00Z) or a date (2026-11-29)", flag)
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, usageError("SOURCE_DATE_EPOCH=%q: want whole seconds since 1970", s)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	return time.Time{}, nil
}

// gapReport is the JSON form of a run's gaps.
type gapReport struct {
	Out     string       `json:"out"`
	Bundles []bundleGaps `json:"bundles"`
}

type bundleGaps struct {
	Name   string        `json:"name"`
	Path   string        `json:"path"`
	Tables int           `json:"tables"`
	Rules  int           `json:"rules"`
	Gaps   *compile.Gaps `json:"gaps"`
}

func writeGaps(e *env, out string, bundles []*compile.Bundle, asJSON bool) error {
	if asJSON {
		rep := gapReport{Out: out}
		for _, b := range bundles {
			rep.Bundles = append(rep.Bundles, bundleGaps{Name: b.Name, Path: filepath.Join(out, b.Name), Tables: b.Tables, Rules: b.Rules, Gaps: b.Gaps})
		}
		return printJSON(e, rep)
	}
	for _, b := range bundles {
		if err := b.Gaps.WriteText(e.stdout); err != nil {
			return err
		}
	}
	return nil
}

// checkDrift compares each compiled bundle with the one in out and prints
// the drift; exit 1 when any.
func checkDrift(e *env, out string, bundles []*compile.Bundle, asJSON bool) error {
	var reports []drift.Report
	drifted := false
	for _, b := range bundles {
		current, err := store.ReadFolder(filepath.Join(out, b.Name))
		if errors.Is(err, fs.ErrNotExist) {
			current, err = nil, nil
		}
		if err != nil {
			return err
		}
		r := drift.Compare(b.Name, current, b.Files, time.Now())
		drifted = drifted || r.Drifted()
		reports = append(reports, r)
	}
	if asJSON {
		if err := printJSON(e, reports); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			fmt.Fprint(e.stdout, r.Text())
		}
	}
	if drifted {
		return silentExit(exitFail)
	}
	return nil
}
