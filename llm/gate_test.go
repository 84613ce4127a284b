package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
)

// TestFirstAloneStopsAtARejectedKey: calls made together through
// FirstAlone against an endpoint that rejects the key send it one
// request, not one each: the first call goes alone, and its 401 is every
// call's error, naming the endpoint, the key's variable and the status;
// a call made after fails at once. The calls that sent nothing say so
// (NotAsked), and are no answered model call.
func TestFirstAloneStopsAtARejectedKey(t *testing.T) {
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewReplier(t, func(map[string]any) llmtest.Turn { return llmtest.Turn{Status: 401} })
			base := srv.URL
			if provider == llm.OpenAI {
				base = srv.OpenAIURL()
			}
			inner, err := llm.New(llm.Config{Provider: provider, Model: "m", BaseURL: base, APIKey: "sk-wrong", KeyEnv: "OKF_TEST_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			c := llm.FirstAlone(inner)
			const calls = 8
			errs := make([]error, calls+1)
			var wg sync.WaitGroup
			for i := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = c.Chat(context.Background(), conversation())
				}()
			}
			wg.Wait()
			_, errs[calls] = c.Chat(context.Background(), conversation())
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			notAsked := 0
			for i, err := range errs {
				want := "model " + provider + "/m: " + base + " rejected the API key in OKF_TEST_KEY (401): scripted status 401"
				if err == nil || !llm.Permanent(err) || err.Error() != want {
					t.Errorf("call %d: %v, want %q", i, err, want)
				}
				var na *llm.NotAsked
				var ce *llm.CallError
				if errors.As(err, &na) {
					notAsked++
					if errors.As(err, &ce) {
						t.Errorf("call %d sent nothing, yet is a CallError", i)
					}
				}
			}
			if notAsked != calls {
				t.Errorf("%d calls not asked, want %d", notAsked, calls)
			}
			if p, ok := c.(interface{ Provider() string }); !ok || p.Provider() != provider {
				t.Errorf("the client does not say its provider")
			}
		})
	}
}

// TestFirstAloneAsksEveryCall: with a key the endpoint accepts, every
// call is asked, the ones after the first at once.
func TestFirstAloneAsksEveryCall(t *testing.T) {
	srv := llmtest.NewReplier(t, func(map[string]any) llmtest.Turn { return llmtest.Turn{Text: "4"} })
	inner, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "m", BaseURL: srv.OpenAIURL(), APIKey: "sk"})
	if err != nil {
		t.Fatal(err)
	}
	c := llm.FirstAlone(inner)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := c.Chat(context.Background(), conversation()); err != nil || resp.Message.Content != "4" {
				t.Errorf("%+v, %v", resp, err)
			}
		}()
	}
	wg.Wait()
	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d requests, want 8", n)
	}
}

// TestStatusErrorsNameTheEndpoint: a 404 names where the model was
// looked for, and neither it nor a 401 shows credentials the base URL
// holds.
func TestStatusErrorsNameTheEndpoint(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Status: 404}, llmtest.Turn{Status: 401})
	secret := strings.Replace(srv.OpenAIURL(), "http://", "http://user:hunter2@", 1)
	for _, want := range []string{"unknown model or endpoint at " + srv.OpenAIURL() + " (404)", srv.OpenAIURL() + " rejected the API key (401)"} {
		c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-x", BaseURL: secret, APIKey: "sk"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), conversation())
		if err == nil || !strings.Contains(err.Error(), "model openai/gpt-x: "+want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v, want %q", err, want)
		}
	}
}
