// Package config reads okf.yaml, the project's committed settings: the
// databases agents may query (with each one's guard options) and, as the
// tool grows, further sections. Secrets stay out of the file: a DSN may
// name environment variables as ${VAR}, expanded when the file is loaded.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/internal/yamlline"
	"github.com/okf-tools/okf/sqlguard"
)

// DefaultFile is the configuration file looked for in the working directory.
const DefaultFile = "okf.yaml"

// Config is the whole of okf.yaml.
type Config struct {
	// Path is the file the configuration was read from ("" if none).
	Path      string     `yaml:"-"`
	Databases []Database `yaml:"databases"`
	// AuditLog is the file that gets a JSON line for every statement the
	// SQL guard sees, relative to the configuration file; "" for none.
	AuditLog string `yaml:"audit_log"`
	Serve    Serve  `yaml:"serve"` // okf serve: tokens, tenants' databases, limits (serve.go)
	Agent    Agent  `yaml:"agent"` // okf ask, chat, runs, doctor: models and runs (agent.go)
	// Embeddings, when set, adds dense similarity to search
	// (embeddings.go); nil ranks by BM25 alone.
	Embeddings *Embeddings `yaml:"embeddings"`
	// Policies say what each kind of caller may see (policies.go).
	Policies []Policy `yaml:"policies"`
}

// AuditPath returns AuditLog resolved against the configuration file's
// folder, or "".
func (c *Config) AuditPath() string {
	if c.AuditLog == "" || filepath.IsAbs(c.AuditLog) || c.Path == "" {
		return c.AuditLog
	}
	return filepath.Join(filepath.Dir(c.Path), c.AuditLog)
}

// Database is one database agents may query.
type Database struct {
	Name   string `yaml:"name"`
	DSN    string `yaml:"dsn"`    // PostgreSQL URL or "sqlite:path", ${VAR} expanded
	Bundle string `yaml:"bundle"` // the OKF bundle documenting it
	Guard  Guard  `yaml:"guard"`
	// Line is where the entry starts in the file, for error messages.
	Line int `yaml:"-"`
}

// Guard holds a database's sqlguard options.
type Guard struct {
	Tables        []string `yaml:"tables"`         // allowlist; empty allows every table
	DeniedColumns []string `yaml:"denied_columns"` // "table.column" or "column"
	// MaskedColumns may be filtered, grouped on and counted; a result
	// shows a mask in place of their values.
	MaskedColumns  []string `yaml:"masked_columns"`
	AllowFunctions []string `yaml:"allow_functions"` // functions beyond the built-in allowlist
	Schemas        []string `yaml:"schemas"`
	Timeout        Duration `yaml:"timeout"`
	MaxRows        int      `yaml:"max_rows"`
	ShownRows      int      `yaml:"shown_rows"`
	CountLimit     int      `yaml:"count_limit"`
	MaxSQLBytes    int      `yaml:"max_sql_bytes"`
	MaxConns       int      `yaml:"max_conns"`
	// ConnectionLimit is set on the agent's role by okf prepare.
	ConnectionLimit int `yaml:"connection_limit"`
	// AdminDSN is used by okf prepare to set up the agent's role; it is
	// never used to run a model's SQL.
	AdminDSN string `yaml:"admin_dsn"`
	// AllowedDirectories are the folders a DuckDB file's views over CSV,
	// Parquet or JSON files may read, relative to the configuration
	// file; none by default.
	AllowedDirectories []string `yaml:"allowed_directories"`
}

// Duration is a time.Duration written as "5s" or "1m30s".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration like 5s or 1m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Options turns the guard settings into sqlguard options.
func (g Guard) Options() sqlguard.Options {
	return sqlguard.Options{
		Tables: g.Tables, DeniedColumns: g.DeniedColumns, MaskedColumns: g.MaskedColumns, AllowFunctions: g.AllowFunctions, Schemas: g.Schemas,
		Timeout: time.Duration(g.Timeout), MaxRows: g.MaxRows, ShownRows: g.ShownRows,
		CountLimit: g.CountLimit, MaxSQLBytes: g.MaxSQLBytes, MaxConns: g.MaxConns, ConnectionLimit: g.ConnectionLimit,
		AllowedDirectories: g.AllowedDirectories,
	}
}

// Load reads path, after the variables of the .env file beside it (see
// LoadDotEnv), so that ${VAR} in the file may come from either. A missing
// file is an error wrapping os.ErrNotExist.
func Load(path string) (*Config, error) {
	if err := LoadDotEnv(filepath.Join(filepath.Dir(path), ".env")); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	cfg, err := Parse(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	cfg.Path = path
	for i := range cfg.Databases {
		for j, dir := range cfg.Databases[i].Guard.AllowedDirectories {
			if !filepath.IsAbs(dir) {
				abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), dir))
				if err != nil {
					return nil, fmt.Errorf("%s: databases[%d].guard.allowed_directories: %w", path, i, err)
				}
				cfg.Databases[i].Guard.AllowedDirectories[j] = abs
			}
		}
	}
	return cfg, nil
}

// LoadOptional reads path, returning an empty configuration if it does not
// exist.
func LoadOptional(path string) (*Config, error) {
	cfg, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	return cfg, err
}

// Parse reads a configuration from data, expanding ${VAR} in DSNs with
// lookup. Errors start with the line number ("12: ...").
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if err.Error() == "EOF" {
			return &Config{}, nil
		}
		line, problem := yamlline.Locate(data, err)
		return nil, fmt.Errorf("%d: %s", line, problem)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if err := checkKeys(doc, reflect.TypeOf(Config{}), ""); err != nil {
		return nil, err
	}
	var cfg Config
	if err := doc.Decode(&cfg); err != nil {
		return nil, fmt.Errorf(" %s", strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "))
	}
	if list := mappingValue(doc, "databases"); list != nil && list.Kind == yaml.SequenceNode {
		for i, item := range list.Content {
			if i < len(cfg.Databases) {
				cfg.Databases[i].Line = item.Line
			}
		}
	}
	linePolicies(doc, cfg.Policies)
	if err := cfg.check(lookup); err != nil {
		return nil, err
	}
	if err := cfg.checkPolicies(); err != nil {
		return nil, err
	}
	if cfg.Embeddings != nil {
		cfg.Embeddings.Line = keyLine(doc, "embeddings")
		if err := cfg.Embeddings.check(lookup); err != nil {
			return nil, err
		}
	}
	return &cfg, nil
}

// keyLine is the line of a key of a mapping, 0 when it has none.
func keyLine(n *yaml.Node, key string) int {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return 0
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// checkKeys refuses keys that no field of t takes, naming the line and
// the known keys, so a misspelt setting is never silently ignored.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		var known []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			known = append(known, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				where := "at the top level"
				if path != "" {
					where = "in " + path
				}
				return fmt.Errorf("%d: unknown key %q %s (known keys: %s)", k.Line, k.Value, where, strings.Join(known, ", "))
			}
			if err := checkKeys(n.Content[i+1], ft, joinPath(path, k.Value)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var envRef = lazy.Regexp{Expr: `\$\{([A-Za-z_][A-Za-z0-9_]*)\}`}

// Expand replaces every ${VAR} in s with the variable's value; an unset
// variable is an error naming it.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := envRef.Get().ReplaceAllStringFunc(s, func(ref string) string {
		name := envRef.Get().FindStringSubmatch(ref)[1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

func (c *Config) check(lookup func(string) (string, bool)) error {
	var seen []string
	for i := range c.Databases {
		d := &c.Databases[i]
		at := fmt.Sprintf("%d: databases[%d]", d.Line, i)
		if d.Name == "" {
			return fmt.Errorf("%s: name is missing", at)
		}
		if strings.ContainsAny(d.Name, " \t/:") {
			return fmt.Errorf("%s: name %q may not hold spaces, slashes or colons", at, d.Name)
		}
		if slices.Contains(seen, d.Name) {
			return fmt.Errorf("%s: name %q is used twice", at, d.Name)
		}
		seen = append(seen, d.Name)
		if d.DSN == "" {
			return fmt.Errorf("%s (%s): dsn is missing", at, d.Name)
		}
		var err error
		if d.DSN, err = Expand(d.DSN, lookup); err != nil {
			return fmt.Errorf("%s (%s): dsn: %w", at, d.Name, err)
		}
		if d.Guard.AdminDSN, err = Expand(d.Guard.AdminDSN, lookup); err != nil {
			return fmt.Errorf("%s (%s): guard.admin_dsn: %w", at, d.Name, err)
		}
		g := d.Guard
		for field, v := range map[string]int{"max_rows": g.MaxRows, "shown_rows": g.ShownRows, "count_limit": g.CountLimit,
			"max_sql_bytes": g.MaxSQLBytes, "max_conns": g.MaxConns, "connection_limit": g.ConnectionLimit} {
			if v < 0 {
				return fmt.Errorf("%s (%s): guard.%s must not be negative", at, d.Name, field)
			}
		}
		if g.MaxSQLBytes > sqlguard.MaxSQLBytesLimit {
			return fmt.Errorf("%s (%s): guard.max_sql_bytes is %d; the most the SQL guard reads is %d", at, d.Name, g.MaxSQLBytes, sqlguard.MaxSQLBytesLimit)
		}
		if _, err := sqlguard.NewValidator(sqlguard.DialectPostgres, g.Options(), nil); err != nil {
			return fmt.Errorf("%s (%s): guard: %w", at, d.Name, err)
		}
	}
	return nil
}

// Database returns the database called ref, or, when no database has that
// name, one made from ref itself if it is a DSN (see package dsn).
func (c *Config) Database(ref string) (Database, error) {
	for _, d := range c.Databases {
		if d.Name == ref {
			return d, nil
		}
	}
	d, err := dsn.Parse(ref)
	switch {
	case err != nil:
		return Database{}, err
	case d.Engine == dsn.Postgres:
		return Database{Name: "adhoc", DSN: ref}, nil
	case d.Engine == dsn.SQLite:
		return Database{Name: "adhoc", DSN: "sqlite:" + d.Path}, nil
	case d.Engine == dsn.DuckDB:
		return Database{Name: "adhoc", DSN: "duckdb:" + d.Path}, nil
	}
	var names []string
	for _, d := range c.Databases {
		names = append(names, d.Name)
	}
	switch {
	case c.Path == "":
		return Database{}, fmt.Errorf("unknown database %q, and no configuration file names any; give a DSN (postgres://… or sqlite:path) instead", ref)
	case len(names) == 0:
		return Database{}, fmt.Errorf("unknown database %q: %s names none; give a DSN (postgres://… or sqlite:path) instead", ref, c.Path)
	}
	return Database{}, fmt.Errorf("unknown database %q: %s names %s; or give a DSN (postgres://… or sqlite:path)", ref, c.Path, strings.Join(names, ", "))
}

// Uncovered returns those of columns ("table.column", or a schema before
// them) that the guard neither masks nor denies, in order: the columns a
// bundle marks as personal data whose values an agent would still see. An
// entry matches as the guard matches it: a bare column in every table.
func (g Guard) Uncovered(columns []string) []string {
	var out []string
	for _, c := range columns {
		table, col := splitColumn(c)
		covered := slices.ContainsFunc(slices.Concat(g.MaskedColumns, g.DeniedColumns), func(entry string) bool {
			t, ec := splitColumn(entry)
			return ec == col && (t == "" || t == table)
		})
		if !covered {
			out = append(out, c)
		}
	}
	return out
}

// splitColumn reads "schema.table.column", "table.column" or "column",
// in lower case: the table ("" when none) and the column.
func splitColumn(s string) (table, column string) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ".")
	if len(parts) > 1 {
		table = parts[len(parts)-2]
	}
	return table, parts[len(parts)-1]
}
