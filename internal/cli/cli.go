// Package cli holds the okf command line: one file per command, each a thin
// layer that parses flags, calls the library packages and renders results.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Version is the release version, set at build time with
// -ldflags "-X github.com/okf-tools/okf/internal/cli.Version=v1.2.3".
var Version = ""

// Exit codes shared by every command.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad invocations (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// exactArgs refuses a command line without exactly n arguments, saying
// what the command takes ("one folder"), as bad usage (exit 2).
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s takes %s, got %d arguments", c.Name(), what, len(args))
		}
		return nil
	}
}

// rangeArgs refuses a command line without min to max arguments, as
// exactArgs does.
func rangeArgs(min, max int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usageError("%s takes %s, got %d arguments", c.Name(), what, len(args))
		}
		return nil
	}
}

// silentExit ends a command with a code and no further message.
func silentExit(code int) error { return &exitError{code: code} }

// env is what a command may touch of the outside world, so tests can run
// commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// isTerminal reports whether w is a terminal that should get colours.
func isTerminal(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Main runs the okf command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "okf: %v\n", ee.err)
			if ee.code == exitUsage {
				fmt.Fprintln(stderr, "Run 'okf --help' for usage.")
			}
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "okf: %v\n", err)
	if isFlagError(err) {
		fmt.Fprintln(stderr, "Run 'okf --help' for usage.")
		return exitUsage
	}
	return exitFail
}

// isFlagError reports whether cobra refused the command line itself: a bad
// flag, or a command that does not exist (cobra has no error type for that).
func isFlagError(err error) bool {
	var fe *flagError
	return errors.As(err, &fe) || strings.HasPrefix(err.Error(), "unknown command ")
}

type flagError struct{ err error }

func (f *flagError) Error() string { return f.err.Error() }
func (f *flagError) Unwrap() error { return f.err }

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "okf",
		Short: "Business knowledge for SQL agents, as Open Knowledge Format bundles",
		Long: `okf turns a database's documentation into an Open Knowledge Format (OKF v0.2)
bundle, checks it, and gives SQL agents the business rules and tables a
question needs at the lowest token cost.`,
		Example: `  okf demo
  okf compile examples/shop --out bundles
  okf validate --strict bundles/shop
  okf import bundles
  okf context "Which active customers are not high-value customers?"
  okf sql sqlite:.demo/shop.db "SELECT region, count(*) FROM customers GROUP BY region"
  okf ask "Who are the high-value customers?" --db sqlite:.demo/shop.db`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &flagError{err} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newValidateCmd(e),
		newManifestCmd(e),
		newGetCmd(e),
		newSearchCmd(e),
		newContextCmd(e),
		newEvalCmd(e),
		newBenchCmd(e),
		newVersionCmd(e),
		newCompileCmd(e),
		newLoadCmd(e),
		newSQLCmd(e),
		newValuesCmd(e),
		newPrepareCmd(e),
		newImportCmd(e),
		newExportCmd(e),
		newHistoryCmd(e),
		newServeCmd(e),
		newMCPCmd(e),
		newAskCmd(e),
		newChatCmd(e),
		newRunsCmd(e),
		newDoctorCmd(e),
		newDemoCmd(e),
		newGraphCmd(e),
	)
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
	}
	return root
}

// refuseUnknownSubcommands makes a command that only groups others (okf
// eval) refuse a word that is none of them, which cobra would answer with
// its help and success, and print its help when given none.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		var names []string
		for _, sub := range c.Commands() {
			names = append(names, sub.Name())
		}
		return usageError("%q is not a command of okf %s; its commands are %s", args[0], c.Name(), strings.Join(names, ", "))
	}
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the okf version",
		Long:    "Version prints the release okf was built as, or devel for a build from a checkout.",
		Example: "  okf version",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(e.stdout, "okf %s\n", version())
			return err
		},
	}
}

func version() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
