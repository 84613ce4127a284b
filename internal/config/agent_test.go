package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

const agentYAML = `agent:
  model: mini
  strategy: engine
  max_steps: 9
  models:
    - name: mini
      provider: openai
      model: gpt-4.1-mini
      timeout: 30s
      price: {input: 0.5, output: 2}
    - name: local
      provider: openai
      model: llama3.1
      base_url: http://localhost:11434/v1
`

func TestAgentSection(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := Parse([]byte(agentYAML), lookup)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Agent
	if a.Strategy != "engine" || a.MaxSteps != 9 || len(a.Models) != 2 || a.Models[1].Line != 11 {
		t.Fatalf("agent = %+v", a)
	}
	c, err := a.ModelConfig("", lookup)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mini" || c.Model != "gpt-4.1-mini" || c.APIKey != "sk-1" || c.Timeout != 30*time.Second || c.Price.Input != 0.5 {
		t.Errorf("default model = %+v", c)
	}
	c, err = a.ModelConfig("anthropic/claude-haiku-4-5", lookup)
	if err != nil || c.Provider != "anthropic" || c.Model != "claude-haiku-4-5" || c.KeyEnv != "ANTHROPIC_API_KEY" || c.APIKey != "" {
		t.Errorf("provider/model = %+v, %v", c, err)
	}
	if _, err := a.ModelConfig("gpt-5", lookup); err == nil || !strings.Contains(err.Error(), "configured: mini, local") {
		t.Errorf("unknown model: %v", err)
	}
}

func TestAgentSectionErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"agent:\n  strategy: magic\n", `2: agent.strategy "magic"`},
		{"agent:\n  models:\n    - name: a\n      provider: cohere\n      model: x\n", `3: agent.models[0] (a): provider "cohere"`},
		{"agent:\n  models:\n    - name: a\n      provider: openai\n", "3: agent.models[0] (a): model is missing"},
		{"agent:\n  models:\n    - name: a\n      provider: openai\n      model: x\n      tmeout: 3s\n", `6: unknown key "tmeout" in agent.models[0]`},
		{"agent:\n  models:\n    - name: s\n      provider: script\n", "needs script"},
		{"agent:\n  model: nope\n", `agent.model "nope"`},
		{"agent:\n  models:\n    - name: a\n      provider: openai\n      model: x\n      price: {input: -1}\n", "prices must not be negative"},
	} {
		_, err := Parse([]byte(tc.yaml), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestLoadDotEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	os.WriteFile(path, []byte("# secrets\nOKF_TEST_A=1\nexport OKF_TEST_B=\"two words\"\nOKF_TEST_C=kept\n"), 0o600)
	t.Setenv("OKF_TEST_C", "from env")
	os.Unsetenv("OKF_TEST_A")
	os.Unsetenv("OKF_TEST_B")
	t.Cleanup(func() { os.Unsetenv("OKF_TEST_A"); os.Unsetenv("OKF_TEST_B") })
	if err := LoadDotEnv(path); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("OKF_TEST_A") != "1" || os.Getenv("OKF_TEST_B") != "two words" || os.Getenv("OKF_TEST_C") != "from env" {
		t.Errorf("env = %q %q %q", os.Getenv("OKF_TEST_A"), os.Getenv("OKF_TEST_B"), os.Getenv("OKF_TEST_C"))
	}
	os.WriteFile(path, []byte("OKF_TEST_A=1\nnot a pair\n"), 0o600)
	if err := LoadDotEnv(path); err == nil || !strings.Contains(err.Error(), ".env:2:") {
		t.Errorf("bad line: %v", err)
	}
	if err := LoadDotEnv(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing file: %v", err)
	}
}
