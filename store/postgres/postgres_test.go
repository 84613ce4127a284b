package postgres_test

import (
	"context"
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/store/postgres"
	"github.com/okf-tools/okf/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) string {
		return pgtest.Shared(t).NewDatabase(t)
	})
}

func BenchmarkSync(b *testing.B) {
	for _, n := range []int{500, 5000, 20000} {
		storetest.BenchmarkSync(b, pgtest.Shared(b).NewDatabase(b), n)
	}
}

// TestConcurrentOpen opens a fresh database from several handles at once,
// as replicas starting together do: creating the tables must not race.
func TestConcurrentOpen(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			st, err := postgres.Open(context.Background(), dsn)
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
}

func TestOpenNamesTheServer(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://okf:secret@127.0.0.1:1/nothing?connect_timeout=2")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1/nothing") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("open of an unreachable server: %v; want an error naming host and database, without the password", err)
	}
}
