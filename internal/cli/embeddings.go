package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/config"
)

// configEmbeddings reads the embeddings section of the configuration an
// import or an evaluation names: nil without one. Neither reads anything
// else of okf.yaml, so a file it was not pointed at that does not load (a
// variable of a database's DSN unset where knowledge is imported) is a
// warning, not a failure; doing says what goes on without them.
func configEmbeddings(e *env, path string, explicit bool, doing string) (*embed.Client, error) {
	cfg, err := config.LoadOptional(path)
	if err != nil {
		if explicit {
			return nil, &exitError{code: exitUsage, err: err}
		}
		fmt.Fprintf(e.stderr, "warn: %v; %s without embeddings\n", err, doing)
		return nil, nil
	}
	if cfg.Embeddings == nil {
		return nil, nil
	}
	return cfg.Embeddings.Client(0, 0)
}

// libraryEmbeddings is the library option of the configuration's
// embeddings section, none without one; the library says on log what
// embedding costs and what fails.
func libraryEmbeddings(cfg *config.Config, log io.Writer) ([]engine.LibraryOption, error) {
	if cfg.Embeddings == nil {
		return nil, nil
	}
	concepts, err := cfg.Embeddings.Client(0, 0)
	if err != nil {
		return nil, err
	}
	questions, err := cfg.Embeddings.Client(engine.QuestionTimeout, -1)
	if err != nil {
		return nil, err
	}
	emb, err := engine.NewEmbeddings(concepts, questions, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "okf: search fuses BM25 with the embeddings of %s (%s)\n", emb.Model(), concepts.Endpoint())
	return []engine.LibraryOption{engine.WithEmbeddings(emb)}, nil
}

// evalEmbeddings gives an evaluated corpus the embeddings the
// configuration names, as okf serve would; nil without them.
func evalEmbeddings(ctx context.Context, e *env, corpus *eval.Corpus, path string, explicit bool) (*eval.Embedder, error) {
	client, err := configEmbeddings(e, path, explicit, "evaluating")
	if err != nil || client == nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "eval: search fuses BM25 with the embeddings of %s (%s)\n", client.Name(), client.Endpoint())
	return corpus.Embed(ctx, client)
}

// printEmbedderCost says what an evaluation's embeddings cost, and how
// many questions ranked by BM25 alone because the endpoint failed.
func printEmbedderCost(e *env, em *eval.Embedder) {
	fmt.Fprintf(e.stderr, "embeddings: %d calls, %d tokens\n", em.Usage.Calls, em.Usage.Tokens)
	if em.Failed > 0 {
		fmt.Fprintf(e.stderr, "warn: %d questions were not embedded and ranked by BM25 alone: %v\n", em.Failed, em.Err)
	}
}
