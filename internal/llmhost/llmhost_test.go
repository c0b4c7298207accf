package llmhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/llmhost"
	"github.com/wasmeval/wasmeval/internal/testenv"
)

// fakeEndpoint is a loopback chat-completions server that records the
// requests and answers with reply (or status and body when status is set).
type fakeEndpoint struct {
	reqs   []map[string]any
	hdrs   []http.Header
	paths  []string
	reply  string
	status int
	body   string
}

func (f *fakeEndpoint) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("the request body is not JSON: %v", err)
		}
		f.reqs = append(f.reqs, m)
		f.hdrs = append(f.hdrs, r.Header.Clone())
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		if f.status != 0 {
			w.WriteHeader(f.status)
			io.WriteString(w, f.body)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": f.reply}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLLM(t *testing.T) {
	tests := []struct {
		name       string
		url        string // appended to the server's URL
		req        hostcalls.LLMRequest
		reply      string
		wantText   string
		wantObject string
		wantReq    string // the request body, as JSON
	}{
		{name: "text", url: "/v1", req: hostcalls.LLMRequest{Prompt: "hi", Model: "default"}, reply: "hello",
			wantText: "hello", wantReq: `{"messages":[{"content":"hi","role":"user"}],"model":"big-1"}`},
		{name: "system and smol", url: "/v1/chat/completions", req: hostcalls.LLMRequest{Prompt: "hi", Model: "smol", System: "be brief"}, reply: "yo",
			wantText: "yo", wantReq: `{"messages":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"}],"model":"small-1"}`},
		{name: "slow falls back to default", url: "/v1/", req: hostcalls.LLMRequest{Prompt: "hi", Model: "slow"}, reply: "ok",
			wantText: "ok", wantReq: `{"messages":[{"content":"hi","role":"user"}],"model":"big-1"}`},
		{name: "schema", url: "/v1", req: hostcalls.LLMRequest{Prompt: "n?", Model: "default", Schema: json.RawMessage(`{"type":"object"}`)},
			reply: "```json\n{\"n\": 3}\n```", wantText: "```json\n{\"n\": 3}\n```", wantObject: `{"n": 3}`,
			wantReq: `{"messages":[{"content":"n?","role":"user"}],"model":"big-1","response_format":{"json_schema":{"name":"answer","schema":{"type":"object"}},"type":"json_schema"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEndpoint{reply: tt.reply}
			srv := f.start(t)
			c, err := llmhost.New(llmhost.Options{URL: srv.URL + tt.url, APIKey: "sk-test", Models: map[string]string{"default": "big-1", "smol": "small-1"}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.LLM(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tt.wantText || string(resp.Object) != tt.wantObject {
				t.Errorf("answer %q / %s, want %q / %s", resp.Text, resp.Object, tt.wantText, tt.wantObject)
			}
			if len(f.reqs) != 1 {
				t.Fatalf("%d requests", len(f.reqs))
			}
			if f.paths[0] != "POST /v1/chat/completions" {
				t.Errorf("request to %s", f.paths[0])
			}
			if got := f.hdrs[0].Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization %q", got)
			}
			if got := f.hdrs[0].Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
			b, _ := json.Marshal(f.reqs[0])
			if string(b) != tt.wantReq {
				t.Errorf("request %s\nwant    %s", b, tt.wantReq)
			}
		})
	}
}

func TestLLMErrors(t *testing.T) {
	tests := []struct {
		name   string
		f      fakeEndpoint
		schema string
		want   string
	}{
		{name: "HTTP error", f: fakeEndpoint{status: 401, body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`},
			want: "the endpoint answered 401 Unauthorized: the host's credentials for it were refused"},
		{name: "HTTP error without JSON", f: fakeEndpoint{status: 502, body: "bad gateway"}, want: "the endpoint answered 502 Bad Gateway: bad gateway"},
		{name: "not JSON with a schema", f: fakeEndpoint{reply: "sure! here it is"}, schema: `{"type":"object"}`,
			want: `a schema was given but the model's answer is not JSON: "sure! here it is"`},
		{name: "no choices", f: fakeEndpoint{status: 200, body: `{"choices":[]}`}, want: "the endpoint's reply has no choices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.f.start(t)
			c, err := llmhost.New(llmhost.Options{URL: srv.URL, APIKey: "sk-secret"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.LLM(context.Background(), hostcalls.LLMRequest{Prompt: "x", Model: "default", Schema: json.RawMessage(tt.schema)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("the error shows the key: %v", err)
			}
			if len(tt.f.reqs) == 1 {
				if _, ok := tt.f.reqs[0]["model"]; ok {
					t.Errorf("a model was sent though none is configured: %v", tt.f.reqs[0])
				}
			}
		})
	}
}

func TestNewRefusesBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x"} {
		if _, err := llmhost.New(llmhost.Options{URL: u}); err == nil || !strings.HasPrefix(err.Error(), "llmhost: ") {
			t.Errorf("%q: %v", u, err)
		}
	}
}

// TestNoKeyNoRequest: without an API key a call fails before it reaches
// the endpoint, with a message naming WASMEVAL_LLM_API_KEY.
func TestNoKeyNoRequest(t *testing.T) {
	f := &fakeEndpoint{reply: "x"}
	srv := f.start(t)
	c, err := llmhost.New(llmhost.Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LLM(context.Background(), hostcalls.LLMRequest{Prompt: "p", Model: "default"})
	if err == nil || !strings.Contains(err.Error(), "WASMEVAL_LLM_API_KEY") || !errors.Is(err, llmhost.ErrNoKey) {
		t.Fatalf("error %v, want one naming WASMEVAL_LLM_API_KEY", err)
	}
	if len(f.hdrs) != 0 {
		t.Errorf("the endpoint got %d requests without a key; want none", len(f.hdrs))
	}
}

// TestSecretsStayOnTheHost: whatever goes wrong, the error (which the guest
// reads) holds none of the URL's user name, password or query, nor the key,
// nor the URL itself; the provider's message is kept, scrubbed.
func TestSecretsStayOnTheHost(t *testing.T) {
	const (
		user  = "alice-canary"
		pass  = "pw-canary/123@x"
		query = "qk-canary-456"
		key   = "sk-canary-789"
	)
	secrets := []string{user, pass, url.QueryEscape(pass), url.PathEscape(pass), query, key}
	echo := func(w http.ResponseWriter, r *http.Request, status int) {
		// An endpoint that echoes what it was sent, as some do in errors.
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"bad request to %s with %s (%s, %s)"}}`, "http://"+url.UserPassword(user, pass).String()+"@"+r.Host+r.URL.String(),
			r.Header.Get("Authorization"), url.QueryEscape(pass), pass)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/unauthorized"):
			echo(w, r, http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/limited"):
			echo(w, r, http.StatusTooManyRequests)
		case strings.HasPrefix(r.URL.Path, "/hang"):
			io.ReadAll(r.Body) // the connection's close is noticed once the body is read
			select {
			case <-r.Context().Done():
			case <-time.After(testenv.Stretch(10 * time.Second)):
			}
		default:
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "not json "+r.Header.Get("Authorization"))
		}
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	withSecrets := func(base, path string) string {
		return strings.Replace(base, "://", "://"+url.UserPassword(user, pass).String()+"@", 1) + path + "?api_key=" + query
	}
	tests := []struct {
		name, url string
		ctx       func() (context.Context, context.CancelFunc)
		want      string
	}{
		{name: "401", url: withSecrets(plain.URL, "/unauthorized/v1"), want: "the endpoint answered 401 Unauthorized: the host's credentials for it were refused"},
		{name: "429 echoing the request", url: withSecrets(plain.URL, "/limited/v1"), want: "the endpoint answered 429 Too Many Requests: bad request to http://"},
		{name: "not a chat completion", url: withSecrets(plain.URL, "/v1"), want: "the endpoint's reply is not a chat completion"},
		{name: "unreachable", url: withSecrets(closedURL, "/v1"), want: "the endpoint could not be reached: the connection was refused"},
		{name: "TLS", url: withSecrets(tlsSrv.URL, "/v1"), want: "the endpoint's TLS certificate was not accepted"},
		{name: "not TLS", url: withSecrets(strings.Replace(plain.URL, "http://", "https://", 1), "/v1"), want: "the TLS handshake with the endpoint failed"},
		{name: "timeout", url: withSecrets(plain.URL, "/hang/v1"), want: "the call was stopped: context deadline exceeded",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 200*time.Millisecond)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			c, err := llmhost.New(llmhost.Options{URL: tt.url, APIKey: key, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.Background(), func() {}
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			_, err = c.LLM(ctx, hostcalls.LLMRequest{Prompt: "x", Model: "default"})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to start with %q", err, tt.want)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error shows %q: %v", s, err)
				}
			}
			for _, s := range secrets {
				if strings.Contains(logged.String(), s) || strings.Contains(c.Endpoint(), s) {
					t.Errorf("the log or Endpoint shows %q: %s / %s", s, logged.String(), c.Endpoint())
				}
			}
		})
	}
}

func TestNewHidesTheURLsSecrets(t *testing.T) {
	_, err := llmhost.New(llmhost.Options{URL: "ftp://u:pw-secret@h/?k=q-secret"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("New: %v", err)
	}
}
