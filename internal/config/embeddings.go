package config

import (
	"fmt"
	"time"

	"github.com/okf-tools/okf/embed"
)

// Embeddings is the embeddings section of okf.yaml: the model whose
// vectors add dense similarity to search (package embed), at any
// OpenAI-compatible /v1/embeddings endpoint. Without the section, okf
// ranks by BM25 alone.
type Embeddings struct {
	// URL is the API's base, such as http://localhost:11434/v1.
	URL   string `yaml:"url"`
	Model string `yaml:"model"`
	// APIKey is sent as a bearer token; ${VAR} is expanded, so the key
	// stays in the environment or .env.
	APIKey     string `yaml:"api_key"`
	Batch      int    `yaml:"batch"`      // texts a request; default 64
	Dimensions int    `yaml:"dimensions"` // for models that shorten their vectors
	// Line is where the section starts in the file, for error messages.
	Line int `yaml:"-"`
}

// Client returns the section's embeddings client; timeout and retries, 0
// for the defaults, are the caller's (a question waits less than an
// import).
func (e *Embeddings) Client(timeout time.Duration, retries int) (*embed.Client, error) {
	return embed.New(embed.Config{URL: e.URL, Model: e.Model, APIKey: e.APIKey, Batch: e.Batch, Dimensions: e.Dimensions,
		Timeout: timeout, Retries: retries})
}

// check expands the key and refuses what the client would.
func (e *Embeddings) check(lookup func(string) (string, bool)) error {
	var err error
	if e.URL, err = Expand(e.URL, lookup); err != nil {
		return fmt.Errorf("%d: embeddings.url: %w", e.Line, err)
	}
	if e.APIKey, err = Expand(e.APIKey, lookup); err != nil {
		return fmt.Errorf("%d: embeddings.api_key: %w", e.Line, err)
	}
	if _, err := e.Client(0, 0); err != nil {
		return fmt.Errorf("%d: %w", e.Line, err)
	}
	return nil
}
