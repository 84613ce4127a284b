package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

func newDoctorCmd(e *env) *cobra.Command {
	var (
		configPath string
		model      string
		only       string
	)
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that the model answers and calls tools, databases are reachable read-only, and bundles are valid",
		Long: `Doctor checks the setup okf ask and okf chat need, one line per check:

  model     one tiny call offering one tool: the model must answer and call
            it; tokens, cost and time are shown
  database  each database in okf.yaml opens through the SQL guard and
            answers SELECT 1 as the agent's role; on PostgreSQL the role is
            probed (read, write, DDL, temporary table, server file) inside
            transactions that are rolled back (on the first of guard.tables,
            else the first table of the bundle)
  bundle    each database's bundle folder loads and validates (OKF v0.2);
            okf.yaml masks or denies every column it marks as personal data
            (warn when not)

Exit status: 0 every check passed, 1 a check failed, 2 bad configuration.`,
		Example: `  okf doctor
  okf doctor --model anthropic/claude-haiku-4-5 --db disaster`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := context.Background()
			cfg, err := loadAgentConfig(configPath)
			if err != nil {
				return err
			}
			d := &doctor{w: e.stdout}
			if cfg.Path == "" {
				d.line("warn", "config", fmt.Sprintf("no %s here: only --model and --db DSNs can be checked", configPath))
			} else {
				d.line("ok", "config", fmt.Sprintf("%s: %d databases, %d models", cfg.Path, len(cfg.Databases), len(cfg.Agent.Models)))
			}
			d.model(ctx, cfg, model)
			dbs := cfg.Databases
			if only != "" {
				db, err := cfg.Database(only)
				if err != nil {
					return usageError("%v", err)
				}
				dbs = []config.Database{db}
			}
			for _, db := range dbs {
				table := d.bundle(cfg, db)
				d.database(ctx, db, table)
			}
			if d.failed > 0 {
				fmt.Fprintf(e.stdout, "%d checks failed\n", d.failed)
				return silentExit(exitFail)
			}
			return nil
		},
	}
	c.Flags().StringVar(&configPath, "config", config.DefaultFile, "configuration file naming the databases and models")
	c.Flags().StringVar(&model, "model", "", "check this model instead of the default")
	c.Flags().StringVar(&only, "db", "", "check only this database")
	return c
}

type doctor struct {
	w      io.Writer
	failed int
}

func (d *doctor) line(status, what, detail string) {
	if status == "FAIL" {
		d.failed++
	}
	fmt.Fprintf(d.w, "%-4s  %-24s %s\n", status, what, detail)
}

var pingTool = llm.Tool{Name: "ping", Description: "Answer the health check.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`)}

func (d *doctor) model(ctx context.Context, cfg *config.Config, ref string) {
	mc, err := cfg.Agent.ModelConfig(ref, os.LookupEnv)
	if err != nil {
		d.line("FAIL", "model", err.Error())
		return
	}
	mc.MaxRetries, mc.MaxTokens = 1, 256
	m, err := llm.New(mc)
	if err != nil {
		d.line("FAIL", "model "+mc.Name, err.Error())
		return
	}
	if mc.Provider == llm.Script {
		d.line("ok", "model "+m.Name(), "replays "+mc.Script+" with no network; nothing to call")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := m.Chat(ctx, &llm.Request{
		System:   "You are a health check. Call the ping tool with the word pong.",
		Tools:    []llm.Tool{pingTool},
		Messages: []llm.Message{{Role: llm.User, Content: "ping"}},
	})
	if err != nil {
		d.line("FAIL", "model "+m.Name(), err.Error())
		return
	}
	usage := fmt.Sprintf("%d in / %d out tokens, %s, %.1fs", resp.Usage.Input, resp.Usage.Output, trace.CostText(resp.Cost), resp.ModelTime.Seconds())
	if len(resp.Message.ToolCalls) == 0 || resp.Message.ToolCalls[0].Name != "ping" {
		d.line("FAIL", "model "+m.Name(), "answered but called no tool, so it cannot run the agent ("+usage+")")
		return
	}
	d.line("ok", "model "+m.Name(), "answers and calls tools ("+usage+")")
}

// database checks one database; table, when known, is a table to probe
// the agent's role with if guard.tables names none.
func (d *doctor) database(ctx context.Context, db config.Database, table string) {
	what := "database " + db.Name
	g, err := sqlguard.Open(ctx, db.Name, db.DSN, db.Guard.Options(), nil)
	if err != nil {
		d.line("FAIL", what, err.Error())
		return
	}
	defer g.Close()
	if _, err := g.Query(ctx, "okf doctor", "SELECT 1"); err != nil {
		d.line("FAIL", what, "SELECT 1 through the guard: "+err.Error())
		return
	}
	if p, _ := dsn.Parse(db.DSN); p.Engine == dsn.SQLite || p.Engine == dsn.DuckDB {
		for _, l := range readableLines(p.Engine, g.Readable()) {
			d.line("ok", what, l)
		}
		return
	}
	d.line("ok", what, "PostgreSQL, answers through the guard as the agent's role")
	if len(db.Guard.Tables) > 0 {
		table = db.Guard.Tables[0]
	}
	if table == "" {
		d.line("warn", what, "no table to probe the role with (set guard.tables or a bundle); okf prepare shows what it may do")
		return
	}
	probes, err := sqlguard.ProbePostgres(ctx, db.DSN, table)
	if err != nil {
		d.line("FAIL", what, err.Error())
		return
	}
	for _, p := range probes {
		status, verb := "ok", "blocked"
		if p.Allowed {
			verb = "allowed"
		}
		if p.Allowed != p.Want {
			status = "FAIL"
		}
		d.line(status, what, fmt.Sprintf("role %s: %s (%s)", verb, p.What, firstLine(p.Result)))
	}
	reach, err := sqlguard.InspectAgent(ctx, db.DSN)
	if err != nil {
		d.line("FAIL", what, err.Error())
		return
	}
	for _, n := range reach.Notes() {
		d.line("warn", what, n)
	}
}

// bundle checks a database's bundle folder and returns one of its tables.
func (d *doctor) bundle(cfg *config.Config, db config.Database) string {
	if db.Bundle == "" {
		d.line("warn", "bundle of "+db.Name, "none set in okf.yaml: the agent reads the store")
		return ""
	}
	dir := db.Bundle
	if !filepath.IsAbs(dir) && cfg.Path != "" {
		dir = filepath.Join(filepath.Dir(cfg.Path), dir)
	}
	what := "bundle " + db.Bundle
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		d.line("warn", what, "not a folder here; the agent looks for a bundle of that name in the store")
		return ""
	}
	b, err := okf.Load(dir)
	if err != nil {
		d.line("FAIL", what, err.Error())
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "index.md")); err != nil {
		d.line("warn", what, "no index.md: not compiled by okf compile? browse falls back to folder listings")
	}
	table := ""
	for _, doc := range b.Docs {
		if name, ok := strings.CutPrefix(doc.Path, "tables/"); ok && name != "index.md" && !strings.Contains(name, "/") {
			table = strings.TrimSuffix(name, ".md")
			break
		}
	}
	rep := okf.Validate(b, okf.Options{})
	detail := fmt.Sprintf("%d documents, %d errors, %d warnings", len(b.Docs), rep.Count(okf.Error), rep.Count(okf.Warning))
	if rep.Count(okf.Error) > 0 {
		d.line("FAIL", what, detail+" (okf validate "+db.Bundle+")")
	} else {
		d.line("ok", what, detail)
	}
	d.personalData(db, b)
	return table
}

// personalData checks that okf.yaml masks or denies every column the
// bundle marks as personal data; a bundle that marks none says nothing.
func (d *doctor) personalData(db config.Database, b *okf.Bundle) {
	marked := b.PersonalData()
	if len(marked) == 0 {
		return
	}
	what := "personal data of " + db.Name
	if uncovered := db.Guard.Uncovered(marked); len(uncovered) > 0 {
		d.line("warn", what, fmt.Sprintf("%s: marked as personal data in the bundle, neither masked nor denied: add them to guard.masked_columns of %s in okf.yaml",
			strings.Join(uncovered, ", "), db.Name))
		return
	}
	columns := fmt.Sprintf("%d columns", len(marked))
	if len(marked) == 1 {
		columns = "1 column"
	}
	d.line("ok", what, columns+" marked as personal data in the bundle, each masked or denied")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// readableLines say what the agent can read of a SQLite or DuckDB file,
// for okf doctor and okf prepare.
func readableLines(engine dsn.Engine, r sqlguard.Readable) []string {
	lines := []string{fmt.Sprintf("%s, opened read-only through the guard: the agent reads %d tables, %d columns (%d masked), %d columns hidden",
		engine.Name(), r.Tables, r.Columns, r.MaskedColumns, r.HiddenColumns)}
	if engine == dsn.DuckDB {
		files := "no file outside the database"
		if len(r.Files) > 0 {
			files = "views may read files under " + strings.Join(r.Files, ", ")
		}
		lines = append(lines, files)
	}
	return lines
}
