package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/llm"
)

// Agent is the agent section of okf.yaml: the models okf ask and okf chat
// may use, and how runs go.
type Agent struct {
	// Model is the default model: a name from Models, or provider/model.
	Model    string `yaml:"model"`
	Strategy string `yaml:"strategy"`  // schema, raw, browse, engine, context or auto
	MaxSteps int    `yaml:"max_steps"` // model calls per run; default 15
	// Runs is the folder of the run log; default "runs".
	Runs string `yaml:"runs"`
	// ContextBudget is the token budget of a context pack.
	ContextBudget int `yaml:"context_budget"`
	// OTLPEndpoint, when set, is the OpenTelemetry collector every run is
	// also sent to (OTLP/HTTP, e.g. http://localhost:4318);
	// OTEL_EXPORTER_OTLP_ENDPOINT in the environment wins.
	OTLPEndpoint string  `yaml:"otlp_endpoint"`
	Models       []Model `yaml:"models"`
}

// Model is one model endpoint. Its key comes from the environment (or
// .env), never from this file.
type Model struct {
	Name       string     `yaml:"name"`
	Provider   string     `yaml:"provider"` // openai (any compatible endpoint), anthropic or script
	Model      string     `yaml:"model"`    // the id at the provider
	BaseURL    string     `yaml:"base_url"`
	APIKeyEnv  string     `yaml:"api_key_env"` // default OPENAI_API_KEY or ANTHROPIC_API_KEY
	Script     string     `yaml:"script"`      // conversation file for the script provider
	Timeout    Duration   `yaml:"timeout"`     // per attempt; default 2m
	MaxRetries int        `yaml:"max_retries"`
	MaxTokens  int        `yaml:"max_tokens"`
	Temp       *float64   `yaml:"temperature"`
	Price      *llm.Price `yaml:"price"` // USD per million tokens; overrides the built-in table
	// NoStream asks for whole replies, for endpoints that do not stream.
	NoStream bool `yaml:"no_stream"`
	// Line is where the entry starts in the file, for error messages.
	Line int `yaml:"-"`
}

// providers are the model providers okf speaks.
var providers = []string{llm.OpenAI, llm.Anthropic, llm.Script}

// Strategies are the names of the agent's knowledge strategies, which
// package agent defines (a test holds the two lists equal).
var Strategies = []string{"schema", "raw", "browse", "engine", "context", "auto"}

// UnmarshalYAML reads the agent section and checks it, naming the line
// of a bad entry.
func (a *Agent) UnmarshalYAML(n *yaml.Node) error {
	type plain Agent
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = Agent(p)
	if list := mappingValue(n, "models"); list != nil && list.Kind == yaml.SequenceNode {
		for i, item := range list.Content {
			if i < len(a.Models) {
				a.Models[i].Line = item.Line
			}
		}
	}
	return a.check(n.Line)
}

func (a *Agent) check(line int) error {
	if a.Strategy != "" && !slices.Contains(Strategies, a.Strategy) {
		return fmt.Errorf("%d: agent.strategy %q is not one of %s", line, a.Strategy, strings.Join(Strategies, ", "))
	}
	if a.MaxSteps < 0 || a.ContextBudget < 0 {
		return fmt.Errorf("%d: agent.max_steps and agent.context_budget must not be negative", line)
	}
	var names []string
	for i, m := range a.Models {
		at := fmt.Sprintf("%d: agent.models[%d]", m.Line, i)
		switch {
		case m.Name == "":
			return fmt.Errorf("%s: name is missing", at)
		case slices.Contains(names, m.Name):
			return fmt.Errorf("%s: name %q is used twice", at, m.Name)
		case !slices.Contains(providers, m.Provider):
			return fmt.Errorf("%s (%s): provider %q is not one of %s", at, m.Name, m.Provider, strings.Join(providers, ", "))
		case m.Provider == llm.Script && m.Script == "":
			return fmt.Errorf("%s (%s): the script provider needs script: a conversation file", at, m.Name)
		case m.Provider != llm.Script && m.Model == "":
			return fmt.Errorf("%s (%s): model is missing (the model's id at the provider)", at, m.Name)
		case m.MaxRetries < 0 || m.MaxTokens < 0:
			return fmt.Errorf("%s (%s): max_retries and max_tokens must not be negative", at, m.Name)
		}
		if p := m.Price; p != nil && (p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.Output < 0) {
			return fmt.Errorf("%s (%s): prices must not be negative", at, m.Name)
		}
		names = append(names, m.Name)
	}
	if a.Model != "" && !slices.Contains(names, a.Model) && !strings.Contains(a.Model, "/") {
		return fmt.Errorf("%d: agent.model %q is not a name under agent.models (%s) nor provider/model", line, a.Model, strings.Join(names, ", "))
	}
	return nil
}

// ModelConfig resolves ref, a name from the models list or
// "provider/model" (e.g. openai/gpt-4.1-mini, anthropic/claude-haiku-4-5,
// script/run.jsonl), into a client configuration; "" is the default
// model. The API key is read with lookup.
func (a Agent) ModelConfig(ref string, lookup func(string) (string, bool)) (llm.Config, error) {
	if ref == "" {
		ref = a.Model
	}
	if ref == "" && len(a.Models) == 1 {
		ref = a.Models[0].Name
	}
	if ref == "" {
		return llm.Config{}, errors.New("no model: set agent.model in okf.yaml or pass --model (a configured name, or provider/model such as openai/gpt-4.1-mini)")
	}
	var m Model
	if i := slices.IndexFunc(a.Models, func(m Model) bool { return m.Name == ref }); i >= 0 {
		m = a.Models[i]
	} else {
		provider, id, ok := strings.Cut(ref, "/")
		if !ok || !slices.Contains(providers, provider) || id == "" {
			var names []string
			for _, m := range a.Models {
				names = append(names, m.Name)
			}
			known := "none are configured"
			if len(names) > 0 {
				known = "configured: " + strings.Join(names, ", ")
			}
			return llm.Config{}, fmt.Errorf("unknown model %q (%s); or write provider/model with provider one of %s", ref, known, strings.Join(providers, ", "))
		}
		m = Model{Name: ref, Provider: provider, Model: id}
		if provider == llm.Script {
			m.Script, m.Model = id, "script"
		}
	}
	c := llm.Config{
		Name: m.Name, Provider: m.Provider, Model: m.Model, BaseURL: m.BaseURL, Script: m.Script,
		Timeout: time.Duration(m.Timeout), MaxRetries: m.MaxRetries, MaxTokens: m.MaxTokens, Temperature: m.Temp, Price: m.Price,
		NoStream: m.NoStream,
	}
	c.KeyEnv = m.APIKeyEnv
	if c.KeyEnv == "" {
		switch m.Provider {
		case llm.OpenAI:
			c.KeyEnv = "OPENAI_API_KEY"
		case llm.Anthropic:
			c.KeyEnv = "ANTHROPIC_API_KEY"
		}
	}
	if c.KeyEnv != "" {
		c.APIKey, _ = lookup(c.KeyEnv)
	}
	return c, nil
}

// LoadDotEnv sets the variables of a .env file (KEY=VALUE lines, # for
// comments, optional "export " and quotes) that the environment does not
// already set. A missing file is no error; a malformed line is, naming it.
func LoadDotEnv(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		key = strings.TrimSpace(key)
		if !ok || !isEnvName(key) {
			return fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		if _, set := os.LookupEnv(key); !set {
			if err := os.Setenv(key, value); err != nil {
				return fmt.Errorf("%s:%d: %w", path, n, err)
			}
		}
	}
	return sc.Err()
}

func isEnvName(s string) bool {
	for i, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
