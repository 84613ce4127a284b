package sqlguard

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	loadClients = 64
	loadQueries = 2000
)

// loadQuery is one kind of query in the mix and what must come of it.
type loadQuery struct {
	kind  string
	sql   func(i int) string
	check func(*Result, error) error
}

func wantRows(n int) func(*Result, error) error {
	return func(r *Result, err error) error {
		if err != nil {
			return err
		}
		if r.Total != n || !r.TotalKnown {
			return fmt.Errorf("got %d rows (known %v), want %d", r.Total, r.TotalKnown, n)
		}
		return nil
	}
}

func wantLayer(l Layer) func(*Result, error) error {
	return func(r *Result, err error) error {
		if ge, ok := AsError(err); !ok || ge.Layer != l {
			return fmt.Errorf("got %v, %v; want an error from the %s", r, err, l)
		}
		return nil
	}
}

// loadMix is 2,000 queries: ordinary reads, then per 20 queries one SQL
// error, one refusal, one timeout and one runaway stopped by the row cap.
var loadMix = []loadQuery{
	{"point read", func(i int) string {
		return fmt.Sprintf("SELECT name, power FROM hero WHERE id = %d", i%fixtureHeroes+1)
	}, wantRows(1)},
	{"aggregate", func(i int) string {
		return fmt.Sprintf("SELECT count(*), avg(power), max(name) FROM hero WHERE id %% 7 = %d", i%7)
	}, wantRows(1)},
	{"join", func(i int) string {
		return fmt.Sprintf("SELECT n.body, count(h.id) FROM notes n JOIN hero h ON h.id %% 3 = length(n.body) %% 3 WHERE h.id < %d GROUP BY n.body", 100+i%50)
	}, wantRows(3)},
	{"range", func(i int) string {
		return fmt.Sprintf("SELECT id, name FROM hero WHERE id BETWEEN %d AND %d ORDER BY id", i%1000+1, i%1000+40)
	}, wantRows(40)},
	{"sql error", func(int) string { return "SELECT nam FROM hero" }, wantLayer(LayerDatabase)},
	{"refusal", func(int) string { return "DELETE FROM hero" }, wantLayer(LayerValidator)},
	{"timeout", func(int) string { return slowQuery }, wantLayer(LayerTimeout)},
	{"runaway", func(int) string { return "SELECT a.id, b.id FROM hero a, hero b" }, func(r *Result, err error) error {
		if err != nil {
			return err
		}
		if r.TotalKnown || r.Total != 1000 {
			return fmt.Errorf("runaway: total %d known %v, want the count cut at 1000", r.Total, r.TotalKnown)
		}
		return nil
	}},
}

// pick spreads the kinds: of every 20 queries, 16 ordinary reads and one
// of each of the four failure kinds.
func pick(i int) loadQuery {
	switch i % 20 {
	case 3:
		return loadMix[4]
	case 8:
		return loadMix[5]
	case 13:
		return loadMix[6]
	case 18:
		return loadMix[7]
	}
	return loadMix[i%4]
}

// TestLoadPostgres runs 2,000 mixed queries from 64 concurrent clients
// through one guarded database: every outcome must be the intended one,
// and no connection may be left open. It logs the guard's overhead per
// query against the same queries run bare.
func TestLoadPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("load test skipped in -short mode")
	}
	admin, agent := pgFixture(t)
	ctx := context.Background()
	opts := fixtureOptions
	opts.Timeout, opts.MaxConns, opts.CountLimit, opts.MaxRows = 500*time.Millisecond, 16, 1000, 50
	db, err := Open(ctx, "fixture", agent, opts, NewAuditLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		failures []string
		counts   = map[string]int{}
		wg       sync.WaitGroup
	)
	began := time.Now()
	for range loadClients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= loadQueries {
					return
				}
				q := pick(i)
				res, err := db.Query(ctx, fmt.Sprintf("client-%d", i%loadClients), q.sql(i))
				checkErr := q.check(res, err)
				mu.Lock()
				counts[q.kind]++
				if checkErr != nil {
					failures = append(failures, fmt.Sprintf("query %d (%s): %v", i, q.kind, checkErr))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, f := range failures[:min(len(failures), 10)] {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.Errorf("%d unintended outcomes of %d", len(failures), loadQueries)
	}
	t.Logf("load: %d queries from %d clients in %v: %v", loadQueries, loadClients, time.Since(began).Round(time.Millisecond), counts)
	if open, busy := activeGuardConns(t, admin); busy != 0 || open > opts.MaxConns {
		t.Errorf("after the load: %d guard sessions open (pool max %d), %d busy", open, opts.MaxConns, busy)
	}
	db.Close()
	if open := waitGuardConnsClosed(t, admin); open != 0 {
		t.Errorf("%d guard sessions still open after Close", open)
	}
	logOverhead(t, agent, opts)
}

// waitGuardConnsClosed polls until the server has seen the guard's
// sessions go, and returns how many remain.
func waitGuardConnsClosed(t *testing.T, admin string) int {
	var open int
	for range 100 {
		if open, _ = activeGuardConns(t, admin); open == 0 {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	return open
}

// logOverhead times the ordinary reads through the guard and bare on a
// pool of the same role, one at a time, and logs p50 and p99 of each and
// of the difference. It asserts nothing about time.
func logOverhead(t *testing.T, agent string, opts Options) {
	ctx := context.Background()
	db, err := Open(ctx, "fixture", agent, opts, NewAuditLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bare, err := pgxpool.New(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	const n = 1000
	var guarded, raw []time.Duration
	for i := range n {
		sql := loadMix[i%4].sql(i)
		start := time.Now()
		if _, err := db.Query(ctx, "overhead", sql); err != nil {
			t.Fatal(err)
		}
		guarded = append(guarded, time.Since(start))
		start = time.Now()
		rows, err := bare.Query(ctx, sql, pgx.QueryExecModeExec)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				t.Fatal(err)
			}
		}
		if rows.Close(); rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		raw = append(raw, time.Since(start))
	}
	p := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1))]
	}
	diff := make([]time.Duration, n)
	for i := range diff {
		diff[i] = guarded[i] - raw[i]
	}
	t.Logf("overhead over %d ordinary reads, one at a time: guarded p50 %v p99 %v; bare p50 %v p99 %v; guard overhead p50 %v p99 %v",
		n, p(guarded, 0.5), p(guarded, 0.99), p(raw, 0.5), p(raw, 0.99), p(diff, 0.5), p(diff, 0.99))
}
