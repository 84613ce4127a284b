package compile_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/drift"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/store"
)

// compileInto runs okf compile's steps over dir into out, as the command
// does without its flags and printing: read the sources, add the concepts
// people kept, build, read the folder's bundles once for the drift report,
// and write them with what was read.
func compileInto(b *testing.B, dir, out string) {
	dbs, err := source.Read(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	var bundles []*compile.Bundle
	read := map[string]map[string][]byte{}
	for _, db := range dbs {
		if _, err := compile.AddKept(db, filepath.Join(out, db.Name)); err != nil {
			b.Fatal(err)
		}
		bundle, err := compile.Build(db, compile.Options{Generator: "okf/bench"})
		if err != nil {
			b.Fatal(err)
		}
		bundles = append(bundles, bundle)
		if current, err := store.ReadFolder(filepath.Join(out, db.Name)); err == nil {
			read[db.Name] = current
			if drift.Compare(db.Name, current, bundle.Files, time.Time{}).Drifted() {
				b.Fatalf("%s drifted from its own output", db.Name)
			}
		}
	}
	if err := compile.Write(out, compile.WriteOptions{Sources: []string{dir}, Read: read}, bundles...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCompile compiles the eight LiveSQLBench databases into a fresh
// folder, and again over their own output (issue 25, defect 10), which is
// what CI's drift checks and people editing a bundle run most: a recompile
// should cost no more than about a first compile.
func BenchmarkCompile(b *testing.B) {
	src := shareddata.Dir(b, "livesqlbench", "base-lite")
	b.Run("fresh", func(b *testing.B) {
		dir := b.TempDir()
		n := 0
		for b.Loop() {
			n++
			compileInto(b, src, filepath.Join(dir, strconv.Itoa(n)))
		}
	})
	b.Run("recompile", func(b *testing.B) {
		out := b.TempDir()
		compileInto(b, src, out)
		for b.Loop() {
			compileInto(b, src, out)
		}
	})
}
