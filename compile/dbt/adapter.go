package dbt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// profilesFile is where dbt looks first for the project's connection
// profiles: beside dbt_project.yml.
const profilesFile = "profiles.yml"

// readEngine sets the engine the project's tables live in, as its dbt
// adapter says: the type of its profile's target in profiles.yml, or of
// every output when the target is templated; else the adapter_type of the
// manifest dbt last wrote; else the one adapter its Python requirements
// install. A profile or manifest naming an adapter okf does not know, two
// adapters and none at all leave the engine unknown ("").
func (p *project) readEngine() error {
	typ, said, err := p.profileType()
	if err != nil {
		return err
	}
	if !said {
		if typ, err = p.manifestAdapter(); err != nil {
			return err
		}
		said = typ != ""
		if compile.EngineName(typ) != "" {
			p.used(p.targetPath)
		}
	}
	if !said {
		typ = p.installedAdapter()
	}
	if compile.EngineName(typ) != "" {
		p.engine = typ
	}
	return nil
}

// profileType returns the adapter type of the project's profile; said is
// false when no profiles.yml beside the project names one plainly.
func (p *project) profileType() (typ string, said bool, err error) {
	file := filepath.Join(p.dir, profilesFile)
	if _, err := os.Stat(file); err != nil {
		return "", false, nil
	}
	f, err := readYAML(file, profilesFile)
	if err != nil || f.root == nil {
		return "", false, err
	}
	name, err := f.text(p.config.root, "profile")
	if err != nil || name == "" {
		return "", false, err
	}
	profile := lookup(f.root, name)
	target, err := f.text(profile, "target")
	if err != nil {
		return "", false, err
	}
	outputs := lookup(profile, "outputs")
	if out := lookup(outputs, target); target != "" && out != nil {
		return plainType(f, out)
	}
	// A target dbt chooses at run time: the outputs must agree.
	var types []string
	if outputs != nil {
		for i := 1; i < len(outputs.Content); i += 2 {
			t, ok, err := plainType(f, outputs.Content[i])
			if err != nil || !ok {
				return "", false, err
			}
			types = append(types, t)
		}
	}
	if len(types) == 0 || slices.ContainsFunc(types, func(t string) bool { return t != types[0] }) {
		return "", false, nil
	}
	return types[0], true, nil
}

// plainType reads an output's type unless it is templated.
func plainType(f *yfile, output *yaml.Node) (string, bool, error) {
	t, err := f.text(output, "type")
	if err != nil || t == "" || strings.Contains(t, "{{") {
		return "", false, err
	}
	return strings.ToLower(strings.TrimSpace(t)), true, nil
}

// adapterPackageRe finds a dbt package in a requirements or pyproject
// line: dbt-duckdb, DBT_Redshift.
var adapterPackageRe = lazy.Regexp{Expr: `(?i)(?:^|[^a-z0-9_.-])dbt[-_]([a-z0-9][a-z0-9_-]*)`}

// adapterPackages maps the packages of adapters whose type is not their
// package's name less "dbt-".
var adapterPackages = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{"athena-community": "athena"}
}}

// installs lists the adapters an adapter's package brings with it, which
// a pinned requirements file lists beside it.
var installs = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"redshift": {"postgres"}, "materialize": {"postgres"}, "databricks": {"spark"}, "synapse": {"fabric", "sqlserver"},
	}
}}

// installedAdapter returns the one adapter the project's Python
// requirements (requirements*.txt or .in, pyproject.toml, Pipfile)
// install, less those another installs; "" for none or several.
func (p *project) installedAdapter() string {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return ""
	}
	var found []string
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		isReq := strings.HasPrefix(n, "requirements") && (strings.HasSuffix(n, ".txt") || strings.HasSuffix(n, ".in"))
		if e.IsDir() || !isReq && n != "pyproject.toml" && n != "pipfile" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(p.dir, e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			for _, m := range adapterPackageRe.Get().FindAllStringSubmatch(line, -1) {
				typ := strings.ReplaceAll(strings.ToLower(m[1]), "_", "-")
				if t, ok := adapterPackages.Get()[typ]; ok {
					typ = t
				}
				if compile.EngineName(typ) != "" && !slices.Contains(found, typ) {
					found = append(found, typ)
				}
			}
		}
	}
	var direct []string
	for _, a := range found {
		if !slices.ContainsFunc(found, func(b string) bool { return slices.Contains(installs.Get()[b], a) }) {
			direct = append(direct, a)
		}
	}
	if len(direct) != 1 {
		return ""
	}
	return direct[0]
}
