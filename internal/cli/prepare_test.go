package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/internal/pgtest"
)

// TestPrepareRowFilters: okf prepare installs the row filters of the
// policies of okf.yaml that use the database, and only those, and a
// caller held to no policy still reads every row through the guard.
func TestPrepareRowFilters(t *testing.T) {
	admin := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE plant (id int PRIMARY KEY, name text, site text);
		INSERT INTO plant VALUES (1, 'North', 'a'), (2, 'South', 'b')`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_cli_rls_%d", os.Getpid())
	agent := strings.Replace(admin, "postgres@", role+":${OKF_TEST_AGENT_PW}@", 1)
	t.Setenv("OKF_TEST_AGENT_PW", "pw")
	cfg := writeConfig(t, fmt.Sprintf(`databases:
  - name: solar
    dsn: %s
    guard:
      admin_dsn: %s
  - name: other
    dsn: sqlite:other.db
policies:
  - name: site
    row_filters:
      plant: "site = :caller.site"
  - name: elsewhere
    databases: [other]
    row_filters:
      plant: "false"
`, agent, admin))
	code, out, errOut := run(t, "prepare", "--config", cfg, "solar")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"switch row-level security on (forced) on public.plant",
		"filter public.plant for " + role + "'s callers of policy site",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "elsewhere") {
		t.Errorf("a policy of another database installed:\n%s", out)
	}
	code, out, errOut = run(t, "sql", "--config", cfg, "solar", "SELECT name FROM plant ORDER BY id")
	if code != 0 || out != "name\nNorth\nSouth\n(2 rows)\n" {
		t.Errorf("sql with no policy: exit %d\n%s%s", code, out, errOut)
	}
}
