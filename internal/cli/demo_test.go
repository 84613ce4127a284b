package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/okf-tools/okf/trace"
)

var doneLine = regexp.MustCompile(`(?m)^done in .*$`)

func TestDemoWithoutAModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	t.Chdir(t.TempDir()) // no okf.yaml here
	code, out, stderr := run(t, "demo", "--dir", dir)
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"created " + filepath.Join(dir, "shop.db") + " from shop.sql: 300 customers, 1812 orders, 1910 payments, 1701 deliveries, 110 returns\n",
		"compiled " + filepath.Join(dir, "bundles", "shop") + ": 5 tables, 10 business rules, 0 gaps\n",
		"18 concepts, 4 indexes, a log: 0 errors, 0 warnings\n",
		"commit 1: 23 documents stored byte for byte in " + filepath.Join(dir, "data", "okf.db"),
		"drew 18 concepts and 75 links: open " + filepath.Join(dir, "shop.html") + " in a browser\n",
		"Pasting the raw documentation into a prompt costs 1928 tokens (o200k) for every question.\n",
		"  ### Active Customer (knowledge/active-customer)\n",
		"  ParcelCo | 94.64\n  RoadRunner | 74.46\n  SwiftShip | 87.32\n  (3 rows)\n",
		"  Error: refused by the validator: found 2 statements (SELECT, DELETE); send exactly one",
		"No model is configured, so the demo stops here. Three ways to connect one:\n",
		"okf mcp --data " + filepath.Join(dir, "data") + " --config " + filepath.Join(dir, "okf.yaml") + "\n",
		"okf serve --data ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^shop_3  What is the on-time delivery rate of each carrier\? +\d+ +\d+% +1 of 1$`).MatchString(out) {
		t.Errorf("no pack row for shop_3 in:\n%s", out)
	}
	// Packs cost less than the raw documentation and hold most gold rules;
	// the exact figures move with the search engine's tuning.
	m := regexp.MustCompile(`(?m)^10 questions: a pack costs (\d+) tokens on average, \d+% of the raw documentation, and holds (\d+) of the 31 rules the gold SQL needs\.$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary of the packs in:\n%s", out)
	}
	if avg, held := atoi(t, m[1]), atoi(t, m[2]); avg <= 0 || avg >= 1928*6/10 || held < 25 {
		t.Errorf("packs average %d tokens (raw: 1928) and hold %d of 31 gold rules", avg, held)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "shop.html")); err != nil || !strings.Contains(string(page), `"ref": "shop/knowledge/active-customer"`) {
		t.Errorf("the graph page: %v", err)
	}
	// The same again, in the same folder: the same output apart from the
	// time, and a configuration the other commands read.
	code, again, stderr := run(t, "demo", "--dir", dir)
	if code != 0 {
		t.Fatalf("second demo: exit %d: %s", code, stderr)
	}
	if doneLine.ReplaceAllString(again, "") != doneLine.ReplaceAllString(out, "") {
		t.Errorf("a second demo printed something else:\n%s", again)
	}
	code, rows, stderr := run(t, "sql", "--config", filepath.Join(dir, "okf.yaml"), "shop", "SELECT count(*) AS n FROM returns")
	if code != 0 || rows != "n\n110\n(1 row)\n" {
		t.Errorf("okf sql on the demo's okf.yaml: exit %d, %q, %s", code, rows, stderr)
	}
}

// The replayed conversation shipped with the example still answers shop_5
// correctly on the example database, repairing exactly one SQL error: its
// second query, once run_sql took a database, failed too.
func TestDemoReplay(t *testing.T) {
	replay, err := filepath.Abs("../../examples/shop/replay_shop_5.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, out, stderr := run(t, "demo", "--question", "shop_5", "--model", "script/"+replay)
	if code != 0 || !strings.Contains(out, "step 2: run_sql") || !strings.Contains(out, "  -> error\n") ||
		!strings.Contains(out, "The gold SQL of shop_5 gives the same rows: correct.") ||
		strings.Count(out, "  -> error\n") != 1 || !strings.Contains(out, " · 3 SQL (1 error) · ") {
		t.Errorf("replay: exit %d, %s\n%s", code, stderr, out)
	}
}

func TestDemoRefusesABadModel(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("okf.yaml", []byte("agent:\n  model: openai/gpt-4.1-mini\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "")
	os.Unsetenv("OPENAI_API_KEY")
	code, out, stderr := run(t, "demo", "--model", "nope")
	if code != 2 || !strings.Contains(stderr, `unknown model "nope"`) || out != "" {
		t.Errorf("a misnamed model: exit %d, %q", code, stderr)
	}
	code, out, stderr = run(t, "demo")
	if code != 2 || !strings.Contains(stderr, "OPENAI_API_KEY") || out != "" {
		t.Errorf("a model without its key: exit %d, %q, %q", code, stderr, out)
	}
	os.Remove("okf.yaml")
	if err := os.WriteFile("notes.txt", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(t, "demo", "--dir", ".")
	if code != 2 || !strings.Contains(stderr, ". holds files okf demo did not write") || out != "" {
		t.Errorf("a folder of someone else's files: exit %d, %q, %q", code, stderr, out)
	}
	code, _, stderr = run(t, "demo", "--budget", "10")
	if code != 2 || !strings.Contains(stderr, "--budget 10 is too small") {
		t.Errorf("a tiny budget: exit %d, %q", code, stderr)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDemoAsksAConfiguredModel(t *testing.T) {
	project := t.TempDir()
	t.Chdir(project)
	script := `{"tool_calls":[{"name":"context","arguments":{"question":"How many active customers does the shop have?"}}],"usage":{"input":1200,"output":20}}
{"tool_calls":[{"name":"run_sql","arguments":{"sql":"SELECT COUNT(DISTINCT custref) AS active_customers FROM orders o WHERE ordstat <> 'cancelled' AND orderdt >= '2026-04-02' AND orderdt < '2026-07-01' AND EXISTS (SELECT 1 FROM payments p WHERE p.ordref = o.ordid AND p.paystat = 'settled')"}}],"usage":{"input":2600,"cached":1200,"output":60}}
{"tool_calls":[{"name":"submit_answer","arguments":{"sql":"SELECT COUNT(DISTINCT custref) AS active_customers FROM orders o WHERE ordstat <> 'cancelled' AND orderdt >= '2026-04-02' AND orderdt < '2026-07-01' AND EXISTS (SELECT 1 FROM payments p WHERE p.ordref = o.ordid AND p.paystat = 'settled')","answer":"184 customers are active."}}],"usage":{"input":2800,"cached":2600,"output":70}}
`
	if err := os.WriteFile("run.jsonl", []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := "agent:\n  model: replay\n  models:\n    - name: replay\n      provider: script\n      script: run.jsonl\n"
	if err := os.WriteFile("okf.yaml", []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "demo")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		`$ okf ask "How many active customers does the shop have?" --db sqlite:.demo/shop.db`,
		"step 1: context",
		"step 2: run_sql",
		"184 customers are active.",
		"submitted · 3 model calls",
		"The gold SQL of shop_1 gives the same rows: correct.",
		"open .demo/run.html in a browser to see it step by step",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No model is configured") {
		t.Error("the demo printed the ways to connect although a model is configured")
	}
	runs, err := trace.Load(filepath.Join(".demo", "runs"))
	if err != nil || len(runs) != 1 || runs[0].StopReason != trace.Submitted || runs[0].Database != "shop" {
		t.Fatalf("run log: %v, %+v", err, runs)
	}
	code, _, stderr = run(t, "runs", "--runs", ".demo/runs", "show", "last", "--html", "run.html")
	if code != 0 || stderr != "wrote run.html: 1 run; open it in a browser\n" {
		t.Fatalf("runs --html: exit %d, %q", code, stderr)
	}
	page, err := os.ReadFile("run.html")
	if err != nil || !strings.Contains(string(page), `"id": "`+runs[0].ID+`"`) || !strings.Contains(string(page), "184 customers are active.") {
		t.Errorf("run viewer: %v", err)
	}
	if code, _, stderr := run(t, "runs", "--runs", ".demo/runs", "show", "nope", "--html", "x.html"); code != 2 || !strings.Contains(stderr, `no run with id "nope"`) {
		t.Errorf("unknown run: exit %d, %q", code, stderr)
	}
}

// TestContextPacksAreStable: the same question gives the same pack every
// time. The example shop's shop_5 once got a worked example in one run and
// not the next: its share of the question was summed in a map's order.
func TestContextPacksAreStable(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", "../../examples/shop", "--out", dir); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	question := "Who are the high-value customers? Give each one's name, segment and net order value over the last year."
	_, first, _ := run(t, "context", "--dir", filepath.Join(dir, "shop"), question)
	for range 40 {
		if _, again, _ := run(t, "context", "--dir", filepath.Join(dir, "shop"), question); again != first {
			t.Fatalf("the pack changed:\n%s\nthen\n%s", first, again)
		}
	}
}
