package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/examples/shop"
	"github.com/okf-tools/okf/graph"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
	"github.com/okf-tools/okf/trace"
)

// demoDate is the time the demo's bundle says it was generated, so the
// demo writes the same bytes every time.
var demoDate = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// demoGuarded is the question whose gold SQL the demo runs through the
// guard, and demoAsked the one it asks a model.
const (
	demoGuarded = "shop_3"
	demoAsked   = "shop_1"
	// demoAttack smuggles a write in after a query.
	demoAttack = "SELECT count(*) FROM customers; DELETE FROM customers"
)

func newDemoCmd(e *env) *cobra.Command {
	var (
		dir, configPath, model, question string
		budget                           int
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run okf end to end on the example shop database",
		Long: `Demo shows okf doing its whole job on the example shop database that ships
inside the binary (examples/shop), with nothing to set up:

  1. writes the shop's documentation (a schema dump, column meanings, ten
     business rules) and ten example questions into --dir, and creates the
     SQLite database shop.db from shop.sql (a few thousand rows);
  2. compiles the documentation into an OKF bundle and validates it;
  3. imports the bundle into an embedded store in --dir, and draws it as a
     page, shop.html (okf graph);
  4. shows the knowledge each question needs: its context pack, and the
     pack's tokens against pasting the raw documentation;
  5. runs one query through the SQL guard, and one attack it refuses;
  6. with a model configured (okf.yaml's agent section, or --model), asks
     it a question end to end and draws the run as a page, run.html (okf
     runs --html); without one, prints the ways to connect an agent.

It also writes --dir/okf.yaml naming the shop database, for okf sql, mcp
and serve. --dir must be new, empty, or made by an earlier okf demo (it
holds a .okf-demo file); each run replaces what the previous one wrote there
(shop/, shop.db, bundles/shop, data/, okf.yaml, shop.html, run.html) and
leaves the rest alone,
such as runs/, the run log of the questions asked. The output is
the same every time except for the timings.`,
		Example: `  okf demo
  okf demo --dir /tmp/okf-demo
  okf demo --model openai/gpt-4.1-mini --question shop_5`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if budget < 100 {
				return usageError("--budget %d is too small to hold anything useful (at least 100)", budget)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			d := &demo{e: e, dir: dir, configPath: configPath, model: model, question: question, budget: budget, start: time.Now()}
			return d.run(ctx)
		},
	}
	f := c.Flags()
	f.StringVar(&dir, "dir", ".demo", "the working folder the demo writes into")
	f.StringVar(&configPath, "config", config.DefaultFile, "configuration file whose agent section names the model")
	f.StringVar(&model, "model", "", "the model to ask: a name from okf.yaml, or provider/model (default: okf.yaml's agent.model)")
	f.StringVar(&question, "question", demoAsked, "the example question to ask the model: an instance_id, or any question of your own")
	f.IntVar(&budget, "budget", engine.DefaultBudget, "the token budget of each context pack")
	return c
}

// demo is one run of okf demo.
type demo struct {
	e                   *env
	dir                 string
	configPath, model   string
	question            string
	budget              int
	start               time.Time
	docs, db, data, out string // the paths it writes
	questions           []eval.Question
	// ask is set when a model is configured.
	ask bool
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.e.stdout, format, args...) }

func (d *demo) section(n int, title string) { d.say("\n%d. %s\n\n", n, title) }

func (d *demo) run(ctx context.Context) error {
	d.docs = filepath.Join(d.dir, shop.Name)
	d.db = filepath.Join(d.dir, shop.Name+".db")
	d.out = filepath.Join(d.dir, "bundles")
	d.data = filepath.Join(d.dir, "data")
	// A model named but unusable is an error before any work, not after.
	cfg, err := loadAgentConfig(d.configPath)
	if err != nil {
		return err
	}
	d.ask = d.model != "" || cfg.Agent.Model != "" || len(cfg.Agent.Models) == 1
	if d.ask {
		mc, err := cfg.Agent.ModelConfig(d.model, os.LookupEnv)
		if err == nil {
			_, err = llm.New(mc)
		}
		if err != nil {
			return usageError("%v", err)
		}
	}
	if err := d.clean(); err != nil {
		return err
	}
	d.say("okf demo: the example shop database, from its documentation to an agent's answer (in %s)\n", d.dir)
	steps := []func(context.Context) error{d.database, d.bundle, d.store, d.knowledge, d.guard, d.answer}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.say("\ndone in %s\n", time.Since(d.start).Round(10*time.Millisecond))
	return nil
}

// demoMarker marks a folder okf demo made, so a later run may clear it.
const demoMarker = ".okf-demo"

// clean removes what a previous demo wrote, and only that. It refuses a
// folder that holds anything without being the demo's own.
func (d *demo) clean() error {
	entries, err := os.ReadDir(d.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the demo folder: %w", err)
	}
	if len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(d.dir, demoMarker)); err != nil {
			return usageError("%s holds files okf demo did not write: give a new or empty folder with --dir", d.dir)
		}
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return fmt.Errorf("creating the demo folder: %w", err)
	}
	marker := "This folder was made by okf demo, which replaces shop/, shop.db, bundles/shop, data/, okf.yaml, shop.html and run.html here on every run.\n"
	if err := os.WriteFile(filepath.Join(d.dir, demoMarker), []byte(marker), 0o644); err != nil {
		return fmt.Errorf("marking the demo folder: %w", err)
	}
	for _, p := range []string{d.docs, d.db, filepath.Join(d.out, shop.Name), d.data, d.config(), d.graphPage(), d.runPage()} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clearing the previous demo: %w", err)
		}
	}
	return nil
}

func (d *demo) database(ctx context.Context) error {
	d.section(1, "The database and its documentation")
	if _, err := shop.WriteDocs(d.dir); err != nil {
		return err
	}
	qs, err := eval.LoadQuestions(filepath.Join(d.docs, shop.QuestionsFile))
	if err != nil {
		return err
	}
	d.questions = qs
	d.say("wrote %s: %s, %s, %s and %d questions (%s)\n", d.docs, shop.SchemaFile, shop.MeaningsFile, shop.RulesFile, len(qs), shop.QuestionsFile)
	if err := shop.Create(ctx, d.db); err != nil {
		return err
	}
	gdb, err := sqlguard.Open(ctx, shop.Name, "sqlite:"+d.db, sqlguard.Options{}, nil)
	if err != nil {
		return err
	}
	defer gdb.Close()
	var counts []string
	for _, t := range []string{"customers", "orders", "payments", "deliveries", "returns"} {
		res, err := gdb.Query(ctx, "okf demo", "SELECT count(*) FROM "+t)
		if err != nil {
			return fmt.Errorf("counting %s: %w", t, err)
		}
		counts = append(counts, fmt.Sprintf("%s %s", sqlguard.Cell(res.Rows[0][0]), t))
	}
	d.say("created %s from %s: %s\n", d.db, shop.SQLFile, strings.Join(counts, ", "))
	return d.writeConfig()
}

// writeConfig writes dir/okf.yaml naming the shop database and its bundle,
// for okf sql, mcp and serve to use with --config.
func (d *demo) writeConfig() error {
	db, err := filepath.Abs(d.db)
	if err != nil {
		return err
	}
	bundle, err := filepath.Abs(filepath.Join(d.out, shop.Name))
	if err != nil {
		return err
	}
	yaml := fmt.Sprintf("# Written by okf demo: the example shop database, for okf sql, ask, mcp and serve.\ndatabases:\n  - name: %s\n    dsn: %q\n    bundle: %q\n",
		shop.Name, "sqlite:"+filepath.ToSlash(db), filepath.ToSlash(bundle))
	if err := os.WriteFile(d.config(), []byte(yaml), 0o644); err != nil {
		return fmt.Errorf("writing the demo's configuration: %w", err)
	}
	return nil
}

// config is the configuration file the demo writes.
func (d *demo) config() string { return filepath.Join(d.dir, config.DefaultFile) }

func (d *demo) bundle(context.Context) error {
	d.section(2, "Compile the documentation into an OKF bundle, and validate it")
	db, err := livesqlbench.Read(d.docs)
	if err != nil {
		return err
	}
	if err := compile.ReadQueries(db, d.docs); err != nil {
		return err
	}
	b, err := compile.Build(db, compile.Options{Generator: "okf/" + version(), GeneratedAt: demoDate})
	if err != nil {
		return fmt.Errorf("compiling %s: %w", db.Name, err)
	}
	if err := compile.Write(d.out, compile.WriteOptions{}, b); err != nil {
		return err
	}
	path := filepath.Join(d.out, b.Name)
	d.say("$ okf compile %s --out %s\n", d.docs, d.out)
	d.say("compiled %s: %d tables, %d business rules, %d gaps\n", path, b.Tables, b.Rules, b.Gaps.Count())
	loaded, err := okf.Load(path)
	if err != nil {
		return fmt.Errorf("reading bundle %s: %w", path, err)
	}
	rep := okf.Validate(loaded, okf.Options{Now: demoDate})
	d.say("$ okf validate --strict %s\n", path)
	d.say("%d concepts, %d indexes, a log: %d errors, %d warnings\n", rep.Counts.Concepts, rep.Counts.Indexes, rep.Count(okf.Error), rep.Count(okf.Warning))
	if !rep.Passed(0) {
		_ = rep.WriteText(d.e.stderr, path, 0, false)
		return errors.New("the example bundle does not pass okf validate --strict")
	}
	return nil
}

func (d *demo) store(ctx context.Context) error {
	d.section(3, "Keep it in the knowledge store, and draw it")
	bundles, err := readBundles(filepath.Join(d.out, shop.Name), shop.Name)
	if err != nil {
		return err
	}
	sf := storeFlags{data: d.data, tenant: "default"}
	st, err := sf.create(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	commit, err := st.Sync(ctx, sf.tenant, bundles, "okf demo")
	if err != nil {
		return fmt.Errorf("importing the shop bundle: %w", err)
	}
	snap, _, err := engine.StoreHead(st, sf.tenant).Snapshot(ctx, "")
	if err != nil {
		return err
	}
	d.say("$ okf import %s --data %s\n", d.out, d.data)
	d.say("commit %d: %d documents stored byte for byte in %s; read model %s: %d concepts\n",
		commit.ID, len(commit.Changes), filepath.Join(d.data, store.DefaultFile), snap.Digest[:12], len(snap.Concepts))
	g, err := graph.Build(snap, shop.Name, demoDate)
	if err != nil {
		return err
	}
	if err := writePage(d.graphPage(), g.WriteHTML); err != nil {
		return err
	}
	d.say("$ okf graph %s -o %s\ndrew %d concepts and %d links: open %s in a browser\n",
		filepath.Join(d.out, shop.Name), d.graphPage(), len(g.Nodes), len(g.Links), d.graphPage())
	return nil
}

// runPage is where the demo draws the model's run.
func (d *demo) runPage() string { return filepath.Join(d.dir, "run.html") }

// graphPage is where the demo draws the bundle.
func (d *demo) graphPage() string { return filepath.Join(d.dir, shop.Name+".html") }

func (d *demo) knowledge(ctx context.Context) error {
	d.section(4, "The knowledge each question needs")
	sf := storeFlags{data: d.data, tenant: "default"}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := engine.Open(ctx, engine.StoreHead(st, sf.tenant), "")
	if err != nil {
		return err
	}
	corpus, err := eval.LoadCorpus(d.out, d.dir, eval.DefaultOptions().Weights)
	if err != nil {
		return fmt.Errorf("reading the questions' gold rules: %w", err)
	}
	raw := tokens.Count(corpus.Raw[shop.Name])
	d.say("Pasting the raw documentation into a prompt costs %d tokens (o200k) for every question.\n", raw)
	d.say("A context pack holds the rules a question needs, the columns they use and the joins, under %d tokens:\n\n", d.budget)
	tw := newTable(d.e.stdout, "question", "pack tokens", "of raw", "gold rules held")
	var packTokens, gold, held int
	var first engine.Pack
	var misses []string
	for i, q := range d.questions {
		pack, err := engine.Context(ctx, v, engine.ContextRequest{Question: q.Text, Budget: d.budget, Bundle: shop.Name})
		if err != nil {
			return err
		}
		if i == 0 {
			first = pack
		}
		missed := corpus.MissingRules(shop.Name, q, pack)
		if len(missed) > 0 {
			misses = append(misses, fmt.Sprintf("%s's pack lacks %s", q.ID, strings.Join(missed, ", ")))
		}
		n := len(q.Rules) - len(missed)
		tw.row(fmt.Sprintf("%-8s%s", q.ID, foldLine(q.Text, 60)), fmt.Sprint(pack.Tokens), fmt.Sprintf("%.0f%%", 100*float64(pack.Tokens)/float64(raw)),
			fmt.Sprintf("%d of %d", n, len(q.Rules)))
		packTokens += pack.Tokens
		gold += len(q.Rules)
		held += n
	}
	if err := tw.flush(); err != nil {
		return err
	}
	avg := float64(packTokens) / float64(len(d.questions))
	d.say("\n%d questions: a pack costs %.0f tokens on average, %.0f%% of the raw documentation, and holds %d of the %d rules the gold SQL needs.\n",
		len(d.questions), avg, 100*avg/float64(raw), held, gold)
	for _, m := range misses {
		d.say("%s: a pack keeps only rules that score at least %.0f%% of its best match; an agent reads the rest with okf search and okf get.\n", m, 100*eval.DefaultOptions().Pack.MinRelevance)
	}
	d.say("Measure it on any question set with: okf eval retrieval --questions %s --bundles %s --raw %s\n",
		filepath.Join(d.docs, shop.QuestionsFile), d.out, d.dir)
	d.say("\n$ okf context %q\n%s", d.questions[0].Text, indent(first.Text))
	return nil
}

func (d *demo) guard(ctx context.Context) error {
	d.section(5, "Run SQL through the guard")
	var q *eval.Question
	for i := range d.questions {
		if d.questions[i].ID == demoGuarded {
			q = &d.questions[i]
		}
	}
	if q == nil {
		return fmt.Errorf("%s holds no question %s", shop.QuestionsFile, demoGuarded)
	}
	db, err := sqlguard.Open(ctx, shop.Name, "sqlite:"+d.db, sqlguard.Options{}, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	d.say("%s: %s\n$ okf sql sqlite:%s \"%s\"\n", q.ID, q.Text, d.db, foldLine(q.SQL[0], 1000))
	res, err := db.Query(ctx, "okf demo", q.SQL[0])
	if err != nil {
		return fmt.Errorf("the gold SQL of %s: %w", q.ID, err)
	}
	d.say("%s", indent(res.Text(db.Options().ShownRows)))
	d.say("\nA model's SQL is hostile input. A write smuggled in after a query:\n$ okf sql sqlite:%s %q\n", d.db, demoAttack)
	_, err = db.Query(ctx, "okf demo", demoAttack)
	ge, ok := sqlguard.AsError(err)
	if !ok || !ge.Refused {
		return fmt.Errorf("the guard did not refuse %q: %v", demoAttack, err)
	}
	d.say("%s", indent(ge.Text(demoAttack)))
	d.say("Had the validator missed it, five more layers would each stop it: the read-only file, query_only, SQLite's\nauthorizer, the read-only statement check and one statement per call (docs/security.md).\n")
	return nil
}

// answer asks the configured model a question, or says how to connect one.
func (d *demo) answer(ctx context.Context) error {
	d.section(6, "Ask a model")
	if !d.ask {
		d.connect()
		return nil
	}
	question := d.question
	var gold *eval.Question
	for i, q := range d.questions {
		if q.ID == d.question {
			question, gold = q.Text, &d.questions[i]
		}
	}
	f := &agentFlags{configPath: d.configPath, db: "sqlite:" + d.db, model: d.model, runs: filepath.Join(d.dir, "runs"),
		src: knowledgeSource{store: storeFlags{data: d.data, tenant: "default"}}}
	s, err := openSession(ctx, d.e, f)
	if err != nil {
		return err
	}
	defer s.close()
	d.say("$ okf ask %q --db sqlite:%s   (%s, strategy %s)\n", question, d.db, s.model.Name(), s.strategy)
	out, path, err := s.run(ctx, question, "", d.e.stdout, false)
	printOutcome(d.e.stdout, out, s.db.Options().ShownRows, false)
	if err != nil {
		return err
	}
	if gold != nil && out.Rows != nil {
		want, err := s.db.Query(ctx, "okf demo", gold.SQL[0])
		if err != nil {
			return fmt.Errorf("the gold SQL of %s: %w", gold.ID, err)
		}
		verdict := "the same rows: correct"
		if !eval.SameResult(want.Rows, out.Rows.Rows, eval.Comparison{Decimal: 2}) {
			verdict = "other rows: wrong (compare with okf sql)"
		}
		d.say("\nThe gold SQL of %s gives %s.\n", gold.ID, verdict)
	}
	if err := writePage(d.runPage(), func(w io.Writer) error {
		return trace.WriteHTML(w, "okf run "+out.Record.ID, []*trace.Record{out.Record})
	}); err != nil {
		return err
	}
	d.say("\nrun %s saved to %s (okf runs show %s --runs %s); open %s in a browser to see it step by step\n",
		out.Record.ID, path, out.Record.ID, filepath.Dir(path), d.runPage())
	if err := s.audit.Err(); err != nil {
		return err
	}
	if r := out.Record.StopReason; r != trace.Submitted && r != trace.Declined {
		return silentExit(exitFail)
	}
	return nil
}

// connect prints the three ways to put an agent on the knowledge.
func (d *demo) connect() {
	d.say(`No model is configured, so the demo stops here. Three ways to connect one:

  a. A model in okf.yaml, for okf ask, okf chat and okf eval run:
       agent:
         model: mini
         models:
           - name: mini
             provider: openai            # or anthropic; any OpenAI-compatible endpoint with base_url
             model: gpt-4.1-mini
     with OPENAI_API_KEY in the environment or in .env; then okf demo asks it %s.
  b. okf mcp: the agent you already use (Claude Code, Cursor, any MCP host) reads
     the knowledge and runs guarded SQL over MCP on stdio; %s names the shop database:
       okf mcp --data %s --config %s
  c. okf serve: the same tools over HTTP, for a team, with tokens and tenants:
       okf serve token --data %s
       okf serve --data %s --config %s

See docs/configuration.md, docs/mcp.md and docs/serve.md.
`, d.question, d.config(), d.data, d.config(), d.data, d.data, d.config())
}

// indent indents every line of s but the empty ones by two spaces,
// ending with a newline.
func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// table writes aligned columns of text.
type table struct {
	w    io.Writer
	rows [][]string
}

func newTable(w io.Writer, header ...string) *table { return &table{w: w, rows: [][]string{header}} }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) flush() error {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad + "  ")
			} else {
				b.WriteString(pad + c + "  ")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}
