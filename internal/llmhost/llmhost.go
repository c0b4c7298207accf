// Package llmhost answers the guest's llm() calls from an OpenAI-compatible
// chat-completions endpoint. It is what `wasmeval eval --llm-url` plugs in;
// it is not part of wasmeval's public API.
//
// A call is one POST of
//
//	{"model": M, "messages": [{"role":"system","content":S}, {"role":"user","content":P}],
//	 "response_format": {"type":"json_schema","json_schema":{"name":"answer","schema":SCHEMA}}}
//
// (the system message only when a system prompt is given, response_format
// only with a schema, model only when one is configured), with
// "Authorization: Bearer KEY" when a key is set. The answer is the first
// choice's message content; with a schema it must parse as JSON (a
// surrounding ```json fence is tolerated), and llm() returns the object.
package llmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// KeyEnv is the host environment variable the command reads the API key
// from. The guest never sees it: its environment is the session's own.
const KeyEnv = "WASMEVAL_LLM_API_KEY"

// maxReplyBytes caps the reply body read from the endpoint.
const maxReplyBytes = 16 << 20

// Options configure a Client.
type Options struct {
	// URL is the endpoint: a base URL (".../v1"), to which
	// "/chat/completions" is added, or the full URL when it already ends in
	// "/chat/completions".
	URL string
	// APIKey is sent as a bearer token; empty sends no Authorization header.
	APIKey string
	// Models maps llm()'s size classes ("default", "smol", "slow") to model
	// names. A missing "smol" or "slow" falls back to "default"; a missing
	// "default" sends no model field (for servers that serve one model).
	Models map[string]string
	// HTTPClient makes the requests; nil means http.DefaultClient. The
	// call's context (the cell's) bounds each request.
	HTTPClient *http.Client
}

// Client is a hostcalls LLM backed by a chat-completions endpoint. It is
// safe for concurrent use.
type Client struct {
	endpoint string
	key      string
	models   map[string]string
	hc       *http.Client
}

// New checks o and returns a Client.
func New(o Options) (*Client, error) {
	u := strings.TrimSpace(o.URL)
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("llmhost: the URL %q is not an http:// or https:// URL", o.URL)
	}
	if !strings.HasSuffix(strings.TrimRight(u, "/"), "/chat/completions") {
		u = strings.TrimRight(u, "/") + "/chat/completions"
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	models := map[string]string{}
	for k, v := range o.Models {
		models[k] = v
	}
	for _, k := range []string{"smol", "slow"} {
		if models[k] == "" {
			models[k] = models["default"]
		}
	}
	return &Client{endpoint: u, key: o.APIKey, models: models, hc: hc}, nil
}

// Endpoint returns the URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string          `json:"model,omitempty"`
	Messages       []message       `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

type chatReply struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// LLM asks the endpoint. Its errors are meant for the guest (the
// dispatcher prefixes them with "llm: ").
func (c *Client) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	cr := chatRequest{Model: c.models[req.Model]}
	if req.System != "" {
		cr.Messages = append(cr.Messages, message{"system", req.System})
	}
	cr.Messages = append(cr.Messages, message{"user", req.Prompt})
	if len(req.Schema) > 0 {
		cr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: "answer", Schema: req.Schema}}
	}
	body, err := json.Marshal(cr)
	if err != nil {
		return hostcalls.LLMResponse{}, fmt.Errorf("encoding the request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return hostcalls.LLMResponse{}, fmt.Errorf("the endpoint %s: %w", c.endpoint, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if c.key != "" {
		hr.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return hostcalls.LLMResponse{}, fmt.Errorf("the call to %s was stopped: %w", c.endpoint, context.Cause(ctx))
		}
		return hostcalls.LLMResponse{}, fmt.Errorf("could not reach %s: %v", c.endpoint, unwrapURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return hostcalls.LLMResponse{}, fmt.Errorf("reading the reply of %s: %v", c.endpoint, err)
	}
	if len(raw) > maxReplyBytes {
		return hostcalls.LLMResponse{}, fmt.Errorf("the reply of %s is larger than %d MiB", c.endpoint, maxReplyBytes>>20)
	}
	if resp.StatusCode/100 != 2 {
		return hostcalls.LLMResponse{}, fmt.Errorf("%s answered %s: %s", c.endpoint, resp.Status, errorText(raw))
	}
	var reply chatReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return hostcalls.LLMResponse{}, fmt.Errorf("the reply of %s is not a chat completion: %v", c.endpoint, err)
	}
	if len(reply.Choices) == 0 {
		return hostcalls.LLMResponse{}, fmt.Errorf("the reply of %s has no choices", c.endpoint)
	}
	m := reply.Choices[0].Message
	if m.Content == nil {
		if m.Refusal != "" {
			return hostcalls.LLMResponse{}, fmt.Errorf("the model refused: %s", m.Refusal)
		}
		return hostcalls.LLMResponse{}, fmt.Errorf("the reply of %s has no text (finish_reason %q)", c.endpoint, reply.Choices[0].FinishReason)
	}
	text := *m.Content
	if len(req.Schema) == 0 {
		return hostcalls.LLMResponse{Text: text}, nil
	}
	obj := []byte(unfence(text))
	if !json.Valid(obj) {
		return hostcalls.LLMResponse{}, fmt.Errorf("a schema was given but the model's answer is not JSON: %.200q", text)
	}
	return hostcalls.LLMResponse{Text: text, Object: obj}, nil
}

// unfence drops a Markdown code fence around a JSON answer, which some
// servers add despite response_format.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "```"), "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
		s = s[i+1:] // the fence's language tag
	}
	return strings.TrimSpace(s)
}

// errorText is the message of an OpenAI-style error body, or the body's
// start.
func errorText(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	t := strings.TrimSpace(string(raw))
	if t == "" {
		return "(no body)"
	}
	if len(t) > 500 {
		t = t[:500] + "..."
	}
	return t
}

// unwrapURL drops net/url's "Post \"URL\": " prefix, which repeats the
// endpoint.
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
