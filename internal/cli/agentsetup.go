package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// agentFlags are the settings okf ask and okf chat share; flags override
// okf.yaml, which overrides the defaults.
type agentFlags struct {
	configPath string
	db         string
	strategy   string
	model      string
	maxSteps   int
	runs       string
	noStream   bool
	src        knowledgeSource
}

func (a *agentFlags) register(f *pflag.FlagSet) {
	f.StringVar(&a.configPath, "config", config.DefaultFile, "configuration file naming the databases and models")
	f.StringVar(&a.db, "db", "", "the database: a name from okf.yaml, or a DSN (postgres://…, sqlite:path or duckdb:path)")
	f.StringVar(&a.strategy, "strategy", "", "how the agent reads knowledge: schema, raw, browse, engine, context or auto (default: okf.yaml, else context)")
	f.StringVar(&a.model, "model", "", "a model name from okf.yaml, or provider/model (openai/gpt-4.1-mini, anthropic/claude-haiku-4-5, script/run.jsonl)")
	f.IntVar(&a.maxSteps, "max-steps", 0, "model calls per run (default: okf.yaml, else 15)")
	f.StringVar(&a.runs, "runs", "", "the folder of the run log (default: okf.yaml's agent.runs, else runs)")
	f.BoolVar(&a.noStream, "no-stream", false, "ask for whole replies, for endpoints that do not stream (the steps then show when each reply is complete)")
	a.src.register(f)
}

// agentSession is what a run needs, opened once and reused by okf chat.
type agentSession struct {
	cfg   *config.Config
	flags *agentFlags
	// dbs holds the one database of the session, named dbName, for the
	// engine's tools; db is that database opened.
	dbs      *engine.Databases
	db       *sqlguard.DB
	audit    *sqlguard.AuditLog
	dbName   string
	dialect  string
	know     agent.Knowledge
	model    llm.Client
	strategy agent.Strategy
	closers  []func()
	// rowCap, when set, raises the guard's row limits so results compare
	// whole (okf eval run).
	rowCap int
	// today is --today, the date stale statuses are decided against; nil
	// for now.
	today func() time.Time
	// exporter sends runs to the OTLP collector, when one is set.
	exporter *trace.Exporter
}

// loadAgentConfig reads okf.yaml (and the .env beside it).
func loadAgentConfig(path string) (*config.Config, error) {
	cfg, err := config.LoadOptional(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return cfg, nil
}

func openSession(ctx context.Context, e *env, f *agentFlags) (*agentSession, error) {
	cfg, err := loadAgentConfig(f.configPath)
	if err != nil {
		return nil, err
	}
	today, err := f.clock()
	if err != nil {
		return nil, err
	}
	s := &agentSession{cfg: cfg, flags: f, today: today}
	if err := s.setStrategy(f.strategy); err != nil {
		s.close()
		return nil, err
	}
	if err := s.setModel(f.model); err != nil {
		s.close()
		return nil, err
	}
	if err := s.setDB(ctx, e, f.db); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// clock is --today as the agent's clock; nil for now.
func (a *agentFlags) clock() (func() time.Time, error) {
	if a.src.today == "" {
		return nil, nil
	}
	day, err := a.src.now()
	if err != nil {
		return nil, err
	}
	return func() time.Time { return day }, nil
}

func (s *agentSession) close() {
	for _, c := range s.closers {
		c()
	}
	s.closers = nil
}

func (s *agentSession) setStrategy(name string) error {
	if name == "" {
		name = s.cfg.Agent.Strategy
	}
	st, err := agent.ParseStrategy(name)
	if err != nil {
		return usageError("%v", err)
	}
	s.strategy = st
	return nil
}

func (s *agentSession) setModel(ref string) error {
	mc, err := s.cfg.Agent.ModelConfig(ref, os.LookupEnv)
	if err != nil {
		return usageError("%v", err)
	}
	mc.NoStream = mc.NoStream || s.flags.noStream
	m, err := llm.New(mc)
	if err != nil {
		return usageError("%v", err)
	}
	s.model = m
	return nil
}

// setDB opens a database through the guard and finds its knowledge: the
// --dir folder, else the database's bundle in okf.yaml (a folder, or a
// bundle name in the store), else the store.
func (s *agentSession) setDB(ctx context.Context, e *env, ref string) error {
	if ref == "" {
		return usageError("no database: pass --db (a name from okf.yaml or a DSN)")
	}
	d, err := s.cfg.Database(ref)
	if err != nil {
		return usageError("%v", err)
	}
	if s.rowCap > 0 {
		d.Guard.MaxRows = max(d.Guard.MaxRows, s.rowCap)
		d.Guard.CountLimit = max(d.Guard.CountLimit, s.rowCap)
	}
	audit, err := sqlguard.OpenAuditLog(s.cfg.AuditPath())
	if err != nil {
		return err
	}
	closers := []func(){func() { audit.Close() }}
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	name := d.Name
	dialect := "PostgreSQL"
	if p, _ := dsn.Parse(d.DSN); p.Engine == dsn.SQLite || p.Engine == dsn.DuckDB {
		dialect = p.Engine.Name()
		if d.Name == "adhoc" {
			// A database given as a file is named after it in the prompt.
			name = strings.TrimSuffix(filepath.Base(p.Path), filepath.Ext(p.Path))
		}
	}
	know, knowClose, err := s.knowledge(e, d)
	if err != nil {
		closeAll()
		return err
	}
	if knowClose != nil {
		closers = append(closers, knowClose)
	}
	// The database is listed with its bundle's name, as okf mcp lists it.
	tenant := s.flags.src.store.tenant
	dbs := engine.NewDatabases([]engine.Database{{Name: name, Tenant: tenant, DSN: d.DSN, Bundle: know.Bundle, Guard: d.Guard.Options()}}, audit, e.stderr)
	closers = append([]func(){func() { dbs.Close() }}, closers...)
	db, err := dbs.DB(ctx, tenant, name)
	if err != nil {
		closeAll()
		return fmt.Errorf("database %s: %w", d.Name, err)
	}
	s.close()
	s.closers, s.dbs, s.db, s.dbName, s.dialect, s.know, s.audit = closers, dbs, db, name, dialect, know, audit
	return nil
}

// knowledge finds what the agent reads about database d: the --dir
// folder, else the database's bundle in okf.yaml (a folder, or a bundle
// name in the store), else the store. The agent's view holds the
// database's bundle alone when there is one, so its searches rank within
// it.
func (s *agentSession) knowledge(e *env, d config.Database) (agent.Knowledge, func(), error) {
	ctx := context.Background()
	dir := s.flags.src.dir
	if dir == "" && d.Bundle != "" {
		b := d.Bundle
		if !filepath.IsAbs(b) && s.cfg.Path != "" {
			b = filepath.Join(filepath.Dir(s.cfg.Path), b)
		}
		if info, err := os.Stat(b); err == nil && info.IsDir() {
			dir = b
		}
	}
	tenant := s.flags.src.store.tenant
	var k agent.Knowledge
	var src engine.Source
	if dir == "" {
		st, err := s.flags.src.store.open(ctx)
		if err != nil {
			return k, nil, err
		}
		defer st.Close()
		src = engine.StoreHead(st, tenant)
	} else {
		if err := checkDir(dir); err != nil {
			return k, nil, err
		}
		src = engine.Folder(dir, tenant)
	}
	names, err := src.Bundles(ctx)
	if err != nil {
		return k, nil, err
	}
	k.Bundle = engine.Pick(names, d.Bundle, d.Name, okf.BundleName(d.Name))
	if k.View, err = engine.Open(ctx, src, k.Bundle); err != nil {
		return k, nil, err
	}
	for _, diag := range k.View.Diagnostics {
		fmt.Fprintf(e.stderr, "warn: %s\n", diag)
	}
	if k.Bundle == "" {
		return k, nil, nil
	}
	files, done, err := engine.Files(src, k.View, k.Bundle)
	if err != nil {
		return k, nil, err
	}
	k.Files = files
	return k, done, nil
}

// agentConfig is the agent's setup for one run of this session.
func (s *agentSession) agentConfig(model llm.Client, strategy agent.Strategy) agent.Config {
	return agent.Config{
		Model: model, Databases: s.dbs, Tenant: s.flags.src.store.tenant, Database: s.dbName, Dialect: s.dialect,
		Knowledge: s.know, Strategy: strategy, MaxSteps: s.maxSteps(), ContextBudget: s.cfg.Agent.ContextBudget, Now: s.today,
	}
}

// maxSteps is --max-steps, else okf.yaml's agent.max_steps (0: the
// agent's default).
func (s *agentSession) maxSteps() int {
	if s.flags.maxSteps != 0 {
		return s.flags.maxSteps
	}
	return s.cfg.Agent.MaxSteps
}

// runsDir is where run records go.
func (s *agentSession) runsDir() string {
	switch {
	case s.flags.runs != "":
		return s.flags.runs
	case s.cfg.Agent.Runs != "" && s.cfg.Path != "" && !filepath.IsAbs(s.cfg.Agent.Runs):
		return filepath.Join(filepath.Dir(s.cfg.Path), s.cfg.Agent.Runs)
	case s.cfg.Agent.Runs != "":
		return s.cfg.Agent.Runs
	}
	return "runs"
}

// run asks one question, printing steps to w as they happen (with a
// spinner while the model thinks, on a terminal), and appends the record
// to the run log.
func (s *agentSession) run(ctx context.Context, question, taskID string, w io.Writer, terminal bool) (agent.Outcome, string, error) {
	p := &progress{w: w, terminal: terminal}
	cfg := s.agentConfig(s.model, s.strategy)
	cfg.OnEvent = p.event
	out := agent.Run(ctx, cfg, question, taskID)
	p.stopSpinner()
	path, err := s.record(w, out.Record)
	return out, path, err
}

// record appends a run to the run log and, when a collector is set, sends
// it over OTLP; an export failure is a warning, never a lost run.
func (s *agentSession) record(w io.Writer, r *trace.Record) (string, error) {
	path, err := trace.Append(s.runsDir(), r)
	if err != nil {
		return "", err
	}
	endpoint := s.cfg.Agent.OTLPEndpoint
	if v := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		endpoint = v
	}
	if endpoint != "" {
		if s.exporter == nil {
			s.exporter = trace.NewExporter(http.DefaultClient, endpoint, otlpHeaders(os.Getenv("OTEL_EXPORTER_OTLP_HEADERS")),
				func(err error) { fmt.Fprintf(w, "warn: %v\n", err) })
			s.closers = append(s.closers, func() { s.exporter.Close(exportWait) })
		}
		s.exporter.Send(r)
	}
	return path, nil
}

// exportWait is how long a session's end waits for its runs to reach the
// collector.
const exportWait = 5 * time.Second

// otlpHeaders reads OTEL_EXPORTER_OTLP_HEADERS: "key=value,key2=value2".
func otlpHeaders(v string) map[string]string {
	h := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		if k, val, ok := strings.Cut(pair, "="); ok && strings.TrimSpace(k) != "" {
			h[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	}
	return h
}

// progress prints the model's text as it arrives, one line per tool call
// (begun as soon as the model has written the call, ended with its mark
// once it has run), and on a terminal a spinner while the model is
// working.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	stop     chan struct{}
	done     chan struct{}
	// midText is set while the model's text runs on the current line;
	// open while a call's line waits for its mark.
	midText, open bool
}

func (p *progress) event(ev agent.Event) {
	if ev.Thinking {
		if p.terminal {
			p.startSpinner(ev.Step)
		}
		return
	}
	p.stopSpinner()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ev.Text != "":
		if !p.midText {
			fmt.Fprintf(p.w, "step %d: ", ev.Step)
			p.midText = true
		}
		fmt.Fprint(p.w, printable(ev.Text))
	case ev.Pending != nil:
		p.endText()
		fmt.Fprint(p.w, p.callLine(ev.Step, ev.Pending))
		p.open = true
	case ev.Truncated:
		p.abandon()
		fmt.Fprintf(p.w, "step %d: (cut at the output token limit; its calls did not run, and the model is asked once to go on more briefly)\n", ev.Step)
	case ev.Retry != "":
		p.abandon()
		fmt.Fprintf(p.w, "step %d: (%s; asking again)\n", ev.Step, printable(ev.Retry))
	case ev.Nudged:
		p.endText()
		fmt.Fprintf(p.w, "step %d: (answered in text; nudged to use the tools)\n", ev.Step)
	case ev.Call != nil:
		p.endText()
		mark := ""
		if ev.Call.Error {
			mark = "  -> error"
			if p.terminal {
				mark = "  \x1b[31m-> error\x1b[0m"
			}
		}
		if !p.open {
			fmt.Fprint(p.w, p.callLine(ev.Step, ev.Call))
		}
		fmt.Fprintf(p.w, "%s\n", mark)
		p.open = false
	}
}

// callLine is a tool call's line, without its mark or line break.
func (p *progress) callLine(step int, c *trace.Call) string {
	detail := printable(argumentDetail(c.Arguments))
	if c.Tool == "run_sql" || c.Tool == "submit_answer" {
		detail = highlightSQL(detail, p.terminal)
	}
	return fmt.Sprintf("step %d: %-13s %s", step, printable(c.Tool), detail)
}

// abandon ends the model's text and marks the call whose line is open as
// not run: its reply was cut or broke off.
func (p *progress) abandon() {
	p.endText()
	if p.open {
		fmt.Fprint(p.w, "  -> not run\n")
		p.open = false
	}
}

// endText ends a line of the model's text.
func (p *progress) endText() {
	if p.midText {
		fmt.Fprintln(p.w)
		p.midText = false
	}
}

var spinnerFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

func (p *progress) startSpinner(step int) {
	p.stopSpinner()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func(stop, done chan struct{}) {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r%c step %d: waiting for the model…", spinnerFrames[i%len(spinnerFrames)], step)
			p.mu.Unlock()
			select {
			case <-stop:
				p.mu.Lock()
				fmt.Fprint(p.w, "\r\x1b[K")
				p.mu.Unlock()
				return
			case <-tick.C:
			}
		}
	}(p.stop, p.done)
}

func (p *progress) stopSpinner() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.stop, p.done = nil, nil
}

// argumentDetail is the one argument worth showing of a tool call.
func argumentDetail(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return foldLine(args, 90)
	}
	for _, key := range []string{"sql", "path", "id", "query", "question", "answer"} {
		if v, ok := m[key].(string); ok && strings.TrimSpace(v) != "" {
			return foldLine(v, 90)
		}
	}
	return ""
}

// foldLine folds whitespace and cuts s to n runes.
func foldLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
