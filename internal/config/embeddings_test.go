package config

import (
	"strings"
	"testing"
)

func TestParseEmbeddings(t *testing.T) {
	data := []byte(`audit_log: audit.jsonl
embeddings:
  url: ${EMBED_URL}/v1
  model: text-embedding-3-small
  api_key: ${OPENAI_API_KEY}
  batch: 32
  dimensions: 256
`)
	cfg, err := Parse(data, env(map[string]string{"OPENAI_API_KEY": "sk-abc", "EMBED_URL": "https://api.openai.com"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Embeddings{URL: "https://api.openai.com/v1", Model: "text-embedding-3-small", APIKey: "sk-abc", Batch: 32, Dimensions: 256, Line: 2}
	if cfg.Embeddings == nil || *cfg.Embeddings != want {
		t.Fatalf("embeddings = %+v, want %+v", cfg.Embeddings, want)
	}
	c, err := cfg.Embeddings.Client(0, 0)
	if err != nil || c.Name() != "text-embedding-3-small@256" || c.Endpoint() != "https://api.openai.com/v1/embeddings" {
		t.Errorf("client: %v, %v", c, err)
	}
	// Without the section there is none, and an empty one is none too.
	for _, none := range []string{"audit_log: a\n", "embeddings:\n"} {
		if cfg, err := Parse([]byte(none), env(nil)); err != nil || cfg.Embeddings != nil {
			t.Errorf("%q: embeddings %+v, %v; want none", none, cfg.Embeddings, err)
		}
	}
}

func TestParseEmbeddingsErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "embeddings:\n  url: http://h/v1\n  modle: m\n", `3: unknown key "modle" in embeddings (known keys: url, model, api_key, batch, dimensions)`},
		{"no model", "audit_log: a\nembeddings:\n  url: http://h/v1\n", "2: embeddings: model is missing"},
		{"no url", "embeddings: {model: m}\n", "1: embeddings: url is missing"},
		{"not http", "embeddings: {url: 'file:///tmp', model: m}\n", "1: embeddings: url"},
		{"unset key", "embeddings:\n  url: http://h/v1\n  model: m\n  api_key: ${NOPE}\n", "1: embeddings.api_key: environment variable NOPE is not set"},
		{"negative batch", "embeddings: {url: http://h/v1, model: m, batch: -1}\n", "1: embeddings: batch -1"},
		{"too many dimensions", "embeddings: {url: http://h/v1, model: m, dimensions: 100000}\n", "1: embeddings: dimensions 100000"},
		{"model name", "embeddings: {url: http://h/v1, model: 'my model'}\n", `1: embeddings: embedding model "my model"`},
		{"bad type", "embeddings: {url: http://h/v1, model: m, batch: lots}\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
