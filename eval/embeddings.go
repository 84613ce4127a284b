package eval

import (
	"context"
	"fmt"

	"github.com/okf-tools/okf/embed"
)

// Embedder gives a corpus dense similarity, as okf serve gives a tenant
// whose okf.yaml names an embeddings model: the concepts' vectors, and a
// question's, embedded once.
type Embedder struct {
	ctx    context.Context
	client *embed.Client
	vecs   map[string][]float32
	// Usage is what embedding the concepts and the questions cost.
	Usage embed.Usage
	// Failed counts the questions the endpoint did not embed, which rank
	// by BM25 alone, as a served search does; Err is the last failure.
	Failed int
	Err    error
}

// Embed embeds every concept of the corpus with client and sets the
// vectors on its index; its Vector is what Options.QueryVector takes.
func (c *Corpus) Embed(ctx context.Context, client *embed.Client) (*Embedder, error) {
	vecs, u, err := embed.Fill(ctx, client, c.Snap, embed.NewMemory())
	if err != nil {
		return nil, fmt.Errorf("embedding the corpus's concepts: %w", err)
	}
	c.Index.SetVectors(vecs)
	return &Embedder{ctx: ctx, client: client, vecs: map[string][]float32{}, Usage: u}, nil
}

// Vector returns a question's embedding, nil when the endpoint fails.
// An evaluation asks one question of several strategies: each text is
// embedded once. It is not safe for concurrent use, nor need it be:
// Retrieval asks one question at a time.
func (e *Embedder) Vector(text string) []float32 {
	if v, ok := e.vecs[text]; ok {
		return v
	}
	vs, u, err := e.client.Embed(e.ctx, []string{text})
	e.Usage = e.Usage.Add(u)
	var v []float32
	if err != nil || len(vs) != 1 {
		e.Failed, e.Err = e.Failed+1, err
	} else {
		v = vs[0]
	}
	e.vecs[text] = v
	return v
}
