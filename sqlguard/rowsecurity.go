package sqlguard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL's row-level security is the second layer of row filters,
// under the rewrite (rowfilter.go), installed by okf prepare. The agent's
// SQL runs in the session the guard set up, as the same role, so any
// setting the guard can make the agent's SQL could make too, were the
// validator to let set_config through. What the engine checks instead is a
// MAC: the guard puts the caller's document (its policy and values, bound
// to this backend and transaction) in okf.caller and an HMAC of it, keyed
// on a secret derived from the agent's password, in okf.caller_mac. The
// policies read the document through okf.caller(), a SECURITY DEFINER
// function of the admin's that checks the MAC against the key it keeps in
// a table the agent's role cannot read, and the binding against the
// current transaction; anything else reads as no caller, which sees no row
// of a filtered table.

const (
	callerSetting    = "okf.caller"
	callerMACSetting = "okf.caller_mac"
	// txBinding names the transaction a caller document is signed for:
	// the backend and the transaction's start to the microsecond, neither
	// of which a session can choose.
	txBinding = "pg_backend_pid()::text || '.' || (extract(epoch FROM transaction_timestamp()) * 1000000)::bigint::text"
	// sharedMark comments okf's permissive policy on a table whose
	// row-level security okf switched on; roleMark and the role's name
	// comment the restrictive policies of one agent role's filters.
	sharedMark = "okf prepare"
	roleMark   = "okf prepare: row filters of role "
)

// rowSecurityKey is the MAC key of a role's caller documents. It derives
// from the agent's password, which okf holds and the agent's SQL cannot
// read.
func rowSecurityKey(role, password string) []byte {
	m := hmac.New(sha256.New, []byte(password))
	m.Write([]byte("okf row security\x00" + role))
	return m.Sum(nil)
}

// callerSigner signs the caller documents of one guarded handle.
type callerSigner struct {
	key    []byte
	policy string
}

type callerDoc struct {
	Binding string            `json:"b"`
	Policy  string            `json:"p"`
	Values  map[string]string `json:"v"`
}

// sign returns the caller document for the transaction binding names,
// and its MAC in hex.
func (s *callerSigner) sign(binding string, values map[string]string) (doc, mac string) {
	v := make(map[string]string, len(values))
	for name, val := range values {
		// As in the rewrite, a value holding NUL is no value.
		if strings.IndexByte(val, 0) < 0 {
			v[name] = val
		}
	}
	b, _ := json.Marshal(callerDoc{Binding: binding, Policy: s.policy, Values: v})
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	return string(b), hex.EncodeToString(m.Sum(nil))
}

// callerFunction is okf.caller(): the caller document of the current
// transaction if okf signed it for the session's role, else NULL.
const callerFunction = `CREATE OR REPLACE FUNCTION okf.caller() RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
	doc text := current_setting('` + callerSetting + `', true);
	mac text := current_setting('` + callerMACSetting + `', true);
	k okf.caller_key;
	j jsonb;
BEGIN
	IF coalesce(doc, '') = '' OR coalesce(mac, '') = '' THEN
		RETURN NULL;
	END IF;
	SELECT * INTO k FROM okf.caller_key WHERE role = session_user;
	IF NOT FOUND OR encode(sha256(k.outer_pad || sha256(k.inner_pad || convert_to(doc, 'UTF8'))), 'hex') <> mac THEN
		RETURN NULL;
	END IF;
	j := doc::jsonb;
	IF j ->> 'b' IS DISTINCT FROM ` + txBinding + ` THEN
		RETURN NULL;
	END IF;
	RETURN j;
END
$fn$`

// hmacPads are HMAC-SHA256's inner and outer padded keys, so that
// okf.caller() computes the HMAC with sha256 alone (no pgcrypto).
func hmacPads(key []byte) (inner, outer []byte) {
	inner, outer = make([]byte, 64), make([]byte, 64)
	copy(inner, key)
	copy(outer, key)
	for i := range inner {
		inner[i] ^= 0x36
		outer[i] ^= 0x5c
	}
	return inner, outer
}

// rowFilterKind is one kind of caller's row filters: the database's own
// guard (name "") or an okf.yaml policy's.
type rowFilterKind struct {
	name    string
	filters map[string]string // by table, lower case
}

// filteredRel is a relation a row filter names.
type filteredRel struct {
	oid              uint32
	schema, name     string
	kind             string // pg_class.relkind
	security, forced bool
	okfShared        bool // okf's permissive policy is on it
}

// installRowSecurity brings the row-level security of the filtered
// tables of schemas in line with kinds, for role, and returns the views
// to withhold from it ("schema.view" → why): those row-level security
// cannot reach through.
func (s *Setup) installRowSecurity(ctx context.Context, tx pgx.Tx, exec func(string, string, ...any) error,
	role, password string, schemas []string, kinds []rowFilterKind) (map[string]string, error) {
	mark := roleMark + role
	// okf's own policies for this role go first, wherever they are.
	ours, err := queryPairs(ctx, tx, `SELECT p.polname, format('%I.%I', n.nspname, c.relname) FROM pg_policy p
		JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE obj_description(p.oid, 'pg_policy') = $1 ORDER BY 2, 1`, mark)
	if err != nil {
		return nil, fmt.Errorf("listing okf's policies: %w", err)
	}
	for _, p := range ours {
		if err := exec("drop okf's earlier policy "+p[0]+" on "+p[1], "DROP POLICY "+pgx.Identifier{p[0]}.Sanitize()+" ON "+p[1]); err != nil {
			return nil, err
		}
	}
	var tables []string
	for _, k := range kinds {
		for t := range k.filters {
			if !slices.Contains(tables, t) {
				tables = append(tables, t)
			}
		}
	}
	rels, err := filteredRelations(ctx, tx, schemas, tables)
	if err != nil {
		return nil, err
	}
	// A table okf switched row-level security on for, which no filter of
	// this role's or another's needs any more, goes back as it was before
	// (its owner's policies, inert then, inert again).
	spare, err := queryPairs(ctx, tx, `SELECT p.polname, format('%I.%I', n.nspname, c.relname) FROM pg_policy p
		JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE obj_description(p.oid, 'pg_policy') = $1 AND NOT (c.oid = ANY($2))
		AND NOT EXISTS (SELECT 1 FROM pg_policy o WHERE o.polrelid = c.oid AND obj_description(o.oid, 'pg_policy') LIKE $3) ORDER BY 2`,
		sharedMark, relOIDs(rels), roleMark+"%")
	if err != nil {
		return nil, fmt.Errorf("listing okf's policies: %w", err)
	}
	for _, p := range spare {
		if err := exec("switch row-level security off on "+p[1]+" (no row filter needs it)",
			"DROP POLICY "+pgx.Identifier{p[0]}.Sanitize()+" ON "+p[1]+"; ALTER TABLE "+p[1]+" NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY"); err != nil {
			return nil, err
		}
	}
	if !slices.ContainsFunc(rels, func(r filteredRel) bool { return r.kind == "r" || r.kind == "p" }) {
		return nil, nil
	}
	if password == "" {
		return nil, errors.New("row filters need a password in the agent DSN: okf keys the engine's check of the caller's values on it")
	}
	inner, outer := hmacPads(rowSecurityKey(role, password))
	for _, st := range []struct {
		step, sql string
		args      []any
	}{
		{"create schema okf for the caller check (no grants)", "CREATE SCHEMA IF NOT EXISTS okf; REVOKE ALL ON SCHEMA okf FROM PUBLIC", nil},
		{"create okf.caller_key (no grants)", "CREATE TABLE IF NOT EXISTS okf.caller_key (role name PRIMARY KEY, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL); REVOKE ALL ON okf.caller_key FROM PUBLIC", nil},
		{"store the key of " + role + "'s caller documents", `INSERT INTO okf.caller_key VALUES ($1, $2, $3)
			ON CONFLICT (role) DO UPDATE SET inner_pad = excluded.inner_pad, outer_pad = excluded.outer_pad`, []any{role, inner, outer}},
		{"create okf.caller(), which checks the caller document's MAC", callerFunction, nil},
	} {
		if err := exec(st.step, st.sql, st.args...); err != nil {
			return nil, err
		}
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = quoteLiteral(k.name)
	}
	isAgent := "session_user <> " + quoteLiteral(role)
	policy := "(SELECT okf.caller()) ->> 'p'"
	for _, r := range rels {
		name := pgx.Identifier{r.schema, r.name}.Sanitize()
		qualified := r.schema + "." + r.name
		if r.kind != "r" && r.kind != "p" {
			s.Steps = append(s.Steps, qualified+" is not a table: its row filter holds through okf's rewrite only")
			continue
		}
		switch {
		case !r.security:
			// FORCE because a view runs with its owner's rights, usually
			// the table's owner, whom row-level security otherwise skips.
			if err := exec("switch row-level security on (forced) on "+qualified,
				"ALTER TABLE "+name+" ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY"); err != nil {
				return nil, err
			}
			if err := createPolicy(exec, "every role reads and writes "+qualified+" as before, but for okf's filters",
				"okf_unfiltered", name, "FOR ALL TO PUBLIC USING (true) WITH CHECK (true)", sharedMark); err != nil {
				return nil, err
			}
		case r.okfShared && !r.forced:
			if err := exec("force row-level security on "+qualified, "ALTER TABLE "+name+" FORCE ROW LEVEL SECURITY"); err != nil {
				return nil, err
			}
		case !r.okfShared:
			s.Steps = append(s.Steps, qualified+" has row-level security of its own: okf adds its filters and leaves the rest")
		}
		s.Filtered = append(s.Filtered, qualified)
		if err := createPolicy(exec, "only okf's signed callers of "+role+" read "+qualified,
			policyName(role, "callers"), name, fmt.Sprintf("AS RESTRICTIVE FOR SELECT TO PUBLIC USING (%s OR %s = ANY (ARRAY[%s]::text[]))",
				isAgent, policy, strings.Join(names, ", ")), mark); err != nil {
			return nil, err
		}
		for _, k := range kinds {
			cond, ok := k.filters[strings.ToLower(r.name)]
			if !ok {
				continue
			}
			engineCond, err := engineCondition(ctx, tx, name, cond)
			if err != nil {
				return nil, fmt.Errorf("row filter of %s (%s): %w", qualified, cond, err)
			}
			what, suffix := "the database's guard", "guard"
			if k.name != "" {
				what, suffix = "policy "+k.name, "policy_"+k.name
			}
			if err := createPolicy(exec, "filter "+qualified+" for "+role+"'s callers of "+what,
				policyName(role, suffix), name, fmt.Sprintf("AS RESTRICTIVE FOR SELECT TO PUBLIC USING (%s OR %s <> %s OR (%s))",
					isAgent, policy, quoteLiteral(k.name), engineCond), mark); err != nil {
				return nil, err
			}
		}
	}
	return withheldViews(ctx, tx, rels)
}

func createPolicy(exec func(string, string, ...any) error, step, name, table, body, mark string) error {
	n := pgx.Identifier{name}.Sanitize()
	return exec(step, "CREATE POLICY "+n+" ON "+table+" "+body+"; COMMENT ON POLICY "+n+" ON "+table+" IS "+quoteLiteral(mark))
}

// policyName is okf_<role>_<suffix>, cut with a hash to PostgreSQL's 63
// bytes so that two long names stay apart.
func policyName(role, suffix string) string {
	n := "okf_" + role + "_" + suffix
	if len(n) <= 63 {
		return n
	}
	h := sha256.Sum256([]byte(n))
	cut := 54
	for cut > 0 && n[cut]&0xc0 == 0x80 {
		cut--
	}
	return n[:cut] + "_" + hex.EncodeToString(h[:4])
}

// engineCondition is a row filter with each :caller.NAME read from the
// signed caller document, cast to the type PostgreSQL infers for it
// there, as it infers the rewrite's parameters.
func engineCondition(ctx context.Context, tx pgx.Tx, table, cond string) (string, error) {
	var refs []string
	numbered := callerRef.Get().ReplaceAllStringFunc(cond, func(ref string) string {
		i := slices.Index(refs, ref)
		if i < 0 {
			refs = append(refs, ref)
			i = len(refs) - 1
		}
		return "$" + strconv.Itoa(i+1)
	})
	sd, err := tx.Conn().PgConn().Prepare(ctx, "", "SELECT 1 FROM "+table+" WHERE "+numbered, nil)
	if err != nil {
		return "", err
	}
	types := make([]string, len(sd.ParamOIDs))
	for i, oid := range sd.ParamOIDs {
		if err := tx.QueryRow(ctx, "SELECT format_type($1, NULL)", oid).Scan(&types[i]); err != nil {
			return "", err
		}
	}
	return callerRef.Get().ReplaceAllStringFunc(cond, func(ref string) string {
		i := slices.Index(refs, ref)
		return fmt.Sprintf("((SELECT okf.caller()) -> 'v' ->> %s)::%s", quoteLiteral(ref[len(":caller."):]), types[i])
	}), nil
}

// filteredRelations are the relations of schemas a row filter names.
func filteredRelations(ctx context.Context, tx pgx.Tx, schemas, tables []string) ([]filteredRel, error) {
	rows, err := tx.Query(ctx, `SELECT c.oid, n.nspname, c.relname, c.relkind::text, c.relrowsecurity, c.relforcerowsecurity,
		EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND obj_description(p.oid, 'pg_policy') = $3)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ANY($1) AND lower(c.relname) = ANY($2) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		ORDER BY n.nspname, c.relname`, schemas, tables, sharedMark)
	if err != nil {
		return nil, fmt.Errorf("listing the filtered tables: %w", err)
	}
	var out []filteredRel
	var r filteredRel
	_, err = pgx.ForEachRow(rows, []any{&r.oid, &r.schema, &r.name, &r.kind, &r.security, &r.forced, &r.okfShared}, func() error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the filtered tables: %w", err)
	}
	return out, nil
}

func relOIDs(rels []filteredRel) []uint32 {
	out := []uint32{}
	for _, r := range rels {
		out = append(out, r.oid)
	}
	return out
}

// withheldViews are the views and materialized views that read a
// filtered table, directly or through other views, where row-level
// security cannot follow: a materialized view holds rows its owner read,
// and a view reads as its owner, which may bypass row-level security (a
// superuser, BYPASSRLS, or the table's owner where it is not forced). In
// doubt, a view is withheld.
func withheldViews(ctx context.Context, tx pgx.Tx, rels []filteredRel) (map[string]string, error) {
	rows, err := tx.Query(ctx, `WITH RECURSIVE reads(oid, bad) AS (
		SELECT v.oid, v.relkind = 'm' OR o.rolsuper OR o.rolbypassrls OR (v.relowner = t.relowner AND NOT t.relforcerowsecurity)
		FROM pg_depend d JOIN pg_rewrite w ON w.oid = d.objid JOIN pg_class v ON v.oid = w.ev_class
		JOIN pg_roles o ON o.oid = v.relowner JOIN pg_class t ON t.oid = d.refobjid
		WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = ANY($1) AND v.oid <> t.oid
		UNION
		SELECT v.oid, r.bad OR v.relkind = 'm' OR o.rolsuper OR o.rolbypassrls
		FROM reads r JOIN pg_depend d ON d.refobjid = r.oid JOIN pg_rewrite w ON w.oid = d.objid
		JOIN pg_class v ON v.oid = w.ev_class JOIN pg_roles o ON o.oid = v.relowner
		WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND v.oid <> r.oid)
		SELECT DISTINCT n.nspname || '.' || c.relname FROM reads r JOIN pg_class c ON c.oid = r.oid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE r.bad`, relOIDs(rels))
	if err != nil {
		return nil, fmt.Errorf("listing the views over filtered tables: %w", err)
	}
	views, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing the views over filtered tables: %w", err)
	}
	out := map[string]string{}
	for _, v := range views {
		out[v] = "it reads a filtered table where row-level security cannot follow (a materialized view, or an owner that bypasses it)"
	}
	return out, nil
}

// queryPairs reads rows of two text columns.
func queryPairs(ctx context.Context, q querier, sql string, args ...any) ([][2]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	var a, b string
	_, err = pgx.ForEachRow(rows, []any{&a, &b}, func() error {
		out = append(out, [2]string{a, b})
		return nil
	})
	return out, err
}

// quoteLiteral quotes s as a SQL string literal, backslashes included
// whatever standard_conforming_strings says.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}
