// Package perf measures the knowledge engine on a synthetic catalogue of a
// given size: compile time, snapshot size, index build, query and read
// latency, peak memory and manifest tokens, and, when asked, what
// embeddings add (calls, tokens, build and query time, through a scripted
// server). okf bench runs it once per size in a fresh process, so peak
// memory belongs to that size alone. It also times search and context
// packs on a real tenant asked real questions.
package perf

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/embed/embedtest"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/gcdelay"
	"github.com/okf-tools/okf/internal/synth"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
)

// Result is one size's measurements. Durations are in milliseconds.
type Result struct {
	Concepts      int     `json:"concepts"`
	CorpusBytes   int     `json:"corpus_bytes"`
	CompileMS     float64 `json:"compile_ms"`
	SnapshotBytes int     `json:"snapshot_bytes"`
	IndexBuildMS  float64 `json:"index_build_ms"`
	QueryP50MS    float64 `json:"query_p50_ms"`
	QueryP99MS    float64 `json:"query_p99_ms"`
	GetP50MS      float64 `json:"get_p50_ms"`
	ContextP50MS  float64 `json:"context_p50_ms"`
	// ImportPeakRSSMB is the peak while compiling and encoding (what okf
	// import needs); ServePeakRSSMB the peak while opening the encoded
	// snapshot, indexing it and answering (what okf serve needs).
	ImportPeakRSSMB float64 `json:"import_peak_rss_mb"`
	ServePeakRSSMB  float64 `json:"serve_peak_rss_mb"`
	ManifestTokens  int     `json:"manifest_tokens"`
	BundleTokens    int     `json:"bundle_slice_tokens"`
	RowTokens       float64 `json:"tokens_per_row"`
	// Embeddings is what embeddings add, when measured (Options).
	Embeddings *EmbedResult `json:"embeddings,omitempty"`
}

// Options choose what Run measures beyond the engine itself.
type Options struct {
	// Embeddings measures the catalogue embedded through a scripted
	// server (embedtest) of EmbedDims dimensions (0 means DefaultEmbedDims).
	Embeddings bool
	EmbedDims  int
}

// DefaultEmbedDims is the vectors' dimension when Options.EmbedDims is 0:
// a small local model's (bge-small, all-MiniLM).
const DefaultEmbedDims = 384

// EmbedResult is what embeddings add to a size: the calls and tokens an
// endpoint would bill to embed every concept, and the time okf adds to
// the build and to each query. The scripted server answers in
// microseconds, so the times are okf's own and the loopback's; a real
// endpoint adds its model's time to EmbedMS and QuestionP50MS.
type EmbedResult struct {
	Dims   int `json:"dims"`
	Calls  int `json:"calls"`
	Tokens int `json:"tokens"`
	Texts  int `json:"texts"`
	// EmbedMS embeds every concept (an import of a new tenant); ReuseMS
	// takes them all from the cache again (an unchanged import).
	EmbedMS float64 `json:"embed_ms"`
	ReuseMS float64 `json:"reuse_ms"`
	Reused  int     `json:"reused"`
	// SetVectorsMS is what giving the index its vectors adds to its build.
	SetVectorsMS float64 `json:"set_vectors_ms"`
	VectorsMB    float64 `json:"vectors_mb"`
	// QuestionP50MS is the one call that embeds a question; QueryP50MS
	// and QueryP99MS a search with the question's vector fused, and
	// ContextP50MS a context pack so.
	QuestionP50MS float64 `json:"question_p50_ms"`
	QueryP50MS    float64 `json:"query_p50_ms"`
	QueryP99MS    float64 `json:"query_p99_ms"`
	ContextP50MS  float64 `json:"context_p50_ms"`
}

// Queries are the searches timed, phrased the way agents ask.
var Queries = []string{
	"sales orders status by region",
	"refunds amount currency",
	"which table has the customer segment",
	"late arriving events deduplicated nightly batch",
	"warehouses suppliers join",
	"subscription tier margin",
	"invoice due date closed",
	"support tickets priority owner",
	"risk claims score country",
	"inventory products quantity unit price",
}

// Run generates n concepts and measures them as the engine handles them:
// compiled and encoded as an import does, then decoded, indexed and queried
// as a server does. rounds sets how many times each query is repeated.
func Run(n, rounds int) (Result, error) { return RunWith(n, rounds, Options{}) }

// RunWith is Run, measuring what o asks for too.
func RunWith(n, rounds int, o Options) (Result, error) {
	docs := synth.Generate(n, 1)
	in := make([]readmodel.Doc, len(docs))
	r := Result{Concepts: n}
	for i, d := range docs {
		in[i] = readmodel.Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content}
		r.CorpusBytes += len(d.Content)
	}
	docs = nil
	// Measure the engine, not the generator: drop the generator's garbage
	// and start the peak from here. The documents themselves stay, as an
	// engine holds what it reads from its store.
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()

	// The import side: compile the documents and encode the snapshot the
	// store keeps.
	start := time.Now()
	_, enc, _ := engine.Build(new(readmodel.Builder), "bench", in)
	r.CompileMS = ms(time.Since(start))
	r.SnapshotBytes = len(enc)
	r.ImportPeakRSSMB = peakRSSMB()
	in = nil
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()

	// The serving side: open the stored snapshot, index it, answer, with
	// the collector set as okf serve sets it.
	gcdelay.ForServer()
	snap, err := readmodel.Decode(enc)
	if err != nil {
		return r, err
	}
	enc = nil
	runtime.GC()

	start = time.Now()
	ix := search.Build(snap)
	r.IndexBuildMS = ms(time.Since(start))

	var qt []time.Duration
	for i := 0; i < rounds*len(Queries); i++ {
		q := Queries[i%len(Queries)]
		t := time.Now()
		if len(ix.Search(q, search.Options{})) == 0 {
			return r, fmt.Errorf("query %q found nothing", q)
		}
		qt = append(qt, time.Since(t))
	}
	r.QueryP50MS, r.QueryP99MS = percentile(qt, 0.50), percentile(qt, 0.99)

	rng := rand.New(rand.NewPCG(7, 7))
	var gt []time.Duration
	for range 2000 {
		c := &snap.Concepts[rng.IntN(len(snap.Concepts))]
		t := time.Now()
		if _, err := snap.Get(c.Bundle+"/"+c.ID, readmodel.GetOptions{Section: "schema"}); err != nil {
			return r, err
		}
		gt = append(gt, time.Since(t))
	}
	r.GetP50MS = percentile(gt, 0.50)

	var ct []time.Duration
	for _, q := range Queries {
		t := time.Now()
		ix.Context(q, search.PackOptions{Count: tokens.Count})
		ct = append(ct, time.Since(t))
	}
	r.ContextP50MS = percentile(ct, 0.50)

	now := time.Now()
	m, _ := snap.ManifestAt("", now)
	r.ManifestTokens = tokens.Count(string(m))
	one, _ := snap.ManifestAt(snap.Bundles[0].Name, now)
	r.BundleTokens = tokens.Count(string(one))
	r.RowTokens = float64(r.ManifestTokens) / float64(len(snap.Concepts))
	r.ServePeakRSSMB = peakRSSMB()
	if o.Embeddings {
		// After the serving peak is read: the vectors are measured apart.
		e, err := runEmbeddings(snap, ix, rounds, o.EmbedDims)
		if err != nil {
			return r, err
		}
		r.Embeddings = &e
	}
	return r, nil
}

// runEmbeddings embeds a snapshot's concepts through a scripted server,
// twice (the second time from the cache), gives the index the vectors,
// then times the queries with their vectors fused.
func runEmbeddings(snap *readmodel.Snapshot, ix *search.Index, rounds, dims int) (EmbedResult, error) {
	if dims <= 0 {
		dims = DefaultEmbedDims
	}
	srv, err := embedtest.Start()
	if err != nil {
		return EmbedResult{}, err
	}
	defer srv.Close()
	c, err := embed.New(embed.Config{URL: srv.URL(), Model: "bench", Dimensions: dims})
	if err != nil {
		return EmbedResult{}, err
	}
	ctx := context.Background()
	r := EmbedResult{Dims: dims}
	cache := embed.NewMemory()
	start := time.Now()
	vecs, u, err := embed.Fill(ctx, c, snap, cache)
	if err != nil {
		return r, err
	}
	r.EmbedMS = ms(time.Since(start))
	r.Calls, r.Tokens, r.Texts = u.Calls, u.Tokens, u.Texts
	start = time.Now()
	if _, u, err = embed.Fill(ctx, c, snap, cache); err != nil {
		return r, err
	}
	r.ReuseMS, r.Reused = ms(time.Since(start)), u.Reused
	start = time.Now()
	ix.SetVectors(vecs)
	r.SetVectorsMS = ms(time.Since(start))
	r.VectorsMB = float64(len(vecs)*dims*4) / (1 << 20)

	qv := make([][]float32, len(Queries))
	var et, qt, ct []time.Duration
	for i, q := range Queries {
		t := time.Now()
		v, _, err := c.Embed(ctx, []string{q})
		if err != nil {
			return r, err
		}
		et = append(et, time.Since(t))
		qv[i] = v[0]
	}
	for i := 0; i < rounds*len(Queries); i++ {
		k := i % len(Queries)
		t := time.Now()
		if len(ix.Search(Queries[k], search.Options{QueryVector: qv[k]})) == 0 {
			return r, fmt.Errorf("query %q found nothing", Queries[k])
		}
		qt = append(qt, time.Since(t))
	}
	for k, q := range Queries {
		t := time.Now()
		ix.Context(q, search.PackOptions{Count: tokens.Count, QueryVector: qv[k]})
		ct = append(ct, time.Since(t))
	}
	r.QuestionP50MS = percentile(et, 0.50)
	r.QueryP50MS, r.QueryP99MS = percentile(qt, 0.50), percentile(qt, 0.99)
	r.ContextP50MS = percentile(ct, 0.50)
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[min(len(s)-1, int(p*float64(len(s))))])
}

// resetPeakRSS restarts the kernel's record of peak memory (Linux 4.0+);
// where it cannot, the peak covers the whole process.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMB reads the process's peak resident set size (Linux), or 0.
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}

// TenantResult is the measurements of one real tenant: its bundles in one
// snapshot, asked its own question sets as a server is asked them, without
// naming a bundle, so each context pack routes first. Durations are in
// milliseconds.
type TenantResult struct {
	Concepts      int     `json:"concepts"`
	Bundles       int     `json:"bundles"`
	Questions     int     `json:"questions"`
	IndexBuildMS  float64 `json:"index_build_ms"`
	SearchP50MS   float64 `json:"search_p50_ms"`
	SearchP99MS   float64 `json:"search_p99_ms"`
	ContextP50MS  float64 `json:"context_p50_ms"`
	ContextP99MS  float64 `json:"context_p99_ms"`
	ContextTokens float64 `json:"context_tokens"`
}

// RunTenant indexes the documents and times, rounds times over, a search
// and a context pack for each question, warm: each question is asked once
// before the timing, as a serving index has answered questions before.
func RunTenant(docs []readmodel.Doc, questions []string, rounds int) (TenantResult, error) {
	if len(questions) == 0 {
		return TenantResult{}, fmt.Errorf("no questions to ask")
	}
	// A document with diagnostics is left out, as a server leaves it out.
	snap, _ := readmodel.Build("bench", docs)
	r := TenantResult{Concepts: len(snap.Concepts), Bundles: len(snap.Bundles), Questions: len(questions)}
	start := time.Now()
	ix := search.Build(snap)
	r.IndexBuildMS = ms(time.Since(start))
	for _, q := range questions {
		r.ContextTokens += float64(ix.Context(q, search.PackOptions{Count: tokens.Count}).Tokens)
	}
	r.ContextTokens /= float64(len(questions))
	var st1, ct []time.Duration
	for range max(1, rounds) {
		for _, q := range questions {
			t := time.Now()
			ix.Search(q, search.Options{})
			st1 = append(st1, time.Since(t))
			t = time.Now()
			ix.Context(q, search.PackOptions{Count: tokens.Count})
			ct = append(ct, time.Since(t))
		}
	}
	r.SearchP50MS, r.SearchP99MS = percentile(st1, 0.50), percentile(st1, 0.99)
	r.ContextP50MS, r.ContextP99MS = percentile(ct, 0.50), percentile(ct, 0.99)
	return r, nil
}
