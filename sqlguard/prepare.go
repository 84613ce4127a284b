package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Setup is what PreparePostgres did.
type Setup struct {
	Role     string
	Database string
	Steps    []string // one line per change, in order
	Tables   []string // tables the role may read, "schema.table"
	Hidden   []string // columns withheld by column-level grants, "schema.table.column"
	Filtered []string // tables whose row filters PostgreSQL's row-level security enforces too, "schema.table"
	Withheld []string // views over filtered tables the role may not read, "schema.view"
	Reach    Reach    // what the role can still do that okf cannot take away
}

// DefaultConnectionLimit is the connection limit okf prepare gives the
// agent's role: room for a few okf processes of DefaultMaxConns each.
const DefaultConnectionLimit = 20

// PreparePostgres creates or updates the login role named in agentDSN on
// the database that adminDSN connects to: CONNECT, USAGE on opts.Schemas
// and SELECT on the allowed tables only (column by column where opts
// hides columns); CREATE on public and TEMPORARY are revoked from PUBLIC.
// Running it again brings the grants in line with opts.
//
// The row filters of opts, and of policies (the options of each okf.yaml
// policy that uses the database, with Options.Policy naming it), become
// row-level security policies for the role (rowsecurity.go); views that
// read a filtered table where row-level security cannot follow are not
// granted.
func PreparePostgres(ctx context.Context, adminDSN, agentDSN string, opts Options, policies ...Options) (*Setup, error) {
	agentCfg, err := pgconn.ParseConfig(agentDSN)
	if err != nil {
		return nil, fmt.Errorf("parsing the agent DSN: %w", redactDSN(err, agentDSN))
	}
	if agentCfg.User == "" {
		return nil, errors.New("the agent DSN names no user: put the agent's role in it (postgres://okf_agent:…@host/db)")
	}
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return nil, fmt.Errorf("connecting with the admin DSN: %w", redactDSN(err, adminDSN))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	s := &Setup{Role: agentCfg.User, Database: conn.Config().Database}
	if agentCfg.Database != "" && agentCfg.Database != s.Database {
		return nil, fmt.Errorf("the admin DSN connects to database %q but the agent DSN to %q", s.Database, agentCfg.Database)
	}
	if s.Role == conn.Config().User {
		return nil, fmt.Errorf("the agent DSN uses the admin role %q; give the agent a role of its own", s.Role)
	}
	schemas := opts.Schemas
	if len(schemas) == 0 {
		schemas = []string{"public"}
	}
	v, err := NewValidator(DialectPostgres, opts, nil)
	if err != nil {
		return nil, err
	}
	kinds := []rowFilterKind{{filters: v.filterConditions()}}
	for _, p := range policies {
		if p.Policy == "" {
			return nil, errors.New("a policy's options name no policy")
		}
		pv, err := NewValidator(DialectPostgres, p, nil)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", p.Policy, err)
		}
		kinds = append(kinds, rowFilterKind{name: p.Policy, filters: pv.filterConditions()})
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the setup transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	exec := func(step, sql string, args ...any) error {
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		s.Steps = append(s.Steps, step)
		return nil
	}
	role := pgx.Identifier{s.Role}.Sanitize()
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", s.Role).Scan(&exists); err != nil {
		return nil, fmt.Errorf("looking up role %s: %w", s.Role, err)
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	limit := opts.ConnectionLimit
	if limit <= 0 {
		limit = DefaultConnectionLimit
	}
	attrs := fmt.Sprintf(" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT CONNECTION LIMIT %d", limit)
	if err := exec(fmt.Sprintf("%s role %s (login, no other attributes, at most %d connections)", strings.ToLower(verb), s.Role, limit), verb+" ROLE "+role+attrs); err != nil {
		return nil, err
	}
	if agentCfg.Password != "" {
		// format(%L) quotes the password on the server; it never enters
		// our SQL text.
		var stmt string
		if err := tx.QueryRow(ctx, "SELECT format('ALTER ROLE %I PASSWORD %L', $1::text, $2::text)", s.Role, agentCfg.Password).Scan(&stmt); err != nil {
			return nil, fmt.Errorf("quoting the password: %w", err)
		}
		if err := exec("set the role's password from the agent DSN", stmt); err != nil {
			return nil, err
		}
	}
	withheld, err := s.installRowSecurity(ctx, tx, exec, s.Role, agentCfg.Password, schemas, kinds)
	if err != nil {
		return nil, err
	}
	db := pgx.Identifier{s.Database}.Sanitize()
	for _, st := range []struct{ step, sql string }{
		{"revoke CREATE on schema public from PUBLIC", "REVOKE CREATE ON SCHEMA public FROM PUBLIC"},
		{"revoke TEMPORARY on the database from PUBLIC", "REVOKE TEMPORARY ON DATABASE " + db + " FROM PUBLIC"},
		{"revoke every database privilege from " + s.Role, "REVOKE ALL ON DATABASE " + db + " FROM " + role},
		{"grant CONNECT to " + s.Role, "GRANT CONNECT ON DATABASE " + db + " TO " + role},
		{"set default_transaction_read_only for " + s.Role + " (a backstop: a session can undo it)",
			"ALTER ROLE " + role + " IN DATABASE " + db + " SET default_transaction_read_only = on"},
	} {
		if err := exec(st.step, st.sql); err != nil {
			return nil, err
		}
	}
	for _, schema := range schemas {
		sch := pgx.Identifier{schema}.Sanitize()
		if err := exec("grant USAGE on schema "+schema, "GRANT USAGE ON SCHEMA "+sch+" TO "+role); err != nil {
			return nil, err
		}
		if err := exec("revoke earlier table grants in "+schema, "REVOKE ALL ON ALL TABLES IN SCHEMA "+sch+" FROM "+role); err != nil {
			return nil, err
		}
		if err := s.grantTables(ctx, tx, v, schema, role, withheld, exec); err != nil {
			return nil, err
		}
	}
	if err := checkRoleMemberships(ctx, tx, s.Role); err != nil {
		return nil, err
	}
	// Grants made to the role itself on other databases go; what PUBLIC
	// may do is every role's, and stays (the reach says so).
	others, err := queryStrings(ctx, tx, `SELECT d.datname FROM pg_database d, aclexplode(d.datacl) a
		WHERE d.datname <> current_database() AND a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $1)
		AND a.privilege_type = 'CONNECT' ORDER BY 1`, s.Role)
	if err != nil {
		return nil, fmt.Errorf("listing the role's grants on other databases: %w", err)
	}
	for _, other := range others {
		if err := exec("revoke CONNECT on database "+other+" from "+s.Role,
			"REVOKE CONNECT ON DATABASE "+pgx.Identifier{other}.Sanitize()+" FROM "+role); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("committing the setup: %w", err)
	}
	if s.Reach, err = InspectRole(ctx, conn, s.Role); err != nil {
		return nil, err
	}
	return s, nil
}

// Reach is what an agent's role can do that no grant of okf's takes away,
// for the operator to see.
type Reach struct {
	Role            string
	ConnectionLimit int      // -1 when the role has none
	OtherDatabases  []string // databases it can connect to, through PUBLIC's CONNECT
	// Functions are risky built-ins it may execute (through PUBLIC), which
	// only the validator's allowlist refuses.
	Functions []string
}

// riskyFunctions are built-ins PostgreSQL lets PUBLIC execute by default
// that reach other sessions, the server or the WAL.
var riskyFunctions = []string{
	"pg_cancel_backend(integer)", "pg_terminate_backend(integer, bigint)", "pg_stat_get_activity(integer)",
	"pg_show_all_settings()", "pg_logical_emit_message(boolean, text, text)", "txid_current()",
	"pg_advisory_lock(bigint)", "pg_get_functiondef(oid)", "pg_control_system()", "pg_sleep(double precision)",
	"set_config(text, text, boolean)", "pg_notify(text, text)",
}

// InspectRole reads the reach of role through conn (as the role itself or
// an admin).
func InspectRole(ctx context.Context, conn *pgx.Conn, role string) (Reach, error) {
	r := Reach{Role: role}
	if err := conn.QueryRow(ctx, "SELECT rolconnlimit FROM pg_roles WHERE rolname = $1", role).Scan(&r.ConnectionLimit); err != nil {
		return r, fmt.Errorf("reading role %s: %w", role, err)
	}
	var err error
	r.OtherDatabases, err = queryStrings(ctx, conn, `SELECT datname FROM pg_database WHERE datallowconn
		AND datname <> current_database() AND has_database_privilege($1, datname, 'CONNECT') ORDER BY 1`, role)
	if err != nil {
		return r, fmt.Errorf("reading the databases role %s reaches: %w", role, err)
	}
	r.Functions, err = queryStrings(ctx, conn, `SELECT f FROM unnest($2::text[]) f
		WHERE to_regprocedure(f) IS NOT NULL AND has_function_privilege($1, f, 'EXECUTE')`, role, riskyFunctions)
	if err != nil {
		return r, fmt.Errorf("reading the functions role %s may execute: %w", role, err)
	}
	return r, nil
}

// InspectAgent connects with agentDSN and reads the reach of its role.
func InspectAgent(ctx context.Context, agentDSN string) (Reach, error) {
	conn, err := pgx.Connect(ctx, agentDSN)
	if err != nil {
		return Reach{}, fmt.Errorf("connecting as the agent: %w", redactDSN(err, agentDSN))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return InspectRole(ctx, conn, conn.Config().User)
}

// Notes says, one line each, what the reach leaves open and how an
// operator could close it.
func (r Reach) Notes() []string {
	var notes []string
	if r.ConnectionLimit < 0 {
		notes = append(notes, fmt.Sprintf("role %s has no connection limit: okf prepare sets one (guard.connection_limit, default %d)", r.Role, DefaultConnectionLimit))
	}
	if len(r.OtherDatabases) > 0 {
		notes = append(notes, fmt.Sprintf("role %s can connect to %s through PUBLIC's CONNECT; okf leaves PUBLIC's grants alone (REVOKE CONNECT ON DATABASE … FROM PUBLIC, or pg_hba.conf, closes it for every role)",
			r.Role, strings.Join(r.OtherDatabases, ", ")))
	}
	notes = append(notes, fmt.Sprintf("sessions of role %s can cancel and terminate each other's queries: PostgreSQL allows it within a role, and only the validator refuses pg_cancel_backend and pg_terminate_backend; give agents that must not reach each other roles of their own", r.Role))
	if len(r.Functions) > 0 {
		notes = append(notes, fmt.Sprintf("role %s may execute, through PUBLIC, %d functions that only the validator refuses: %s", r.Role, len(r.Functions), strings.Join(r.Functions, ", ")))
	}
	return notes
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func queryStrings(ctx context.Context, q querier, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *Setup) grantTables(ctx context.Context, tx pgx.Tx, v *Validator, schema, role string, withheld map[string]string, exec func(string, string, ...any) error) error {
	rows, err := tx.Query(ctx, `SELECT c.relname, a.attname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
		ORDER BY c.relname, a.attnum`, schema)
	if err != nil {
		return fmt.Errorf("listing the tables of %s: %w", schema, err)
	}
	columns := map[string][]string{}
	var tables []string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			return err
		}
		if len(columns[table]) == 0 {
			tables = append(tables, table)
		}
		columns[table] = append(columns[table], col)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing the tables of %s: %w", schema, err)
	}
	for _, table := range tables {
		lower := strings.ToLower(table)
		if len(v.tables) > 0 && !v.tables[lower] && !v.tables[strings.ToLower(schema)+"."+lower] {
			continue
		}
		if why, ok := withheld[schema+"."+table]; ok {
			s.Withheld = append(s.Withheld, schema+"."+table)
			s.Steps = append(s.Steps, "withhold "+schema+"."+table+": "+why)
			continue
		}
		var shown []string
		for _, col := range columns[table] {
			if v.hidden(lower, strings.ToLower(col)) {
				s.Hidden = append(s.Hidden, schema+"."+table+"."+col)
				continue
			}
			shown = append(shown, pgx.Identifier{col}.Sanitize())
		}
		name := pgx.Identifier{schema, table}.Sanitize()
		s.Tables = append(s.Tables, schema+"."+table)
		switch {
		case len(shown) == len(columns[table]):
			if err := exec("grant SELECT on "+schema+"."+table, "GRANT SELECT ON "+name+" TO "+role); err != nil {
				return err
			}
		case len(shown) > 0:
			if err := exec(fmt.Sprintf("grant SELECT on %d of %d columns of %s.%s", len(shown), len(columns[table]), schema, table),
				"GRANT SELECT ("+strings.Join(shown, ", ")+") ON "+name+" TO "+role); err != nil {
				return err
			}
		default:
			s.Tables = s.Tables[:len(s.Tables)-1]
		}
	}
	return nil
}

// checkRoleMemberships refuses a role that inherits the power to read or
// write server files, run programs or read everything.
func checkRoleMemberships(ctx context.Context, tx pgx.Tx, role string) error {
	var risky []string
	err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(b.rolname ORDER BY b.rolname), '{}') FROM pg_roles r
		JOIN pg_auth_members m ON m.member = r.oid JOIN pg_roles b ON b.oid = m.roleid
		WHERE r.rolname = $1`, role).Scan(&risky)
	if err != nil {
		return fmt.Errorf("checking the memberships of %s: %w", role, err)
	}
	if len(risky) > 0 {
		return fmt.Errorf("role %s is a member of %s; revoke those memberships, the agent's role must hold nothing but its grants",
			role, strings.Join(risky, ", "))
	}
	return nil
}

// Probe is one thing tried as the agent's role.
type Probe struct {
	What    string
	Allowed bool
	Result  string // a value or the database's refusal
	Want    bool   // whether it should be allowed
}

// ProbePostgres tries, as the agent's role and each inside a transaction
// that is rolled back, a read of table, a write, DDL, a temporary table and
// a server-file read. It runs them outside the guard's other layers, so
// the answers show what the role itself may do.
func ProbePostgres(ctx context.Context, agentDSN, table string) ([]Probe, error) {
	conn, err := pgx.Connect(ctx, agentDSN)
	if err != nil {
		return nil, fmt.Errorf("connecting as the agent: %w", redactDSN(err, agentDSN))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	name := quoteQualified(table)
	tries := []struct {
		what, sql string
		want      bool
	}{
		{"read a table (" + table + ")", "SELECT count(*) FROM " + name, true},
		{"write a table (DELETE … WHERE false)", "DELETE FROM " + name + " WHERE false", false},
		{"create a table", "CREATE TABLE okf_probe (x int)", false},
		{"create a temporary table", "CREATE TEMPORARY TABLE okf_probe (x int)", false},
		{"drop a table", "DROP TABLE " + name, false},
		{"read a server file", "SELECT length(pg_read_file('PG_VERSION'))", false},
	}
	var out []Probe
	for _, t := range tries {
		p := Probe{What: t.what, Want: t.want}
		// BEGIN READ WRITE overrides the role's read-only default, so the
		// probe shows the grants alone.
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
		if err != nil {
			return nil, fmt.Errorf("probing: %w", err)
		}
		var v any
		err = tx.QueryRow(ctx, t.sql).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		if rbErr := tx.Rollback(ctx); rbErr != nil {
			return nil, fmt.Errorf("rolling back the probe: %w", rbErr)
		}
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				p.Result = pe.Message
			} else {
				p.Result = err.Error()
			}
		} else {
			p.Allowed = true
			p.Result = fmt.Sprint(v)
		}
		out = append(out, p)
	}
	return out, nil
}

func quoteQualified(table string) string {
	return pgx.Identifier(strings.Split(table, ".")).Sanitize()
}
