package llmhost_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/llmhost"
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
			want: "answered 401 Unauthorized: Incorrect API key provided"},
		{name: "HTTP error without JSON", f: fakeEndpoint{status: 502, body: "bad gateway"}, want: "answered 502 Bad Gateway: bad gateway"},
		{name: "not JSON with a schema", f: fakeEndpoint{reply: "sure! here it is"}, schema: `{"type":"object"}`,
			want: `a schema was given but the model's answer is not JSON: "sure! here it is"`},
		{name: "no choices", f: fakeEndpoint{status: 200, body: `{"choices":[]}`}, want: "has no choices"},
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

func TestNoKeyNoHeader(t *testing.T) {
	f := &fakeEndpoint{reply: "x"}
	srv := f.start(t)
	c, _ := llmhost.New(llmhost.Options{URL: srv.URL})
	if _, err := c.LLM(context.Background(), hostcalls.LLMRequest{Prompt: "p", Model: "default"}); err != nil {
		t.Fatal(err)
	}
	if h := f.hdrs[0].Get("Authorization"); h != "" {
		t.Errorf("Authorization %q without a key", h)
	}
}
