package engine

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store"
)

// QuestionTimeout bounds the one call that embeds a question: a search
// that would wait longer ranks by BM25 alone instead.
const QuestionTimeout = 10 * time.Second

// RecentQuestions is how many question vectors a library keeps, so that
// an agent asking again (search, then context, of one question) costs no
// second call.
const RecentQuestions = 256

// Embeddings add dense similarity to a library's searches (package embed,
// search/dense.go): a view's concepts get their vectors when it is
// compiled, from the tenant's cache in the store (a folder's, in memory),
// the concepts the cache lacks embedded then; and each search or context
// pack embeds its question, once. When the endpoint fails, the concepts
// without vectors and the questions rank by BM25 alone, and the log says
// so: a tool never fails for it. It is safe for concurrent use.
type Embeddings struct {
	concepts, questions *embed.Client
	log                 io.Writer

	mu     sync.Mutex
	order  *list.List // of *recent, the most recently used first
	recent map[string]*list.Element
}

type recent struct {
	text string
	vec  []float32
}

// NewEmbeddings uses concepts to embed concepts and questions (the same
// model, asked with a shorter timeout and no retries: QuestionTimeout) to
// embed questions, saying what it costs and what fails on log.
func NewEmbeddings(concepts, questions *embed.Client, log io.Writer) (*Embeddings, error) {
	if concepts.Name() != questions.Name() {
		return nil, fmt.Errorf("embeddings: concepts embedded with %s cannot be compared with questions embedded with %s", concepts.Name(), questions.Name())
	}
	if log == nil {
		log = io.Discard
	}
	return &Embeddings{concepts: concepts, questions: questions, log: log, order: list.New(), recent: map[string]*list.Element{}}, nil
}

// Model is the name the vectors are kept under.
func (e *Embeddings) Model() string { return e.concepts.Name() }

// fill returns the vectors of a snapshot's concepts, reusing what cache
// holds and embedding the rest; on a failure, those it has.
func (e *Embeddings) fill(ctx context.Context, tenant string, snap *readmodel.Snapshot, cache embed.Cache) [][]float32 {
	if len(snap.Concepts) == 0 {
		return nil
	}
	// The vectors are the tenant's, not the request's that asked first:
	// they are kept however that request ends.
	ctx = context.WithoutCancel(ctx)
	v := embed.NewVectors(e.Model(), snap)
	u, err := v.Fill(ctx, e.concepts, snap, cache)
	if u.Calls > 0 {
		fmt.Fprintf(e.log, "okf: embeddings: tenant %s: %d calls, %d tokens, %d reused\n", tenant, u.Calls, u.Tokens, u.Reused)
	}
	if err != nil {
		fmt.Fprintf(e.log, "okf: %v; tenant %s: %d of %d concepts have vectors, the rest rank by BM25 alone\n", err, tenant, v.Count(), len(snap.Concepts))
	}
	return v.Vecs
}

// question returns a question's vector, from the recent ones or embedded
// with one call; nil, said on the log, when the endpoint fails.
func (e *Embeddings) question(ctx context.Context, text string) []float32 {
	e.mu.Lock()
	if el, ok := e.recent[text]; ok {
		e.order.MoveToFront(el)
		vec := el.Value.(*recent).vec
		e.mu.Unlock()
		return vec
	}
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, QuestionTimeout)
	defer cancel()
	vecs, _, err := e.questions.Embed(ctx, []string{text})
	if err != nil {
		fmt.Fprintf(e.log, "okf: %v; this question ranks by BM25 alone\n", err)
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.recent[text]; !ok {
		e.recent[text] = e.order.PushFront(&recent{text, vecs[0]})
		if e.order.Len() > RecentQuestions {
			old := e.order.Remove(e.order.Back()).(*recent)
			delete(e.recent, old.text)
		}
	}
	return vecs[0]
}

// queryVector is a question's vector when the view ranks by vectors,
// else nil.
func (v *View) queryVector(ctx context.Context, text string) []float32 {
	if v.emb == nil || !v.Index().HasVectors() {
		return nil
	}
	return v.emb.question(ctx, text)
}

// EmbedSnapshot gives the concepts of a tenant's snapshot their vectors in
// the tenant's cache in st, embedding those it lacks (okf import does, so
// that a server never waits for them). have is how many of total then have
// vectors, also when embedding failed part way.
func EmbedSnapshot(ctx context.Context, st store.Store, tenant string, snap *readmodel.Snapshot, c *embed.Client) (u embed.Usage, have, total int, err error) {
	v := embed.NewVectors(c.Name(), snap)
	u, err = v.Fill(ctx, c, snap, embed.StoreCache(st, tenant))
	return u, v.Count(), len(snap.Concepts), err
}
