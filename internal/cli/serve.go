package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/config"
	"github.com/okf-tools/okf/internal/gcdelay"
	"github.com/okf-tools/okf/serve"
	"github.com/okf-tools/okf/serve/oauth"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
)

// serveFlags are what okf serve and okf mcp share: where the knowledge
// comes from and which databases the tenants may query.
type serveFlags struct {
	src        knowledgeSource
	watch      string
	debounce   time.Duration
	configPath string
	auditPath  string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	f.src.register(fs)
	fs.StringVar(&f.watch, "watch", "", "read this folder like --dir, and compile it again whenever its markdown changes")
	fs.DurationVar(&f.debounce, "debounce", engine.DefaultDebounce, "with --watch, how long the folder must stay unchanged before it is compiled")
	fs.StringVar(&f.configPath, "config", config.DefaultFile, "configuration file naming the databases (and, for serve, tokens and limits)")
	fs.StringVar(&f.auditPath, "audit", "", "append a JSON line per SQL statement to this file (default: the configuration's audit_log)")
}

// running is a server ready to serve, with what must be closed after.
type running struct {
	srv   *serve.Server
	lib   engine.Library
	dbs   *engine.Databases
	cfg   *config.Config
	watch func(context.Context) error // nil unless --watch
	close func()
}

// start opens the knowledge, the databases and the audit log.
func (f *serveFlags) start(e *env, grants func(*config.Config) ([]serve.Grant, error), version string) (*running, error) {
	gcdelay.ForServer()
	if f.watch != "" && f.src.dir != "" {
		return nil, usageError("--dir and --watch both name a folder: give one")
	}
	if f.watch != "" {
		f.src.dir = f.watch
	}
	if f.src.dir != "" && (f.src.store.dsn != "" || f.src.store.data != "") {
		return nil, usageError("--dir/--watch read a folder, --store/--data the store: give one")
	}
	if err := f.src.store.check(); err != nil {
		return nil, err
	}
	now, err := f.src.now()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadOptional(f.configPath)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	owners, err := cfg.DatabaseTenants()
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	libOpts, err := libraryEmbeddings(cfg, e.stderr)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	var gs []serve.Grant
	if grants != nil {
		if gs, err = grants(cfg); err != nil {
			return nil, err
		}
	}
	r := &running{cfg: cfg}
	var closers []func()
	r.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*running, error) {
		r.close()
		return nil, err
	}
	if f.src.dir != "" {
		if err := checkDir(f.src.dir); err != nil {
			return nil, err
		}
		docs, err := engine.FolderDocs(f.src.dir)
		if err != nil {
			return nil, err
		}
		lib, st := engine.NewFolderLibrary(f.src.store.tenant, docs, libOpts...)
		for _, d := range st.Diagnostics {
			fmt.Fprintf(e.stderr, "warn: %s\n", d)
		}
		r.lib = lib
		if f.watch != "" {
			dir := f.watch
			r.watch = func(ctx context.Context) error {
				return lib.Watch(ctx, dir, engine.WatchOptions{
					Debounce: f.debounce,
					Report:   func(msg string) { fmt.Fprintln(e.stderr, msg) },
				})
			}
		}
	} else {
		// okf serve may be written to and so starts a store; okf mcp only
		// reads, and a missing store is a mistyped path.
		open := f.src.store.open
		if grants != nil {
			open = f.src.store.create
		}
		st, err := open(context.Background())
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { st.Close() })
		r.lib = engine.NewStoreLibrary(st, libOpts...)
	}
	auditPath := f.auditPath
	if auditPath == "" {
		auditPath = cfg.AuditPath()
	}
	audit, err := sqlguard.OpenAuditLog(auditPath)
	if err != nil {
		return fail(err)
	}
	audit.OnError(func(err error) {
		fmt.Fprintf(e.stderr, "okf: %v; entries may be missing from the audit log (serving on)\n", err)
	})
	closers = append(closers, func() { audit.Close() })
	var list []engine.Database
	for _, d := range cfg.Databases {
		bundle := ""
		if d.Bundle != "" {
			bundle = filepath.Base(d.Bundle) // the bundle's name, not where it lies
		}
		list = append(list, engine.Database{Name: d.Name, Tenant: owners[d.Name], DSN: d.DSN, Bundle: bundle, Guard: d.Guard.Options()})
	}
	r.dbs = engine.NewDatabases(list, audit, e.stderr)
	// Query tools are ranked by use from the first session on: the audit
	// log remembers the calls of earlier processes.
	uses, err := engine.AuditedUses(auditPath, func(db string) string { return owners[db] })
	if err != nil {
		fmt.Fprintf(e.stderr, "okf: %v; query tools are ranked from no use\n", err)
	}
	closers = append(closers, func() { r.dbs.Close() })
	if f.src.dir != "" {
		gs = folderGrants(e.stderr, gs, f.src.store.tenant, f.src.dir)
	}
	sc := cfg.Serve
	signIn, err := serveOAuth(sc.OAuth)
	if err != nil {
		return fail(err)
	}
	r.srv, err = serve.New(serve.Options{
		Library: r.lib, Databases: r.dbs, Grants: gs, OAuth: signIn, Policies: policies(cfg),
		RateLimit: sc.RateLimit, Burst: sc.Burst, MaxRequestBytes: sc.MaxRequestBytes,
		MaxSessionsPerGrant: sc.MaxSessionsPerToken, MaxSessions: sc.MaxSessions, SessionIdleTimeout: time.Duration(sc.SessionIdleTimeout),
		ReadTimeout: time.Duration(sc.ReadTimeout), ShutdownGrace: time.Duration(sc.ShutdownGrace),
		AllowedHosts: sc.AllowedHosts, AllowedOrigins: sc.AllowedOrigins, ListedQueries: sc.ListedQueries, QueryUses: uses,
		Now: func() time.Time {
			if f.src.today != "" {
				return now
			}
			return time.Now()
		},
		Version: version, Log: e.stderr,
	})
	if err != nil {
		return fail(err)
	}
	return r, nil
}

// policies are okf.yaml's policies, by name, as the engine holds callers
// to them.
func policies(cfg *config.Config) map[string]*engine.Policy {
	out := map[string]*engine.Policy{}
	for _, p := range cfg.Policies {
		out[p.Name] = &engine.Policy{Name: p.Name, Databases: p.Databases, DeniedColumns: p.DeniedColumns,
			MaskedColumns: p.MaskedColumns, RowFilters: p.RowFilters}
	}
	return out
}

// serveOAuth is the server's OAuth of the serve.oauth section; nil
// without one.
func serveOAuth(o *config.ServeOAuth) (*serve.OAuth, error) {
	if o == nil {
		return nil, nil
	}
	v, err := oauth.New(oauth.Config{Issuer: o.Issuer, Audience: o.Audience, JWKSURL: o.JWKSURL, Skew: time.Duration(o.ClockSkew)})
	if err != nil {
		return nil, err
	}
	return &serve.OAuth{Verifier: v, Resource: o.Resource, TenantClaim: o.TenantClaim, Tenant: o.Tenant, Tenants: o.Tenants,
		PolicyClaim: o.PolicyClaim, CallerClaims: o.CallerClaims}, nil
}

// folderGrants keeps the grants of the one tenant a folder is served as;
// a tokens file shared with a store names other tenants too, which are
// not an error here, only not served.
func folderGrants(w io.Writer, gs []serve.Grant, tenant, dir string) []serve.Grant {
	var keep []serve.Grant
	others := map[string][]string{}
	for _, g := range gs {
		if g.Tenant == tenant {
			keep = append(keep, g)
		} else {
			others[g.Tenant] = append(others[g.Tenant], g.Name)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(others)) {
		fmt.Fprintf(w, "warn: tenant %s is not served (%s is served as tenant %s, --tenant): ignoring its tokens %s\n",
			t, dir, tenant, strings.Join(others[t], ", "))
	}
	return keep
}

// describe measures a tenant's MCP server and says so on stderr: its
// snapshot, the strategy sentence and what the tool definitions cost.
func describe(ctx context.Context, w io.Writer, r *running, tenant string) error {
	srv, strat, err := r.srv.MCPServer(ctx, tenant)
	if err != nil {
		return err
	}
	v, err := r.lib.View(ctx, tenant)
	if err != nil {
		return err
	}
	cost, err := serve.DefinitionTokens(ctx, srv)
	if err != nil {
		return err
	}
	var names []string
	for _, d := range r.dbs.For(tenant) {
		names = append(names, d.Name)
	}
	dbs := "no databases"
	if len(names) > 0 {
		dbs = "databases " + strings.Join(names, ", ")
	}
	fmt.Fprintf(w, "tenant %s: snapshot %s, %d concepts, manifest %d tokens; tools %d tokens; %s; %s\n",
		tenant, v.Snap.Digest[:12], strat.Concepts, strat.ManifestTokens, cost, dbs, strat.Sentence())
	if len(names) == 0 && len(r.cfg.Databases) > 0 {
		fmt.Fprintf(w, "tenant %s: the %d databases of %s belong to other tenants (serve.tenants; those it does not name belong to %q)\n",
			tenant, len(r.cfg.Databases), r.cfg.Path, config.DefaultTenant)
	}
	return nil
}

func newServeCmd(e *env) *cobra.Command {
	var (
		f               serveFlags
		addr, cert, key string
		tokensPath      string
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the knowledge and the SQL guard over MCP and a JSON HTTP API",
		Long: `Serve listens on HTTP for agents and tools. MCP clients connect to /mcp
(streamable HTTP) and get the tools manifest, search, get, context,
list_databases and run_sql; editors and pipelines use the JSON API under
/v1/{tenant}/, which also writes documents to the store with preconditions
(If-Match). See docs/serve.md.

Every request needs a bearer token; each grants one tenant, read-only or
read and write. Tokens come from tokens.json in the data directory (mint
one with 'okf serve token --tenant NAME') and from the serve section of
okf.yaml. Without TLS (--tls-cert, --tls-key) serve listens on loopback
only.

The knowledge is the store (every tenant a token names), or with --dir or
--watch one folder served as --tenant; --watch compiles the folder again
whenever it changes. Databases come from okf.yaml; serve.tenants says which
tenant may query which, and the rest belong to the tenant "default".`,
		Example: `  okf serve token --tenant default
  okf serve --data ./data
  okf serve --watch ./bundles --addr 127.0.0.1:7777`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r, err := f.start(e, func(cfg *config.Config) ([]serve.Grant, error) {
				return loadGrants(cfg, tokensPath, f.src.store.data)
			}, version())
			if err != nil {
				return err
			}
			defer r.close()
			if !c.Flags().Changed("addr") && r.cfg.Serve.Addr != "" {
				addr = r.cfg.Serve.Addr
			}
			if cert == "" && key == "" {
				cert, key = r.cfg.Serve.TLSCert, r.cfg.Serve.TLSKey
			}
			if (cert == "") != (key == "") {
				return usageError("give both --tls-cert and --tls-key, or neither")
			}
			if err := serve.CheckAddr(ctx, addr, cert != ""); err != nil {
				return usageError("%v", err)
			}
			tenants := r.srv.Tenants()
			if len(tenants) == 0 {
				return usageError("no tokens, so nobody could call the server: mint one with 'okf serve token --tenant %s'", f.src.store.tenant)
			}
			for _, t := range tenants {
				if err := describe(ctx, e.stderr, r, t); err != nil {
					return err
				}
			}
			if r.watch != nil {
				go func() {
					if err := r.watch(ctx); err != nil {
						fmt.Fprintf(e.stderr, "watch: %v\n", err)
					}
				}()
			}
			return r.srv.ListenAndServe(ctx, serve.ListenOptions{Addr: addr, TLSCert: cert, TLSKey: key, Ready: func(a net.Addr) {
				scheme := "http"
				if cert != "" {
					scheme = "https"
				}
				fmt.Fprintf(e.stderr, "okf serve: listening on %s://%s (MCP at /mcp, API at /v1/{tenant}/)\n", scheme, a)
			}})
		},
	}
	f.register(c.Flags())
	fl := c.Flags()
	fl.StringVar(&addr, "addr", serve.DefaultAddr, "host:port to listen on (default: serve.addr of okf.yaml, else "+serve.DefaultAddr+")")
	fl.StringVar(&cert, "tls-cert", "", "TLS certificate file (needed to listen beyond loopback)")
	fl.StringVar(&key, "tls-key", "", "TLS key file")
	fl.StringVar(&tokensPath, "tokens", "", "tokens file (default: "+serve.TokensFile+" in the data directory)")
	c.AddCommand(newServeTokenCmd(e))
	return c
}

// tokensFile returns the tokens file: path if given, else TokensFile in
// the data directory (--data, else the default one).
func tokensFile(path, data string) (string, error) {
	if path != "" {
		return path, nil
	}
	if data == "" {
		var err error
		if data, err = store.DataDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(data, serve.TokensFile), nil
}

// loadGrants reads the tokens file and the tokens of okf.yaml, whose
// secrets come from the environment.
func loadGrants(cfg *config.Config, path, data string) ([]serve.Grant, error) {
	path, err := tokensFile(path, data)
	if err != nil {
		return nil, err
	}
	grants, err := serve.LoadTokens(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	for _, t := range cfg.Serve.Tokens {
		secret, err := t.Secret(os.LookupEnv)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s:%d: %w", cfg.Path, t.Line, err)}
		}
		g, err := serve.NewGrant(t.Name, t.Tenant, t.Write, secret)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s:%d: %w", cfg.Path, t.Line, err)}
		}
		g.Policy = t.Policy
		grants = append(grants, g)
	}
	for _, g := range grants {
		// okf.yaml checks its own tokens' policies; a minted token's is
		// checked here, against the policies okf.yaml has now.
		if _, ok := cfg.Policy(g.Policy); g.Policy != "" && !ok {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: token %s is held to policy %q, which okf.yaml does not define", path, g.Name, g.Policy)}
		}
	}
	return grants, nil
}

func newServeTokenCmd(e *env) *cobra.Command {
	var (
		tenant, name, path, data, policy string
		write                            bool
	)
	c := &cobra.Command{
		Use:   "token",
		Short: "Mint a bearer token for okf serve",
		Long: `Token makes a new random bearer token that grants one tenant, read-only
unless --write is given, and adds its SHA-256 (never the token) to the
tokens file. The token is printed once, on standard output: keep it in the
agent's configuration or a secret store. With --policy, its caller is held
to one of okf.yaml's policies: the databases, columns and rows it may see.`,
		Example: `  okf serve token --tenant acme --name claude-code
  okf serve token --tenant acme --name pipeline --write
  okf serve token --tenant acme --name support-bot --policy support`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := store.ValidateTenant(tenant); err != nil {
				return usageError("--tenant: %v", err)
			}
			if name == "" {
				name = tenant + "-read"
				if write {
					name = tenant + "-write"
				}
			}
			file, err := tokensFile(path, data)
			if err != nil {
				return err
			}
			token, err := serve.MintToken(file, serve.Grant{Name: name, Tenant: tenant, Write: write, Policy: policy})
			if err != nil {
				return err
			}
			access := "read"
			if write {
				access = "read and write"
			}
			if policy != "" {
				access += ", policy " + policy
			}
			fmt.Fprintf(e.stderr, "token %s (%s, tenant %s) added to %s; it is shown once:\n", name, access, tenant, file)
			_, err = fmt.Fprintln(e.stdout, token)
			return err
		},
	}
	c.Flags().StringVar(&tenant, "tenant", "default", "the tenant the token grants")
	c.Flags().StringVar(&name, "name", "", "a name for the token, unique in the file (default TENANT-read or TENANT-write)")
	c.Flags().BoolVar(&write, "write", false, "let the token write documents, not only read")
	c.Flags().StringVar(&policy, "policy", "", "hold the token's caller to this policy of okf.yaml")
	c.Flags().StringVar(&path, "tokens", "", "tokens file (default: "+serve.TokensFile+" in the data directory)")
	c.Flags().StringVar(&data, "data", "", "the data directory holding the tokens file")
	return c
}

func newMCPCmd(e *env) *cobra.Command {
	var f serveFlags
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve one tenant's knowledge and databases to an MCP client over stdio",
		Long: `Mcp speaks the Model Context Protocol on standard input and output, for
an MCP client that starts okf itself (Claude Code, Cursor, any MCP host).
It serves one tenant (--tenant) from the store, or a folder (--dir, or
--watch to follow changes), with the tools manifest, search, get, context,
list_databases and run_sql, and the manifest as the resource okf://manifest.
Databases come from okf.yaml; the tenant sees those serve.tenants gives it
(all unassigned ones for the tenant "default"). Diagnostics go to standard
error. See docs/mcp.md.`,
		Example: `  okf mcp --dir ./bundles
  okf mcp --data ./data --tenant acme --config okf.yaml
  claude mcp add okf -- okf mcp --watch ./bundles`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r, err := f.start(e, nil, version())
			if err != nil {
				return err
			}
			defer r.close()
			tenant := f.src.store.tenant
			if err := describe(ctx, e.stderr, r, tenant); err != nil {
				return err
			}
			if r.watch != nil {
				go func() {
					if err := r.watch(ctx); err != nil {
						fmt.Fprintf(e.stderr, "watch: %v\n", err)
					}
				}()
			}
			return r.srv.ServeStdio(ctx, tenant, e.stdin, e.stdout)
		},
	}
	f.register(c.Flags())
	return c
}
