package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/perf"
	"github.com/okf-tools/okf/internal/synth"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		sizes  []int
		rounds int
		asJSON bool
		one    int
		write  string

		bundles   string
		questions []string

		opts perf.Options
	)
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the knowledge engine on a synthetic catalogue",
		Long: `Bench generates a synthetic SQL catalogue (one concept a table, about 2 KB
each, with frontmatter, # Schema, # Joins and links, in bundles of 500) at
each size and measures: compile time, snapshot size, index build, search
latency (p50, p99), section read latency, context pack latency, the peak
RSS of the import side (compile and encode) and of the serving side (open
the snapshot, index, answer), and the manifest's o200k tokens. Each size
runs in a fresh process so its peak memory is its own.

With --bundles and --questions, it measures a real tenant instead: every
bundle of the folder in one snapshot, asked each question (LiveSQLBench or
BIRD JSON lines) without naming a bundle, as a server is asked: index
build, search and context pack latency (p50, p99, warm) and the mean
tokens of a pack.

With --embeddings, it also embeds each size's catalogue through a scripted
embeddings server started in the process (the OpenAI wire format, vectors of
--embedding-dims dimensions hashed from the words, no model) and reports what
an endpoint would bill (calls, tokens) and the time okf adds: embedding every
concept, reusing every vector from the cache, giving the index its vectors,
embedding a question, and search and context packs with the question's vector
fused.

With --write, it measures nothing: it writes the catalogue of one size as a
folder of bundles, to compile, draw or serve like any other.`,
		Example: `  okf bench
  okf bench --sizes 500,5000 --json
  okf bench --sizes 5000 --embeddings --embedding-dims 768
  okf bench --bundles ./bundles --questions questions.jsonl --rounds 20
  okf bench --sizes 20000 --write catalogue && okf graph catalogue -o catalogue.html`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.Embeddings && (write != "" || bundles != "" || len(questions) > 0) {
				return usageError("--embeddings measures the synthetic catalogue: give it without --write, --bundles and --questions")
			}
			if opts.EmbedDims <= 0 || opts.EmbedDims > embed.MaxDimensions {
				return usageError("--embedding-dims: %d is not 1 to %d", opts.EmbedDims, embed.MaxDimensions)
			}
			if write != "" {
				return writeCatalogue(e, write, sizes)
			}
			if bundles != "" || len(questions) > 0 {
				return benchTenant(e, bundles, questions, rounds, asJSON)
			}
			if one > 0 {
				r, err := perf.RunWith(one, rounds, opts)
				if err != nil {
					return err
				}
				return json.NewEncoder(e.stdout).Encode(r)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			var results []perf.Result
			for _, n := range sizes {
				if n <= 0 {
					return usageError("--sizes: %d is not a positive size", n)
				}
				fmt.Fprintf(e.stderr, "bench: %d concepts...\n", n)
				args := []string{"bench", "--one", strconv.Itoa(n), "--rounds", strconv.Itoa(rounds)}
				if opts.Embeddings {
					args = append(args, "--embeddings", "--embedding-dims", strconv.Itoa(opts.EmbedDims))
				}
				cmd := exec.Command(self, args...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, e.stderr
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("bench at %d concepts: %w", n, err)
				}
				var r perf.Result
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					return fmt.Errorf("bench at %d concepts: %w", n, err)
				}
				results = append(results, r)
			}
			if asJSON {
				return printJSON(e, results)
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "concepts\tcorpus MB\tcompile ms\tsnapshot MB\tindex build ms\tquery p50 ms\tquery p99 ms\tget p50 µs\tcontext p50 ms\timport peak RSS MB\tserve peak RSS MB\tmanifest tokens\tbundle slice tokens\ttokens/row\t")
			for _, r := range results {
				fmt.Fprintf(tw, "%d\t%.1f\t%.0f\t%.1f\t%.0f\t%.3f\t%.3f\t%.1f\t%.2f\t%.0f\t%.0f\t%d\t%d\t%.1f\t\n",
					r.Concepts, float64(r.CorpusBytes)/1e6, r.CompileMS, float64(r.SnapshotBytes)/1e6, r.IndexBuildMS,
					r.QueryP50MS, r.QueryP99MS, 1000*r.GetP50MS, r.ContextP50MS, r.ImportPeakRSSMB, r.ServePeakRSSMB, r.ManifestTokens, r.BundleTokens, r.RowTokens)
			}
			if err := tw.Flush(); err != nil || !opts.Embeddings {
				return err
			}
			fmt.Fprintf(e.stdout, "\nembeddings (%d dimensions, a scripted server):\n", opts.EmbedDims)
			tw = tabwriter.NewWriter(e.stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "concepts\tcalls\ttokens\tembed ms\treuse ms\tset vectors ms\tvectors MB\tquestion p50 ms\tquery p50 ms\tquery p99 ms\tcontext p50 ms\t")
			for _, r := range results {
				m := r.Embeddings
				fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.3f\t%.3f\t%.3f\t%.2f\t\n", r.Concepts, m.Calls, m.Tokens, m.EmbedMS, m.ReuseMS,
					m.SetVectorsMS, m.VectorsMB, m.QuestionP50MS, m.QueryP50MS, m.QueryP99MS, m.ContextP50MS)
			}
			return tw.Flush()
		},
	}
	f := c.Flags()
	f.IntSliceVar(&sizes, "sizes", []int{500, 5000, 20000}, "catalogue sizes to measure, in concepts")
	f.IntVar(&rounds, "rounds", 50, "times each of the ten queries is timed")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	f.StringVar(&bundles, "bundles", "", "measure this folder of bundles, asked --questions, instead of a synthetic catalogue")
	f.StringArrayVar(&questions, "questions", nil, "a question set (JSON lines) to ask the --bundles; repeat to combine sets")
	f.StringVar(&write, "write", "", "write the catalogue of one --sizes to this new folder, as bundles, instead of measuring")
	f.BoolVar(&opts.Embeddings, "embeddings", false, "also measure embeddings, through a scripted server in this process: calls, tokens, added build and query time")
	f.IntVar(&opts.EmbedDims, "embedding-dims", perf.DefaultEmbedDims, "with --embeddings, the vectors' dimensions")
	f.IntVar(&one, "one", 0, "measure one size in this process (used by bench itself)")
	_ = f.MarkHidden("one")
	return c
}

// writeCatalogue writes the synthetic catalogue of one size as bundles.
func writeCatalogue(e *env, dir string, sizes []int) error {
	if len(sizes) != 1 || sizes[0] <= 0 {
		return usageError("--write takes one positive size: --sizes N")
	}
	docs := synth.Generate(sizes[0], 1)
	if err := synth.Write(dir, docs); err != nil {
		return err
	}
	n, noun := (sizes[0]+synth.BundleSize-1)/synth.BundleSize, "bundles"
	if n == 1 {
		noun = "bundle"
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d concepts in %d %s\n", dir, sizes[0], n, noun)
	return nil
}

// benchTenant measures a folder of bundles asked its question sets.
func benchTenant(e *env, dir string, sets []string, rounds int, asJSON bool) error {
	if dir == "" || len(sets) == 0 {
		return usageError("--bundles and --questions go together")
	}
	if rounds <= 0 {
		return usageError("--rounds: %d is not a positive count", rounds)
	}
	docs, err := engine.FolderDocs(dir)
	if err != nil {
		return err
	}
	qs, err := eval.LoadQuestions(sets...)
	if err != nil {
		return err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Text
	}
	fmt.Fprintf(e.stderr, "bench: %d documents, %d questions, %d rounds...\n", len(docs), len(texts), rounds)
	r, err := perf.RunTenant(docs, texts, rounds)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e, r)
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concepts\tbundles\tquestions\tindex build ms\tsearch p50 ms\tsearch p99 ms\tcontext p50 ms\tcontext p99 ms\tcontext tokens\t")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t\n", r.Concepts, r.Bundles, r.Questions, r.IndexBuildMS,
		r.SearchP50MS, r.SearchP99MS, r.ContextP50MS, r.ContextP99MS, r.ContextTokens)
	return tw.Flush()
}
