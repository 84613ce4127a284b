package cli

import (
	"testing"

	"github.com/okf-tools/okf/internal/pgtest"
)

// TestMain lets command tests use the throwaway PostgreSQL cluster; it
// starts only when a test asks for it.
func TestMain(m *testing.M) { pgtest.Main(m) }
