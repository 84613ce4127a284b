package sqlguard

import (
	"testing"

	"github.com/okf-tools/okf/internal/sqlshapes"
)

// TestValidateHostileShapes hands the validator every hostile shape at
// sizes up to the largest it accepts and beyond: it must answer each with
// a verdict, never crash, and refuse the deep ones before parsing them.
func TestValidateHostileShapes(t *testing.T) {
	for _, d := range []Dialect{DialectPostgres, DialectSQLite} {
		v, err := NewValidator(d, Options{MaxSQLBytes: MaxSQLBytesLimit}, fixtureCatalog(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sqlshapes.Shapes {
			for _, size := range []int{1 << 10, 16 << 10, 64 << 10, MaxSQLBytesLimit, 1 << 20} {
				err := v.Validate(s.Text(size))
				if err == nil {
					continue
				}
				ge, ok := AsError(err)
				if !ok || ge.Layer != LayerValidator {
					t.Errorf("dialect %d, %s at %d bytes: %v", d, s.Name, size, err)
				}
				if size > MaxSQLBytesLimit && ge.Code != "too_long" {
					t.Errorf("dialect %d, %s at %d bytes: %s, want too_long", d, s.Name, size, ge.Code)
				}
			}
		}
	}
}

// FuzzValidate: no text makes the validator panic or crash the process
// (the PostgreSQL parser is C code), and every refusal is an *Error.
// make fuzz runs it; BENCHMARKS.md has the long run.
func FuzzValidate(f *testing.F) {
	for _, list := range [][]attack{postgresAttacks, sqliteAttacks} {
		for _, a := range list {
			f.Add(a.text(vars{file: "/tmp/x", pid: "1", seq: "s", conninfo: "dbname=x"}))
		}
	}
	for _, s := range sqlshapes.Shapes {
		f.Add(s.Text(2 << 10))
	}
	f.Add("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r")
	f.Add("SELECT h.name, (SELECT count(*) FROM notes n WHERE n.body LIKE h.name || '%') FROM hero h ORDER BY 2 DESC")
	validators := make([]*Validator, 2)
	for i, d := range []Dialect{DialectPostgres, DialectSQLite} {
		v, err := NewValidator(d, attackOptions, fixtureCatalog(d))
		if err != nil {
			f.Fatal(err)
		}
		validators[i] = v
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, v := range validators {
			if err := v.Validate(sql); err != nil {
				if _, ok := AsError(err); !ok {
					t.Errorf("%q: %v is not an *Error", sql, err)
				}
			}
		}
	})
}
