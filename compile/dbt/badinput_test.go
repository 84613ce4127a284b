package dbt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile/dbt"
)

// project writes a dbt project of the given files (dbt_project.yml
// defaults to a name only) and returns its folder.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	if _, ok := files["dbt_project.yml"]; !ok {
		files["dbt_project.yml"] = "name: shop\n"
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBadInputNamesFileAndLine reads each project under testdata/bad,
// one a bad input: each fails with one error naming the file and the
// line, that begins with the case's error.txt.
func TestBadInputNamesFileAndLine(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "bad", "*", "error.txt"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases under testdata/bad: %v", err)
	}
	for _, file := range cases {
		dir, err := filepath.Abs(filepath.Dir(file))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(string(data), "\n")
			_, err = dbt.Read(dir)
			if err == nil {
				t.Fatalf("no error, want %q", want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q,\nwant one line beginning %q", msg, want)
			}
		})
	}
}

// YAML of shapes dbt would refuse is an error, never a crash.
func TestOddShapesAreErrors(t *testing.T) {
	for _, text := range []string{
		"models: [1, 2]\n",
		"models:\n  - name: orders\n    columns: x\n",
		"models:\n  - name: orders\n    columns:\n      - name: [a]\n",
		"models:\n  - name: orders\n    tests: {a: b}\n",
		"models:\n  - name: orders\n    description: [a]\n",
		"sources:\n  - name: raw\n    tables: [{identifier: x}]\n",
		"semantic_models:\n  - name: o\n",
		"semantic_models:\n  - name: o\n    model: ref('orders')\n    measures: [{agg: sum}]\n",
		"metrics:\n  - name: m\n    type: ratio\n    type_params: {numerator: [a]}\n",
		"metrics:\n  - name: m\n    type: derived\n    type_params: {expr: a}\n",
		"metrics:\n  - name: m\n    type: conversion\n    type_params: {conversion_type_params: {base_measure: a, conversion_measure: b}}\n",
	} {
		dir := project(t, map[string]string{"models/orders.sql": "select 1", "models/schema.yml": text})
		if _, err := dbt.Read(dir); err == nil || !strings.Contains(err.Error(), "schema.yml:") {
			t.Errorf("%q: error %v, want one naming schema.yml and a line", text, err)
		}
	}
}
