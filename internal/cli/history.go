package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/store"
)

// historyChangeCap is how many changes a commit lists before "… N more",
// so a first import of thousands of files stays readable.
const historyChangeCap = 10

func newHistoryCmd(e *env) *cobra.Command {
	var (
		sf   storeFlags
		n    int
		full bool
	)
	c := &cobra.Command{
		Use:   "history",
		Short: "List a tenant's commits, newest first",
		Long: `History lists the commits of a tenant, newest first: the commit number, its
time (UTC), its message, how many documents it added, modified and deleted,
and which ones (A added, M modified, D deleted, with the first 12 characters
of the content hash). A commit lists its first 10 changes unless --full.`,
		Example: `  okf history
  okf history -n 3 --full
  okf history --tenant acme --store postgres://okf@db/okf`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if n < 0 {
				return usageError("-n %d: want 0 (all) or more", n)
			}
			ctx := context.Background()
			st, err := sf.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			commits, err := st.History(ctx, sf.tenant, n)
			if err != nil {
				return err
			}
			if len(commits) == 0 {
				_, err := fmt.Fprintf(e.stdout, "tenant %s has no commits\n", sf.tenant)
				return err
			}
			return printHistory(e.stdout, commits, full)
		},
	}
	sf.register(c.Flags())
	c.Flags().IntVarP(&n, "number", "n", 10, "show the newest N commits (0: all)")
	c.Flags().BoolVar(&full, "full", false, "list every change of each commit")
	return c
}

func printHistory(w io.Writer, commits []store.Commit, full bool) error {
	var b strings.Builder
	for i, c := range commits {
		if i > 0 {
			b.WriteByte('\n')
		}
		var added, modified, deleted int
		for _, ch := range c.Changes {
			switch ch.Op {
			case store.Added:
				added++
			case store.Modified:
				modified++
			case store.Deleted:
				deleted++
			}
		}
		fmt.Fprintf(&b, "commit %d  %s  %s\n", c.ID, c.Time.UTC().Format(time.DateTime), oneLine(c.Message))
		fmt.Fprintf(&b, "  %d added, %d modified, %d deleted\n", added, modified, deleted)
		for j, ch := range c.Changes {
			if !full && j == historyChangeCap {
				fmt.Fprintf(&b, "  … %d more (--full lists them)\n", len(c.Changes)-j)
				break
			}
			fmt.Fprintf(&b, "  %c %s  %s/%s\n", strings.ToUpper(string(ch.Op))[0], ch.Hash[:12], ch.Bundle, ch.Path)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps a multi-line commit message on its header line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
