package eval

import (
	"slices"
	"testing"
)

// TestComparedLiterals pins which string literals of a gold SQL are values
// compared against a column (issue 27), on the shapes the question sets
// hold.
func TestComparedLiterals(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT id FROM hero WHERE gender = 'Female'", []string{"Female"}},
		{"SELECT id FROM hero WHERE gender <> 'Male' AND race != 'Human'", []string{"Human", "Male"}},
		{"SELECT id FROM hero WHERE 'Female' = gender", []string{"Female"}},
		{"SELECT id FROM hero WHERE colour IN ('Blue', 'Green') OR race NOT IN ('Alien')", []string{"Alien", "Blue", "Green"}},
		{"SELECT id FROM hero WHERE name LIKE 'Spider%' OR name LIKE 'Bat_man' OR name ILIKE 'Thor'", []string{"Thor"}},
		{"SELECT id FROM hero WHERE name = 'O''Brien' AND race = ''''", []string{"'", "O'Brien"}},
		// A CASE's results are not compared; its conditions are.
		{"SELECT CASE WHEN T2.gender = 'Female' THEN 'yes' ELSE 'no' END FROM hero T2", []string{"Female"}},
		{"SELECT id FROM hero WHERE height_cm = 200 AND weight_kg > 79.5", nil},
		// Duplicates count once; comments and quoted names are no literals.
		{"SELECT \"a = 'x'\" FROM t -- b = 'y'\nWHERE a = 'High' /* c = 'z' */ OR b = 'High'", []string{"High"}},
		// A JSON key, a function's argument, a piece of a concatenation:
		// not what is compared.
		{"SELECT 1 FROM t WHERE data->>'onlineuse' = 'High' AND (doc->>'tier') = 'Gold'", []string{"Gold", "High"}},
		{"SELECT 1 FROM t WHERE COALESCE(dustres, '') = 'IPX3' AND json_extract_path_text(s, 'Env') = 'Low'", []string{"IPX3", "Low"}},
		{"SELECT 1 FROM t WHERE name = 'Dr. ' || last OR 'Mr. ' || last = name OR 'x' IN (a, b)", nil},
		{"SELECT 1 FROM t WHERE status = 'Active'::text AND kind IN ('a'::text, 'b')", []string{"Active", "a", "b"}},
		{"SELECT 1 FROM t WHERE d >= '2020-01-01' AND d <= '2021-01-01' AND d = '2020-06-01'", []string{"2020-06-01"}},
		// SET assigns; its WHERE compares; a CASE in a SET list compares.
		{"UPDATE t SET status = 'Closed', flag = CASE WHEN kind = 'Loan' THEN 1 END, note = 'n' WHERE status = 'Open'", []string{"Loan", "Open"}},
		{"SET session_replication_role = 'replica'; SELECT 1 FROM t WHERE a = 'b'", []string{"b"}},
		// A function body is read; its := assigns.
		{"CREATE FUNCTION f() RETURNS int AS $fn$ BEGIN v := 'x'; RETURN (SELECT count(*) FROM t WHERE tier = 'Gold'); END; $fn$ LANGUAGE plpgsql", []string{"Gold"}},
		{"SELECT 1 FROM t WHERE a = 'open", nil},
	} {
		if got := comparedLiterals(c.sql); !slices.Equal(got, c.want) {
			t.Errorf("%s\n  compares %q, want %q", c.sql, got, c.want)
		}
	}
}

// TestShows pins when a text shows a literal: exactly, case included, as a
// whole word or phrase or in its quoted form.
func TestShows(t *testing.T) {
	for _, c := range []struct {
		text, value string
		want        bool
	}{
		{"gender: 'Female' or 'Male'", "Female", true},
		{"gender: Female or Male", "Male", true},
		{"gender: female or male", "Female", false},
		{"gender: Females", "Female", false},
		{"Marvel Comics, DC Comics", "DC Comics", true},
		{"publisher: Marvel Comics Group", "Marvel Comics", true},
		{"the name 'O''Brien'", "O'Brien", true},
		{"the name O'Brien", "O'Brien", true},
		{"status N/A or none", "N/A", true},
		{"IPX30", "IPX3", false},
		{"IPX3, IPX30", "IPX3", true},
	} {
		if got := shows(c.text, c.value); got != c.want {
			t.Errorf("shows(%q, %q) = %v, want %v", c.text, c.value, got, c.want)
		}
	}
}
