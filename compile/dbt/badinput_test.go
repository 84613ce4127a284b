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

const ordersProps = `version: 2
models:
  - name: customers
    columns:
      - name: customer_id
  - name: orders
    columns:
      - name: order_id
      - name: customer_id
        tests:
          - relationships:
              to: %s
              field: customer_id
`

// Every bad input is one error naming the file and the line.
func TestBadInputNamesFileAndLine(t *testing.T) {
	models := map[string]string{"models/orders.sql": "select 1", "models/customers.sql": "select 1"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range models {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"malformed YAML", with(map[string]string{"models/schema.yml": "models:\n  - name: orders\n    columns: [\n"}),
			"models/schema.yml:3: not valid YAML: did not find expected node content"},
		{"YAML that is no mapping", with(map[string]string{"models/schema.yml": "- orders\n"}),
			"models/schema.yml:1: want a mapping of keys at the top, found a list"},
		{"models that are no list", with(map[string]string{"models/schema.yml": "models:\n  orders: {}\n"}),
			"models/schema.yml:2: models: want a list, found a mapping"},
		{"a model without a name", with(map[string]string{"models/schema.yml": "models:\n  - description: x\n"}),
			"models/schema.yml:2: models: an entry has no name"},
		{"relationships to an unknown model", with(map[string]string{"models/schema.yml": strings.Replace(ordersProps, "%s", "ref('nope')", 1)}),
			"models/schema.yml:12: orders.customer_id: relationships test: ref('nope') names no model or seed of the project"},
		{"relationships to an unknown source", with(map[string]string{"models/schema.yml": strings.Replace(ordersProps, "%s", "source('raw', 'nope')", 1)}),
			"models/schema.yml:12: orders.customer_id: relationships test: source('raw', 'nope') names no table of the project's sources"},
		{"relationships to no ref", with(map[string]string{"models/schema.yml": strings.Replace(ordersProps, "%s", "customers", 1)}),
			`models/schema.yml:12: orders.customer_id: relationships test: cannot read "customers": want ref('model') or source('source', 'table')`},
		{"relationships without a field", with(map[string]string{"models/schema.yml": "models:\n  - name: orders\n    columns:\n      - name: customer_id\n        tests:\n          - relationships:\n              to: ref('customers')\n"}),
			"models/schema.yml:6: orders.customer_id: the relationships test needs both to: and field:"},
		{"accepted_values without values", with(map[string]string{"models/schema.yml": "models:\n  - name: orders\n    columns:\n      - name: status\n        tests:\n          - accepted_values: {quote: false}\n"}),
			"models/schema.yml:6: orders.status: the accepted_values test lists no values"},
		{"a doc() of a missing block", with(map[string]string{
			"models/docs.md":    "{% docs status %}A status.{% enddocs %}\n",
			"models/schema.yml": "models:\n  - name: orders\n    columns:\n      - name: order_id\n      - name: status\n        description: 'The status: {{ doc(\"order_status\") }}'\n"}),
			`models/schema.yml:5: column orders.status: the description calls doc("order_status"), but no docs block under models, seeds, tests, analyses, macros, snapshots is named order_status`},
		{"a docs block without its end", with(map[string]string{"models/docs.md": "intro\n\n{% docs status %}\nA status.\n"}),
			"models/docs.md:3: docs block status has no {% enddocs %}"},
		{"a docs block defined twice", with(map[string]string{"models/docs.md": "{% docs a %}x{% enddocs %}\n", "macros/more.md": "\n{% docs a %}y{% enddocs %}\n"}),
			"macros/more.md:2: docs block a is already defined at "},
		{"a column listed twice", with(map[string]string{"models/schema.yml": "models:\n  - name: orders\n    columns:\n      - name: id\n      - name: ID\n"}),
			"models/schema.yml:5: model orders: column ID is listed twice"},
		{"a model described twice", with(map[string]string{"models/a.yml": "models:\n  - name: orders\n", "models/b.yml": "models:\n  - name: orders\n"}),
			"models/b.yml:2: model orders is already described at "},
		{"two models of one name", with(map[string]string{"models/staging/orders.sql": "select 1"}),
			"models/staging/orders.sql: a model named orders is already defined in models/orders.sql"},
		{"a bad seed", with(map[string]string{"seeds/raw.csv": "id,name\n1,\"unclosed\n"}),
			`seeds/raw.csv:2: extraneous or missing " in quoted-field`},
		{"a seed with a repeated column", with(map[string]string{"seeds/raw.csv": "id,ID\n1,2\n"}),
			`seeds/raw.csv:1: the header's column 2 is empty or repeated ("ID")`},
		{"a manifest cut short", with(map[string]string{"target/manifest.json": "{\n  \"nodes\": {},\n  \"metadata\": {\"adapter_type\": "}),
			"target/manifest.json:3: not a dbt artifact okf can read: unexpected EOF"},
		{"a catalog of the wrong shape", with(map[string]string{"target/catalog.json": "{\n  \"nodes\": {\n    \"model.shop.orders\": []\n  }\n}\n"}),
			"target/catalog.json:3: not a dbt artifact okf can read: json: cannot unmarshal array"},
		{"a project without a name", map[string]string{"dbt_project.yml": "version: 2\n"},
			"dbt_project.yml:1: the project has no name"},
		{"a path outside the project", map[string]string{"dbt_project.yml": "name: shop\nmodel-paths: [\"../elsewhere\"]\n"},
			`dbt_project.yml:2: model-paths: "../elsewhere" is not a folder inside the project`},
		{"a semantic model of an unknown model", with(map[string]string{"models/sem.yml": "semantic_models:\n  - name: o\n    model: ref('ordrs')\n"}),
			"models/sem.yml:3: semantic model o: ref('ordrs') names no model or seed of the project"},
		{"an unknown agg", with(map[string]string{"models/sem.yml": "semantic_models:\n  - name: o\n    model: ref('orders')\n    measures:\n      - name: total\n        agg: total\n"}),
			`models/sem.yml:5: semantic model o: measure total: agg "total" is not one of`},
		{"a metric of an unknown measure", with(map[string]string{"models/sem.yml": semantic + "  - name: m\n    type: simple\n    type_params:\n      measure: totl\n"}),
			"models/sem.yml:14: metric m: no semantic model has a measure named totl"},
		{"a ratio of an unknown metric", with(map[string]string{"models/sem.yml": semantic + "  - name: m\n    type: ratio\n    type_params:\n      numerator: order_total\n      denominator: nope\n"}),
			"models/sem.yml:15: metric m: no metric is named nope"},
		{"a metric of an unknown type", with(map[string]string{"models/sem.yml": semantic + "  - name: m\n    type: expr\n"}),
			`models/sem.yml:11: metric m: type "expr" is not simple, ratio, derived, cumulative or conversion`},
		{"a simple metric without its measure", with(map[string]string{"models/sem.yml": semantic + "  - name: m\n    type: simple\n"}),
			"models/sem.yml:11: metric m: a simple metric needs type_params.measure"},
		{"a metric built from itself", with(map[string]string{"models/sem.yml": semantic + "  - name: m\n    type: derived\n    type_params:\n      expr: m + 1\n      metrics: [m]\n"}),
			"models/sem.yml:11: metric m is built from itself"},
		{"a metric defined twice", with(map[string]string{"models/sem.yml": semantic + "  - name: order_total\n    type: simple\n    type_params: {measure: total}\n"}),
			"models/sem.yml:11: metric order_total is already defined at "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := project(t, tc.files)
			_, err := dbt.Read(dir)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q,\nwant one line beginning %q", msg, tc.want)
			}
		})
	}
}

// semantic is a semantic layer of one model and metric, to add bad
// metrics to.
const semantic = `semantic_models:
  - name: o
    model: ref('orders')
    measures:
      - name: total
        agg: sum
metrics:
  - name: order_total
    type: simple
    type_params: {measure: total}
`

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
