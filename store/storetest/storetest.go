// Package storetest is the conformance suite every store backend must pass:
// exact bytes, sync semantics, history, preconditions, tenant isolation,
// concurrent writers and snapshots. A backend's tests call Run with a
// function that makes a fresh, empty database.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/store"
)

// Run runs the suite. newDSN must return the DSN of a new, empty store for
// the calling test; store.Open opens it (the backend must be imported), and
// may open it more than once to get several handles.
func Run(t *testing.T, newDSN func(t *testing.T) string) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newDSN func(t *testing.T) string)
	}{
		{"ExactBytes", testExactBytes},
		{"UnchangedSyncMakesNoCommit", testUnchangedSync},
		{"SyncDetectsChanges", testSyncChanges},
		{"SyncRejectsBadNames", testSyncValidation},
		{"History", testHistory},
		{"Preconditions", testPreconditions},
		{"TenantIsolation", testTenantIsolation},
		{"DeleteBundle", testDeleteBundle},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Snapshots", testSnapshots},
		{"Reopen", testReopen},
		{"UnknownTenant", testUnknownTenant},
		{"Embeddings", testEmbeddings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDSN) })
	}
}

func open(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return st
}

func fresh(t *testing.T, newDSN func(t *testing.T) string) store.Store {
	t.Helper()
	return open(t, newDSN(t))
}

// awkward holds contents that a careless store would alter.
var awkward = map[string][]byte{
	"crlf.md":           []byte("---\r\ntype: Table\r\n---\r\n# Orders\r\n\r\nOne row per order.\r\n"),
	"bom.md":            []byte("\xef\xbb\xbf---\ntype: Table\n---\nBody\n"),
	"invalid-utf8.md":   []byte("caf\xe9 \xff\xfe and a lone \xc3\n"),
	"empty.md":          {},
	"nul.md":            []byte("a\x00b\x00\n"),
	"no-final-eol.md":   []byte("no newline at the end"),
	"trailing-space.md": []byte("line   \n\t\n  \n"),
	"deep/er/path.md":   []byte("# Nested\n"),
	"ünïcode name.md":   []byte("# Accents in the path\n"),
}

func testExactBytes(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	big := bytes.Repeat([]byte("0123456789abcdef\r\n"), 1<<16) // about 1 MiB
	docs := map[string][]byte{"big.md": big}
	for p, c := range awkward {
		docs[p] = c
	}
	c, err := st.Sync(ctx, "t1", map[string]map[string][]byte{"b": docs}, "import")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Changed || c.ID != 1 || len(c.Changes) != len(docs) {
		t.Fatalf("first sync: got commit %d changed=%v with %d changes, want commit 1 with %d", c.ID, c.Changed, len(c.Changes), len(docs))
	}
	head, all, err := st.Documents(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if head != 1 || len(all) != len(docs) {
		t.Fatalf("Documents: head %d, %d documents; want 1, %d", head, len(all), len(docs))
	}
	for i, d := range all {
		if i > 0 && all[i-1].Path >= d.Path {
			t.Errorf("Documents not sorted: %q before %q", all[i-1].Path, d.Path)
		}
		checkDoc(t, "Documents", d, "b", d.Path, docs[d.Path])
	}
	for p, want := range docs {
		d, err := st.Document(ctx, "t1", "b", p)
		if err != nil {
			t.Fatalf("Document %s: %v", p, err)
		}
		checkDoc(t, "Document", d, "b", p, want)
		d, err = st.DocumentAt(ctx, "t1", 1, "b", p)
		if err != nil {
			t.Fatalf("DocumentAt %s: %v", p, err)
		}
		checkDoc(t, "DocumentAt", d, "b", p, want)
	}
	// Write keeps bytes exactly too, and an empty document stays empty
	// rather than becoming missing.
	for p, want := range awkward {
		if _, err := st.Write(ctx, "t2", "w", p, want, ""); err != nil {
			t.Fatalf("Write %s: %v", p, err)
		}
		d, err := st.Document(ctx, "t2", "w", p)
		if err != nil {
			t.Fatalf("Document %s after Write: %v", p, err)
		}
		checkDoc(t, "Write", d, "w", p, want)
	}
}

func checkDoc(t *testing.T, via string, d store.Document, bundle, path string, want []byte) {
	t.Helper()
	if d.Bundle != bundle || d.Path != path {
		t.Errorf("%s: got %s/%s, want %s/%s", via, d.Bundle, d.Path, bundle, path)
	}
	if !bytes.Equal(d.Content, want) {
		t.Errorf("%s %s: content differs: got %d bytes %q…, want %d bytes %q…", via, path, len(d.Content), head(d.Content), len(want), head(want))
	}
	if d.Content == nil {
		t.Errorf("%s %s: nil content, want non-nil", via, path)
	}
	if d.Hash != store.Hash(want) {
		t.Errorf("%s %s: hash %s, want %s", via, path, d.Hash, store.Hash(want))
	}
}

func head(b []byte) []byte { return b[:min(len(b), 24)] }

func tree(pairs ...string) map[string][]byte {
	m := map[string][]byte{}
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i]] = []byte(pairs[i+1])
	}
	return m
}

func testUnchangedSync(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	in := map[string]map[string][]byte{
		"sales": tree("tables/orders.md", "orders", "index.md", "idx"),
		"ops":   tree("deploy.md", "deploy"),
	}
	first, err := st.Sync(ctx, "acme", in, "first")
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.Sync(ctx, "acme", in, "again")
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.ID != first.ID || again.Message != "first" || len(again.Changes) != 0 {
		t.Fatalf("unchanged sync: got commit %d changed=%v message %q, %d changes; want head %d unchanged", again.ID, again.Changed, again.Message, len(again.Changes), first.ID)
	}
	if !again.Time.Equal(first.Time) {
		t.Errorf("unchanged sync returned time %v, head was made at %v", again.Time, first.Time)
	}
	// Syncing a subset of the bundles leaves the others alone.
	sub, err := st.Sync(ctx, "acme", map[string]map[string][]byte{"ops": in["ops"]}, "ops only")
	if err != nil {
		t.Fatal(err)
	}
	if sub.Changed {
		t.Fatalf("sync of an unchanged bundle made commit %d", sub.ID)
	}
	hist, err := st.History(ctx, "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 {
		t.Fatalf("history has %d commits, want 1", len(hist))
	}
	// A no-op on a tenant that does not exist creates nothing.
	none, err := st.Sync(ctx, "ghost", map[string]map[string][]byte{"b": {}}, "nothing")
	if err != nil {
		t.Fatal(err)
	}
	if none.Changed || none.ID != 0 {
		t.Fatalf("empty sync of a new tenant: got commit %d changed=%v", none.ID, none.Changed)
	}
	tenants, err := st.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tenants, []string{"acme"}) {
		t.Fatalf("tenants %v, want [acme]", tenants)
	}
}

func testSyncChanges(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	_, err := st.Sync(ctx, "acme", map[string]map[string][]byte{
		"sales": tree("a.md", "a", "b.md", "b", "c.md", "c"),
		"ops":   tree("x.md", "x"),
	}, "one")
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Sync(ctx, "acme", map[string]map[string][]byte{
		"sales": tree("a.md", "a", "b.md", "b changed", "d.md", "d"),
	}, "two")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Change{
		{Bundle: "sales", Path: "b.md", Op: store.Modified, Hash: store.Hash([]byte("b changed"))},
		{Bundle: "sales", Path: "c.md", Op: store.Deleted, Hash: store.Hash([]byte("c"))},
		{Bundle: "sales", Path: "d.md", Op: store.Added, Hash: store.Hash([]byte("d"))},
	}
	if !c.Changed || c.ID != 2 || c.Message != "two" || !slices.Equal(c.Changes, want) {
		t.Fatalf("second sync: got %+v, want commit 2 with %+v", c, want)
	}
	_, docs, err := st.Documents(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Bundle+"/"+d.Path+"="+string(d.Content))
	}
	wantDocs := []string{"ops/x.md=x", "sales/a.md=a", "sales/b.md=b changed", "sales/d.md=d"}
	if !slices.Equal(got, wantDocs) {
		t.Fatalf("documents %v, want %v", got, wantDocs)
	}
	// Documents swapping contents are both modified; moving content to a
	// new path is a delete plus an add, its body stored once.
	c, err = st.Sync(ctx, "acme", map[string]map[string][]byte{"sales": tree("a.md", "b changed", "b.md", "a", "e.md", "d")}, "three")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, ch := range c.Changes {
		ops = append(ops, string(ch.Op)+" "+ch.Path)
	}
	wantOps := []string{"modified a.md", "modified b.md", "deleted d.md", "added e.md"}
	if !slices.Equal(ops, wantOps) {
		t.Fatalf("third sync changes %v, want %v", ops, wantOps)
	}
	// An empty document map deletes the bundle.
	c, err = st.Sync(ctx, "acme", map[string]map[string][]byte{"ops": {}}, "drop ops")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Changes) != 1 || c.Changes[0].Op != store.Deleted {
		t.Fatalf("emptying ops: changes %+v", c.Changes)
	}
	bundles, err := st.Bundles(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bundles, []string{"sales"}) {
		t.Fatalf("bundles %v, want [sales]", bundles)
	}
}

func testSyncValidation(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	bad := []struct {
		tenant, bundle, path string
	}{
		{"Acme", "b", "a.md"},
		{"", "b", "a.md"},
		{"-acme", "b", "a.md"},
		{"acme", "B", "a.md"},
		{"acme", ".b", "a.md"},
		{"acme", "b/c", "a.md"},
		{"acme", string(bytes.Repeat([]byte("b"), 65)), "a.md"},
		{"acme", "b", "/a.md"},
		{"acme", "b", "../a.md"},
		{"acme", "b", "x/../a.md"},
		{"acme", "b", "./a.md"},
		{"acme", "b", "x//a.md"},
		{"acme", "b", ".hidden/a.md"},
		{"acme", "b", "a.txt"},
		{"acme", "b", `x\a.md`},
		{"acme", "b", "a\nb.md"},
		{"acme", "b", "caf\xe9.md"},
		{"acme", "b", ""},
	}
	for _, tc := range bad {
		in := map[string]map[string][]byte{tc.bundle: {"ok.md": []byte("ok"), tc.path: []byte("x")}}
		_, err := st.Sync(ctx, tc.tenant, in, "bad")
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Sync(%q, %q, %q): got %v, want ErrInvalid", tc.tenant, tc.bundle, tc.path, err)
		}
		_, err = st.Write(ctx, tc.tenant, tc.bundle, tc.path, []byte("x"), store.Unconditional)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Write(%q, %q, %q): got %v, want ErrInvalid", tc.tenant, tc.bundle, tc.path, err)
		}
	}
	if tenants, err := st.Tenants(ctx); err != nil || len(tenants) != 0 {
		t.Fatalf("after rejected writes: tenants %v, %v; want none", tenants, err)
	}
	// Names at the edges of the rules are fine.
	long := string(bytes.Repeat([]byte("a"), 64))
	if _, err := st.Write(ctx, long, "a.b-c_d", "x/y z/ünï.md", []byte("ok"), ""); err != nil {
		t.Fatalf("valid names refused: %v", err)
	}
}

func testHistory(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	steps := []map[string][]byte{
		tree("a.md", "a1", "b.md", "b1"),
		tree("a.md", "a2", "b.md", "b1"),
		tree("a.md", "a2"),
		tree("a.md", "a2", "b.md", "b3"),
	}
	for i, s := range steps {
		c, err := st.Sync(ctx, "h", map[string]map[string][]byte{"k": s}, fmt.Sprintf("step %d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != int64(i+1) {
			t.Fatalf("step %d made commit %d", i+1, c.ID)
		}
	}
	hist, err := st.History(ctx, "h", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range hist {
		line := fmt.Sprintf("%d %s:", c.ID, c.Message)
		for _, ch := range c.Changes {
			line += fmt.Sprintf(" %s %s", ch.Op, ch.Path)
		}
		got = append(got, line)
		if c.Time.IsZero() || !c.Changed {
			t.Errorf("commit %d: time %v changed %v", c.ID, c.Time, c.Changed)
		}
	}
	want := []string{
		"4 step 4: added b.md",
		"3 step 3: deleted b.md",
		"2 step 2: modified a.md",
		"1 step 1: added a.md added b.md",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history\n got %q\nwant %q", got, want)
	}
	if hist[1].Changes[0].Hash != store.Hash([]byte("b1")) {
		t.Errorf("a deletion records the hash of what was deleted")
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].Time.After(hist[i-1].Time) {
			t.Errorf("commit %d is dated after commit %d", hist[i].ID, hist[i-1].ID)
		}
	}
	last2, err := st.History(ctx, "h", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(last2) != 2 || last2[0].ID != 4 || last2[1].ID != 3 {
		t.Fatalf("History limit 2: got %d commits", len(last2))
	}
	h, err := st.Head(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != 4 || h.Message != "step 4" || !h.Time.Equal(hist[0].Time) {
		t.Fatalf("head %+v, want commit 4", h)
	}
	// Each document as it was after each commit.
	wantAt := []struct {
		commit int64
		path   string
		body   string // "" = absent
	}{
		{1, "a.md", "a1"}, {2, "a.md", "a2"}, {3, "a.md", "a2"}, {4, "a.md", "a2"},
		{1, "b.md", "b1"}, {2, "b.md", "b1"}, {3, "b.md", ""}, {4, "b.md", "b3"},
		{4, "c.md", ""},
	}
	for _, w := range wantAt {
		d, err := st.DocumentAt(ctx, "h", w.commit, "k", w.path)
		switch {
		case w.body == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("DocumentAt(%d, %s): got %q, %v; want ErrNotFound", w.commit, w.path, d.Content, err)
		case w.body != "" && (err != nil || string(d.Content) != w.body):
			t.Errorf("DocumentAt(%d, %s): got %q, %v; want %q", w.commit, w.path, d.Content, err, w.body)
		}
	}
	for _, id := range []int64{0, 5, -1} {
		if _, err := st.DocumentAt(ctx, "h", id, "k", "a.md"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DocumentAt commit %d: got %v, want ErrNotFound", id, err)
		}
	}
}

func testPreconditions(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	v1, v2 := []byte("version 1"), []byte("version 2")
	h1, h2 := store.Hash(v1), store.Hash(v2)

	wantPrecondition := func(err error, current string) {
		t.Helper()
		var pe *store.PreconditionError
		if !errors.Is(err, store.ErrPrecondition) || !errors.As(err, &pe) {
			t.Fatalf("got %v, want a precondition error", err)
		}
		if pe.Current != current {
			t.Fatalf("precondition error carries current %q, want %q", pe.Current, current)
		}
	}
	_, err := st.Write(ctx, "p", "b", "doc.md", v1, h2)
	wantPrecondition(err, "")
	c, err := st.Write(ctx, "p", "b", "doc.md", v1, "")
	if err != nil || !c.Changed || c.ID != 1 || c.Changes[0].Op != store.Added {
		t.Fatalf("create: %+v, %v", c, err)
	}
	_, err = st.Write(ctx, "p", "b", "doc.md", v2, "")
	wantPrecondition(err, h1)
	_, err = st.Write(ctx, "p", "b", "doc.md", v2, h2)
	wantPrecondition(err, h1)
	c, err = st.Write(ctx, "p", "b", "doc.md", v2, h1)
	if err != nil || c.ID != 2 || c.Changes[0].Op != store.Modified || c.Changes[0].Hash != h2 {
		t.Fatalf("replace: %+v, %v", c, err)
	}
	c, err = st.Write(ctx, "p", "b", "doc.md", v2, h2)
	if err != nil || c.Changed || c.ID != 2 {
		t.Fatalf("rewriting the same bytes: %+v, %v; want no commit", c, err)
	}
	c, err = st.Write(ctx, "p", "b", "doc.md", v1, store.Unconditional)
	if err != nil || c.ID != 3 {
		t.Fatalf("unconditional write: %+v, %v", c, err)
	}
	_, err = st.Delete(ctx, "p", "b", "doc.md", h2)
	wantPrecondition(err, h1)
	_, err = st.Delete(ctx, "p", "b", "doc.md", "")
	wantPrecondition(err, h1)
	if _, err := st.Delete(ctx, "p", "b", "missing.md", store.Unconditional); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a missing document: %v, want ErrNotFound", err)
	}
	c, err = st.Delete(ctx, "p", "b", "doc.md", h1)
	if err != nil || c.ID != 4 || c.Changes[0].Op != store.Deleted {
		t.Fatalf("delete: %+v, %v", c, err)
	}
	if _, err := st.Document(ctx, "p", "b", "doc.md"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted document still readable: %v", err)
	}
	// Refused writes made no commits.
	h, err := st.Head(ctx, "p")
	if err != nil || h.ID != 4 {
		t.Fatalf("head %d, %v; want 4", h.ID, err)
	}
}

func testTenantIsolation(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	for _, tenant := range []string{"alpha", "beta"} {
		if _, err := st.Sync(ctx, tenant, map[string]map[string][]byte{
			"shared": tree("orders.md", "orders of "+tenant, "same.md", "identical"),
			tenant:   tree("own.md", tenant),
		}, "import "+tenant); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Write(ctx, "alpha", "shared", "orders.md", []byte("alpha again"), store.Unconditional); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"alpha", "beta"} {
		other := map[string]string{"alpha": "beta", "beta": "alpha"}[tenant]
		_, docs, err := st.Documents(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.Bundle == other || bytes.Contains(d.Content, []byte(other)) {
				t.Errorf("tenant %s sees %s/%s %q", tenant, d.Bundle, d.Path, d.Content)
			}
		}
		if len(docs) != 3 {
			t.Errorf("tenant %s has %d documents, want 3", tenant, len(docs))
		}
		bundles, err := st.Bundles(ctx, tenant)
		if err != nil || !slices.Equal(bundles, []string{tenant, "shared"}) {
			t.Errorf("tenant %s bundles %v, %v", tenant, bundles, err)
		}
		if _, err := st.Document(ctx, tenant, other, "own.md"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("tenant %s reads %s's bundle: %v", tenant, other, err)
		}
		if _, err := st.DocumentAt(ctx, tenant, 1, other, "own.md"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("tenant %s reads %s's history: %v", tenant, other, err)
		}
		if _, err := st.DeleteBundle(ctx, tenant, other); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("tenant %s deletes %s's bundle: %v", tenant, other, err)
		}
	}
	// Commit numbers are per tenant.
	ha, _ := st.Head(ctx, "alpha")
	hb, _ := st.Head(ctx, "beta")
	if ha.ID != 2 || hb.ID != 1 {
		t.Fatalf("heads alpha %d beta %d, want 2 and 1", ha.ID, hb.ID)
	}
	hist, err := st.History(ctx, "beta", 0)
	if err != nil || len(hist) != 1 || hist[0].Message != "import beta" {
		t.Fatalf("beta history %+v, %v", hist, err)
	}
	d, err := st.Document(ctx, "beta", "shared", "orders.md")
	if err != nil || string(d.Content) != "orders of beta" {
		t.Fatalf("beta's orders: %q, %v", d.Content, err)
	}
	if err := st.PutSnapshot(ctx, "alpha", 2, "digest-alpha", []byte("alpha model")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.Snapshot(ctx, "beta"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("beta sees alpha's snapshot: %v", err)
	}
}

func testDeleteBundle(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	if _, err := st.Sync(ctx, "d", map[string]map[string][]byte{
		"gone": tree("a.md", "a", "sub/b.md", "b"),
		"kept": tree("c.md", "c"),
	}, "import"); err != nil {
		t.Fatal(err)
	}
	c, err := st.DeleteBundle(ctx, "d", "gone")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Change{
		{Bundle: "gone", Path: "a.md", Op: store.Deleted, Hash: store.Hash([]byte("a"))},
		{Bundle: "gone", Path: "sub/b.md", Op: store.Deleted, Hash: store.Hash([]byte("b"))},
	}
	if c.ID != 2 || !slices.Equal(c.Changes, want) {
		t.Fatalf("DeleteBundle: %+v", c)
	}
	bundles, err := st.Bundles(ctx, "d")
	if err != nil || !slices.Equal(bundles, []string{"kept"}) {
		t.Fatalf("bundles %v, %v; want [kept]", bundles, err)
	}
	if _, err := st.DeleteBundle(ctx, "d", "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
	// History still has the deleted bundle's documents.
	d, err := st.DocumentAt(ctx, "d", 1, "gone", "sub/b.md")
	if err != nil || string(d.Content) != "b" {
		t.Fatalf("DocumentAt before deletion: %q, %v", d.Content, err)
	}
	// Deleting the last bundle leaves an empty tenant with its history.
	if _, err := st.DeleteBundle(ctx, "d", "kept"); err != nil {
		t.Fatal(err)
	}
	head, docs, err := st.Documents(ctx, "d")
	if err != nil || head != 3 || len(docs) != 0 {
		t.Fatalf("empty tenant: head %d, %d docs, %v", head, len(docs), err)
	}
}

func testConcurrentWriters(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	dsn := newDSN(t)
	handles := []store.Store{open(t, dsn), open(t, dsn)}
	const perWriter = 12
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		commits   []int64
		raceWins  int
		raceFails int
	)
	errs := make(chan error, 4*perWriter)
	for w, st := range handles {
		// Each handle writes its own documents, syncs a bundle of its
		// own, and races the other handle to create the same document.
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				var c store.Commit
				var err error
				switch i % 3 {
				case 0:
					c, err = st.Write(ctx, "c", "shared", fmt.Sprintf("w%d/%d.md", w, i), []byte(fmt.Sprintf("writer %d doc %d", w, i)), "")
				case 1:
					c, err = st.Sync(ctx, "c", map[string]map[string][]byte{fmt.Sprintf("own%d", w): tree(fmt.Sprintf("n%d.md", i), "x")}, "sync")
				case 2:
					c, err = st.Write(ctx, "c", "shared", fmt.Sprintf("race/%d.md", i), []byte(fmt.Sprintf("writer %d", w)), "")
					if errors.Is(err, store.ErrPrecondition) {
						mu.Lock()
						raceFails++
						mu.Unlock()
						continue
					}
					if err == nil {
						mu.Lock()
						raceWins++
						mu.Unlock()
					}
				}
				if err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				commits = append(commits, c.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write: %v", err)
	}
	races := perWriter / 3
	if raceWins != races || raceFails != races {
		t.Fatalf("create races: %d won, %d refused; want %d each", raceWins, raceFails, races)
	}
	slices.Sort(commits)
	for i, id := range commits {
		if id != int64(i+1) {
			t.Fatalf("commit ids %v: want 1..%d without gaps or repeats", commits, len(commits))
		}
	}
	head, docs, err := handles[0].Documents(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if head != int64(len(commits)) {
		t.Fatalf("head %d after %d commits", head, len(commits))
	}
	// Each writer: 4 own documents, 4 synced (each sync replaces the
	// previous one), and 4 race documents shared between both.
	if want := 2*(perWriter/3) + 2*1 + races; len(docs) != want {
		t.Fatalf("%d documents, want %d", len(docs), want)
	}
	hist, err := handles[1].History(ctx, "c", 0)
	if err != nil || len(hist) != len(commits) {
		t.Fatalf("history of %d commits, %v; want %d", len(hist), err, len(commits))
	}
}

func testSnapshots(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	if _, err := st.Sync(ctx, "s", map[string]map[string][]byte{"b": tree("a.md", "a")}, "one"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.Snapshot(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("snapshot before any was stored: %v, want ErrNotFound", err)
	}
	model := []byte("manifest\x00\xff compiled bytes\r\n")
	if err := st.PutSnapshot(ctx, "s", 1, "sha256:aaaa", model); err != nil {
		t.Fatal(err)
	}
	id, digest, blob, err := st.Snapshot(ctx, "s")
	if err != nil || id != 1 || digest != "sha256:aaaa" || !bytes.Equal(blob, model) {
		t.Fatalf("Snapshot: %d %q %q %v", id, digest, blob, err)
	}
	// A commit that compiles to the same bytes stores its snapshot by
	// reference; the newest commit's snapshot is returned.
	if _, err := st.Write(ctx, "s", "b", "index.md", []byte("nav"), ""); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSnapshot(ctx, "s", 2, "sha256:aaaa", model); err != nil {
		t.Fatal(err)
	}
	if id, _, _, err := st.Snapshot(ctx, "s"); err != nil || id != 2 {
		t.Fatalf("latest snapshot: commit %d, %v; want 2", id, err)
	}
	// Storing again for the same commit replaces it.
	if err := st.PutSnapshot(ctx, "s", 2, "sha256:bbbb", []byte{}); err != nil {
		t.Fatal(err)
	}
	id, digest, blob, err = st.Snapshot(ctx, "s")
	if err != nil || id != 2 || digest != "sha256:bbbb" || blob == nil || len(blob) != 0 {
		t.Fatalf("replaced snapshot: %d %q %q %v", id, digest, blob, err)
	}
	for _, bad := range []int64{0, 3, -1} {
		if err := st.PutSnapshot(ctx, "s", bad, "d", model); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("snapshot of commit %d: %v, want ErrNotFound", bad, err)
		}
	}
	for _, bad := range []string{"", "has space", "tab\t", string(bytes.Repeat([]byte("x"), 129))} {
		if err := st.PutSnapshot(ctx, "s", 1, bad, model); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("digest %q: %v, want ErrInvalid", bad, err)
		}
	}
}

func testReopen(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	dsn := newDSN(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(ctx, "r", map[string]map[string][]byte{"b": awkward}, "persist"); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSnapshot(ctx, "r", 1, "d1", []byte("model")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, dsn)
	head, docs, err := st.Documents(ctx, "r")
	if err != nil || head != 1 || len(docs) != len(awkward) {
		t.Fatalf("after reopening: head %d, %d docs, %v", head, len(docs), err)
	}
	for _, d := range docs {
		checkDoc(t, "reopened", d, "b", d.Path, awkward[d.Path])
	}
	if id, digest, _, err := st.Snapshot(ctx, "r"); err != nil || id != 1 || digest != "d1" {
		t.Fatalf("snapshot after reopening: %d %q %v", id, digest, err)
	}
	c, err := st.Sync(ctx, "r", map[string]map[string][]byte{"b": awkward}, "again")
	if err != nil || c.Changed {
		t.Fatalf("unchanged sync after reopening: %+v, %v", c, err)
	}
}

func testUnknownTenant(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	st := fresh(t, newDSN)
	// A tenant without commits reads as empty…
	h, err := st.Head(ctx, "nobody")
	if err != nil || h.ID != 0 || h.Changed {
		t.Errorf("Head of an unknown tenant: %+v, %v; want commit 0", h, err)
	}
	if hist, err := st.History(ctx, "nobody", 5); err != nil || len(hist) != 0 {
		t.Errorf("History of an unknown tenant: %d commits, %v", len(hist), err)
	}
	if id, docs, err := st.Documents(ctx, "nobody"); err != nil || id != 0 || len(docs) != 0 {
		t.Errorf("Documents of an unknown tenant: %d, %d docs, %v", id, len(docs), err)
	}
	if bundles, err := st.Bundles(ctx, "nobody"); err != nil || len(bundles) != 0 {
		t.Errorf("Bundles of an unknown tenant: %v, %v", bundles, err)
	}
	// …and what it lacks is not found.
	checks := map[string]error{}
	_, checks["Document"] = st.Document(ctx, "nobody", "b", "a.md")
	_, checks["DocumentAt"] = st.DocumentAt(ctx, "nobody", 1, "b", "a.md")
	_, _, _, checks["Snapshot"] = st.Snapshot(ctx, "nobody")
	_, checks["DeleteBundle"] = st.DeleteBundle(ctx, "nobody", "b")
	checks["PutSnapshot"] = st.PutSnapshot(ctx, "nobody", 1, "d", []byte("x"))
	for name, err := range checks {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown tenant: %v, want ErrNotFound", name, err)
		}
	}
	if tenants, err := st.Tenants(ctx); err != nil || len(tenants) != 0 {
		t.Fatalf("tenants %v, %v; want none", tenants, err)
	}
}

// embeddingKey is the cache key of a text, as package embed makes it.
func embeddingKey(text string) string { return store.Hash([]byte(text)) }

func testEmbeddings(t *testing.T, newDSN func(t *testing.T) string) {
	ctx := context.Background()
	dsn := newDSN(t)
	st := open(t, dsn)
	const model = "nomic-ai/nomic-embed-text-v1.5@256"
	a, b, c := embeddingKey("a"), embeddingKey("b"), embeddingKey("c")
	// Any bytes, NUL and 0xff among them, come back exactly.
	va, vb := []byte{0, 0, 0x80, 0x3f, 0xff, 0, 0, 0}, []byte{1, 2, 3, 4}
	if got, err := st.Embeddings(ctx, "e", model, []string{a, b}); err != nil || len(got) != 0 {
		t.Fatalf("embeddings of a tenant without any: %v, %v; want none", got, err)
	}
	if err := st.PutEmbeddings(ctx, "e", model, map[string][]byte{a: va, b: vb}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Embeddings(ctx, "e", model, []string{b, c, a, a})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[a], va) || !bytes.Equal(got[b], vb) {
		t.Fatalf("embeddings: %q; want a and b as stored, c left out", got)
	}
	// A key is kept once per tenant and model: putting it again replaces
	// it, and the same key of another model or tenant is another vector.
	if err := st.PutEmbeddings(ctx, "e", model, map[string][]byte{a: vb}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutEmbeddings(ctx, "other", model, map[string][]byte{c: va}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutEmbeddings(ctx, "e", "text-embedding-3-small", map[string][]byte{c: vb}); err != nil {
		t.Fatal(err)
	}
	got, err = st.Embeddings(ctx, "e", model, []string{a, b, c})
	if err != nil || len(got) != 2 || !bytes.Equal(got[a], vb) {
		t.Fatalf("after replacing a: %q, %v; want a = %v, and no c (another tenant's, another model's)", got, err, vb)
	}
	if got, err := st.Embeddings(ctx, "other", model, []string{a, b, c}); err != nil || len(got) != 1 || !bytes.Equal(got[c], va) {
		t.Fatalf("the other tenant's cache: %q, %v; want c alone", got, err)
	}
	// The cache makes no commit.
	if h, err := st.Head(ctx, "e"); err != nil || h.ID != 0 {
		t.Fatalf("head after caching embeddings: %d, %v; want 0", h.ID, err)
	}
	// More keys than one statement binds, both ways.
	many := map[string][]byte{}
	var keys []string
	for i := range 1234 {
		k := embeddingKey(fmt.Sprint("text ", i))
		many[k] = []byte(fmt.Sprintf("%08d", i))
		keys = append(keys, k)
	}
	if err := st.PutEmbeddings(ctx, "many", model, many); err != nil {
		t.Fatal(err)
	}
	// A second handle on the same store sees them.
	got, err = open(t, dsn).Embeddings(ctx, "many", model, append(keys, a))
	if err != nil || len(got) != len(many) {
		t.Fatalf("%d embeddings read back of %d, %v", len(got), len(many), err)
	}
	for k, v := range many {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("embedding %s: %q, want %q", k, got[k], v)
		}
	}
	if err := st.PutEmbeddings(ctx, "e", model, nil); err != nil {
		t.Errorf("putting no embeddings: %v", err)
	}
	// What a caller gives is checked before anything is written.
	bad := map[string]error{}
	bad["tenant"] = st.PutEmbeddings(ctx, "Bad Tenant", model, map[string][]byte{a: va})
	bad["model"] = st.PutEmbeddings(ctx, "e", "", map[string][]byte{a: va})
	bad["model with a space"] = st.PutEmbeddings(ctx, "e", "my model", map[string][]byte{a: va})
	bad["long model"] = st.PutEmbeddings(ctx, "e", string(bytes.Repeat([]byte("m"), 129)), map[string][]byte{a: va})
	bad["upper-case key"] = st.PutEmbeddings(ctx, "e", model, map[string][]byte{strings.ToUpper(c): va})
	bad["short key"] = st.PutEmbeddings(ctx, "e", model, map[string][]byte{"abc": va})
	bad["empty vector"] = st.PutEmbeddings(ctx, "e", model, map[string][]byte{c: {}})
	bad["huge vector"] = st.PutEmbeddings(ctx, "e", model, map[string][]byte{c: make([]byte, store.MaxEmbeddingBytes+1)})
	_, bad["read with a bad key"] = st.Embeddings(ctx, "e", model, []string{a, "../x"})
	_, bad["read with a bad model"] = st.Embeddings(ctx, "e", "-x", []string{a})
	for what, err := range bad {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", what, err)
		}
	}
	if got, err := st.Embeddings(ctx, "e", model, []string{c}); err != nil || len(got) != 0 {
		t.Errorf("after refused writes: %q, %v; want nothing written", got, err)
	}
}
