package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A run asked of an empty log is named for what it is, with the file the
// runs would be in, not as a run number out of range ("no run #-1: there
// are 0") or bad usage.
func TestRunsOfAnEmptyLog(t *testing.T) {
	dir := t.TempDir()
	want := "okf: there are no runs yet in " + filepath.Join(dir, "runs.jsonl") + ": okf ask and okf chat record one a question\n"
	for _, args := range [][]string{
		{"show", "last"},
		{"show", "1"},
		{"compare", "1", "2"},
		{"show", "last", "--html", filepath.Join(dir, "run.html")},
		{"--html", filepath.Join(dir, "runs.html")},
	} {
		code, stdout, stderr := run(t, append([]string{"runs", "--runs", dir}, args...)...)
		if code != exitFail || stdout != "" || stderr != want {
			t.Errorf("runs %s: exit %d, %q, %q; want exit 1 and %q", strings.Join(args, " "), code, stdout, stderr, want)
		}
	}
	if code, _, stderr := run(t, "runs", "--runs", dir); code != 0 || !strings.Contains(stderr, "no runs in ") {
		t.Errorf("listing an empty log: exit %d, %q", code, stderr)
	}
}
