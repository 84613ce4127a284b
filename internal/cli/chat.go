package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/trace"
)

func newChatCmd(e *env) *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "chat --db <name>",
		Short: "Ask a database questions in a REPL, with history and a trace of every answer",
		Long: `Chat is okf ask in a loop: type a question, watch the steps (knowledge
read, SQL run, errors repaired), and get the answer with its rows as a
table and a one-line summary of calls, tokens, cost and SQL errors. Every
question is recorded in the run log like okf ask.

Commands:
  /db <name>          switch database (a name from okf.yaml or a DSN)
  /strategy <name>    schema, raw, browse, engine, context or auto
  /model <name>       a model from okf.yaml, or provider/model
  /runs               the last runs of the log
  /help               this list
  /exit               leave (also Ctrl-D)

Line editing and history (kept in the runs folder) work on a terminal;
piped input is read line by line.`,
		Example: `  okf chat --db disaster
  okf chat --db sqlite:superhero.sqlite --dir bundles/superhero --strategy engine`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := context.Background()
			s, err := openSession(ctx, e, &f)
			if err != nil {
				return err
			}
			defer s.close()
			return chatLoop(ctx, e, s)
		},
	}
	f.register(c.Flags())
	return c
}

// lineReader is the REPL's input: liner on a terminal, lines otherwise.
type lineReader interface {
	Prompt(prompt string) (string, error)
	AppendHistory(line string)
	Close() error
}

type plainReader struct {
	sc  *bufio.Scanner
	out io.Writer
}

func (p *plainReader) Prompt(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	if !p.sc.Scan() {
		if err := p.sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	fmt.Fprintln(p.out)
	return p.sc.Text(), nil
}

func (p *plainReader) AppendHistory(string) {}
func (p *plainReader) Close() error         { return nil }

// linerReader keeps history in a file across sessions.
type linerReader struct {
	*liner.State
	history string
}

func (l *linerReader) Close() error {
	if f, err := os.Create(l.history); err == nil {
		l.WriteHistory(f)
		f.Close()
	}
	return l.State.Close()
}

func newLineReader(e *env, historyDir string) lineReader {
	if f, ok := e.stdin.(*os.File); ok && f == os.Stdin && isTerminal(e.stdout) {
		l := liner.NewLiner()
		l.SetCtrlCAborts(true)
		history := filepath.Join(historyDir, ".chat_history")
		if h, err := os.Open(history); err == nil {
			l.ReadHistory(h)
			h.Close()
		}
		if os.MkdirAll(historyDir, 0o755) != nil {
			history = os.DevNull
		}
		return &linerReader{State: l, history: history}
	}
	return &plainReader{sc: bufio.NewScanner(e.stdin), out: e.stdout}
}

func chatLoop(ctx context.Context, e *env, s *agentSession) error {
	in := newLineReader(e, s.runsDir())
	defer in.Close()
	color := isTerminal(e.stdout)
	fmt.Fprintf(e.stdout, "okf chat · %s · %s · %s · /help for commands\n", s.dbName, s.strategy, s.model.Name())
	for {
		line, err := in.Prompt(fmt.Sprintf("%s> ", s.dbName))
		if errors.Is(err, io.EOF) || errors.Is(err, liner.ErrPromptAborted) {
			fmt.Fprintln(e.stdout)
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading input: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		in.AppendHistory(line)
		if strings.HasPrefix(line, "/") {
			if done := chatCommand(ctx, e, s, line); done {
				return nil
			}
			continue
		}
		runCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
		out, _, err := s.run(runCtx, line, "", e.stdout, color)
		stop()
		printOutcome(e.stdout, out, s.db.Options().ShownRows, color)
		if err != nil {
			fmt.Fprintf(e.stderr, "okf: %v\n", err)
		}
		// Statements are not run unaudited: the chat ends.
		if err := s.audit.Err(); err != nil {
			return err
		}
	}
}

// chatCommand runs a slash command; it reports whether to leave.
func chatCommand(ctx context.Context, e *env, s *agentSession, line string) bool {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	var err error
	switch cmd {
	case "/exit", "/quit":
		return true
	case "/db":
		err = s.setDB(ctx, e, arg)
	case "/strategy":
		err = s.setStrategy(arg)
	case "/model":
		err = s.setModel(arg)
	case "/runs":
		runs, lerr := trace.Load(s.runsDir())
		if lerr != nil {
			err = lerr
			break
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, trace.List(runs, max(len(runs)-10, 0)))
		tw.Flush()
		return false
	case "/help":
		fmt.Fprintln(e.stdout, "/db <name>  /strategy schema|raw|browse|engine|context|auto  /model <name>  /runs  /exit")
		return false
	default:
		fmt.Fprintf(e.stdout, "unknown command %s; /help lists them\n", cmd)
		return false
	}
	if err != nil {
		fmt.Fprintf(e.stdout, "%v\n", err)
		return false
	}
	fmt.Fprintf(e.stdout, "now: %s · %s · %s\n", s.dbName, s.strategy, s.model.Name())
	return false
}
