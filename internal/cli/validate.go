package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/queries"
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
		Short: "Check a bundle, or a folder of bundles, against OKF v0.2",
		Long: `Validate checks every markdown file of a bundle against the OKF v0.2 rules.

Only the conformance failures of §11 are errors: a file that is not UTF-8, a
concept without a closed frontmatter block, frontmatter that is not a YAML
mapping, a missing or blank type, and reserved files that break their
structure (§11.3): frontmatter in an index.md below the root, root index.md
frontmatter other than okf_version, and log.md entries outside a
YYYY-MM-DD date group or not newest first. Everything else is a warning (a
producer mistake) or an info (a permitted state such as a stale concept),
each with a stable code and its spec section. Run with --rules to list them
all.

A folder with no markdown files at its top but bundles in its subfolders
is a folder of bundles, found as okf import finds them: the output first
says which subfolders it was read as, then each is validated as a bundle
of its own, with a report each and a count at the end (--json: an object
with the folder, its bundles and their reports). Give the folder an
index.md to validate it as one bundle instead. A folder with no markdown
files at all is an error.

Exit status: 0 passed (every bundle), 1 errors (or more warnings than
allowed) or no bundle, 2 bad usage or not a directory.`,
		Example: `  okf validate ./bundles/solar
  okf validate ./bundles                         # every bundle in the folder
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
			opt := okf.Options{Checks: []func(*okf.Bundle) []okf.Finding{okf.CheckRuleColumns, queries.CheckSQL}}
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
			found, err := okf.FindBundles(dir)
			if err != nil {
				return err
			}
			// A folder with documents at its top is one bundle, reported
			// alone; any other folder holds bundles, reported together.
			if len(found) == 1 && found[0].Dir == dir {
				return validateOne(e, dir, opt, maxWarnings, asJSON)
			}
			return validateMany(e, dir, found, opt, maxWarnings, asJSON)
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

// validateOne validates the bundle in dir and prints its report.
func validateOne(e *env, dir string, opt okf.Options, maxWarnings int, asJSON bool) error {
	rep, err := validateDir(dir, opt)
	if err != nil {
		return err
	}
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
}

// validateMany validates each bundle of the folder dir on its own, so that
// links resolve from each bundle's root, and prints a report each: text
// reports one after another, between the bundles the folder was read as
// and a count of those that passed, or one JSON object. It says how the
// folder was read because the spec makes the folder given the bundle root
// (§3, §8): read as one bundle, its subfolders' index.md could hold no
// frontmatter, and the peers read it so.
func validateMany(e *env, dir string, bundles []okf.BundleFolder, opt okf.Options, maxWarnings int, asJSON bool) error {
	folder := folderReport{Folder: dir, Bundles: make([]string, len(bundles))}
	for i, bf := range bundles {
		rel, err := filepath.Rel(dir, bf.Dir)
		if err != nil {
			return err
		}
		folder.Bundles[i] = filepath.ToSlash(rel)
	}
	if !asJSON {
		if _, err := fmt.Fprintf(e.stdout, "read %s as %s: %s (it has no document at its top; an index.md there makes it one bundle)\n",
			dir, countBundles(len(bundles)), strings.Join(folder.Bundles, ", ")); err != nil {
			return err
		}
	}
	failed := 0
	for _, bf := range bundles {
		rep, err := validateDir(bf.Dir, opt)
		if err != nil {
			return err
		}
		if !rep.Passed(maxWarnings) {
			failed++
		}
		if asJSON {
			folder.Reports = append(folder.Reports, rep.JSONReport(bf.Dir, maxWarnings))
			continue
		}
		if _, err := fmt.Fprintln(e.stdout); err != nil {
			return err
		}
		if err := rep.WriteText(e.stdout, bf.Dir, maxWarnings, isTerminal(e.stdout)); err != nil {
			return err
		}
	}
	if asJSON {
		folder.Passed = failed == 0
		out, err := json.MarshalIndent(folder, "", "  ")
		if err != nil {
			return err
		}
		if _, err := e.stdout.Write(append(out, '\n')); err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(e.stdout, "\n%s: %d passed, %d failed\n", countBundles(len(bundles)), len(bundles)-failed, failed); err != nil {
		return err
	}
	if failed > 0 {
		return silentExit(exitFail)
	}
	return nil
}

// folderReport is the JSON form of a folder read as several bundles.
type folderReport struct {
	Folder  string           `json:"folder"`
	Bundles []string         `json:"bundles"` // the subfolders read as bundles
	Passed  bool             `json:"passed"`  // every bundle passed
	Reports []okf.JSONReport `json:"reports"`
}

// countBundles says "1 bundle" or "n bundles".
func countBundles(n int) string {
	if n == 1 {
		return "1 bundle"
	}
	return fmt.Sprintf("%d bundles", n)
}

func validateDir(dir string, opt okf.Options) (*okf.Report, error) {
	b, err := okf.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", dir, err)
	}
	return okf.Validate(b, opt), nil
}

func printRules(e *env) error {
	for _, r := range okf.Checks {
		if _, err := fmt.Fprintf(e.stdout, "%-31s %-8s %-6s %s\n", r.Code, r.Severity, r.Section, r.Summary); err != nil {
			return err
		}
	}
	return nil
}
