package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf"
)

func newValidateCmd(e *env) *cobra.Command {
	var (
		asJSON      bool
		strict      bool
		maxWarnings int
		today       string
		listRules   bool
	)
	c := &cobra.Command{
		Use:   "validate <bundle-dir>",
		Short: "Check a bundle against OKF v0.2",
		Long: `Validate checks every markdown file of a bundle against the OKF v0.2 rules.

Only the conformance failures of §11 are errors: a file that is not UTF-8, a
concept without a closed frontmatter block, frontmatter that is not a YAML
mapping, and a missing or blank type. Everything else is a warning (a producer
mistake) or an info (a permitted state such as a stale concept), each with a
stable code and its spec section. Run with --rules to list them all.

Exit status: 0 passed, 1 errors (or more warnings than allowed), 2 bad usage
or not a directory.`,
		Example: `  okf validate ./bundles/solar
  okf validate --strict ./bundles/solar          # any warning fails
  okf validate --max-warnings 10 ./bundles/solar
  okf validate --json --today 2026-11-29 ./bundles/solar
  okf validate --rules`,
		RunE: func(c *cobra.Command, args []string) error {
			if listRules {
				return printRules(e)
			}
			if len(args) != 1 {
				return usageError("validate takes one bundle directory, got %d arguments", len(args))
			}
			opt := okf.Options{}
			if today != "" {
				t, err := time.Parse("2006-01-02", today)
				if err != nil {
					return usageError("--today %q: want a date like 2026-11-29", today)
				}
				opt.Now = t
			}
			if strict {
				maxWarnings = 0
			}
			dir := args[0]
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				return usageError("%s: not a directory", dir)
			}
			b, err := okf.Load(dir)
			if err != nil {
				return fmt.Errorf("reading bundle %s: %w", dir, err)
			}
			rep := okf.Validate(b, opt)
			if asJSON {
				out, err := rep.JSON(dir, maxWarnings)
				if err != nil {
					return err
				}
				if _, err := e.stdout.Write(out); err != nil {
					return err
				}
			} else if err := rep.WriteText(e.stdout, dir, maxWarnings, isTerminal(e.stdout)); err != nil {
				return err
			}
			if !rep.Passed(maxWarnings) {
				return silentExit(exitFail)
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&strict, "strict", false, "fail on any warning (same as --max-warnings 0)")
	f.IntVar(&maxWarnings, "max-warnings", -1, "fail when there are more warnings than this (-1: no limit)")
	f.StringVar(&today, "today", "", "decide staleness as of this date (YYYY-MM-DD) instead of now, for reproducible output")
	f.BoolVar(&listRules, "rules", false, "list every check with its code, severity and spec section, then exit")
	return c
}

func printRules(e *env) error {
	for _, r := range okf.Rules {
		if _, err := fmt.Fprintf(e.stdout, "%-31s %-8s %-6s %s\n", r.Code, r.Severity, r.Section, r.Summary); err != nil {
			return err
		}
	}
	return nil
}
