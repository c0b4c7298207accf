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
// "Authorization: Bearer KEY". Without a key a call fails before it sends
// anything (ErrNoKey). The answer is the first
// choice's message content; with a schema it must parse as JSON (a
// surrounding ```json fence is tolerated), and llm() returns the object.
package llmhost

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/redact"
)

// KeyEnv is the host environment variable the command reads the API key
// from. The guest never sees it: its environment is the session's own.
const KeyEnv = "WASMEVAL_LLM_API_KEY"

// ErrNoKey is the error of every call of a Client made without an API key.
var ErrNoKey = errors.New("no API key for the LLM endpoint: the host must set " + KeyEnv +
	" in wasmeval's environment (any non-empty value for an endpoint that needs none); nothing was sent")

// maxReplyBytes caps the reply body read from the endpoint.
const maxReplyBytes = 16 << 20

// Options configure a Client.
type Options struct {
	// URL is the endpoint: a base URL (".../v1"), to which
	// "/chat/completions" is added, or the full URL when it already ends in
	// "/chat/completions".
	URL string
	// APIKey is sent as a bearer token. Empty makes every call fail before
	// it sends anything, with a message naming KeyEnv: a request without
	// credentials would only come back as a 401. An endpoint that needs no
	// key takes any non-empty one.
	APIKey string
	// Models maps llm()'s size classes ("default", "smol", "slow") to model
	// names. A missing "smol" or "slow" falls back to "default"; a missing
	// "default" sends no model field (for servers that serve one model).
	Models map[string]string
	// HTTPClient makes the requests; nil means http.DefaultClient. The
	// call's context (the cell's) bounds each request.
	HTTPClient *http.Client
	// Logger gets the details of failed calls (with the URL's credentials
	// and query taken out), which the guest only sees a fixed description
	// of; nil logs nothing.
	Logger *slog.Logger
}

// Client is a hostcalls LLM backed by a chat-completions endpoint. It is
// safe for concurrent use.
type Client struct {
	endpoint string
	key      string
	models   map[string]string
	hc       *http.Client
	logger   *slog.Logger
	// secrets are the configuration's strings that no guest-visible text
	// may hold: the key, the URL's user name, password and query values.
	secrets []string
}

// New checks o and returns a Client.
func New(o Options) (*Client, error) {
	u := strings.TrimSpace(o.URL)
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("llmhost: the URL %q is not an http:// or https:// URL", redact.URLString(o.URL))
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return nil, fmt.Errorf("llmhost: the URL %q is not a valid URL with a host", redact.URLString(u))
	}
	if !strings.HasSuffix(strings.TrimRight(parsed.Path, "/"), "/chat/completions") {
		parsed.Path = strings.TrimRight(parsed.Path, "/") + "/chat/completions"
		parsed.RawPath = ""
		u = parsed.String()
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
	c := &Client{endpoint: u, key: o.APIKey, models: models, hc: hc, logger: o.Logger}
	c.secrets = append(c.secrets, o.APIKey)
	if ui := parsed.User; ui != nil {
		c.secrets = append(c.secrets, ui.Username())
		if pw, ok := ui.Password(); ok {
			c.secrets = append(c.secrets, pw)
		}
	}
	for _, vs := range parsed.Query() {
		c.secrets = append(c.secrets, vs...)
	}
	// An endpoint may echo them URL-encoded, as they went out.
	for _, sec := range c.secrets {
		for _, esc := range []string{url.QueryEscape(sec), url.PathEscape(sec)} {
			if esc != sec {
				c.secrets = append(c.secrets, esc)
			}
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(c.secrets, func(a, b string) int { return len(b) - len(a) })
	return c, nil
}

// Endpoint returns the URL requests go to, without its user information
// and query (which may hold credentials), for messages.
func (c *Client) Endpoint() string { return redact.URLString(c.endpoint) }

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
// dispatcher prefixes them with "llm: "): each is a fixed description, with
// the HTTP status or the provider's own message where that helps, and never
// the URL, its credentials or query, the key, or a raw Go error (a
// *url.Error prints the full URL). Options.Logger gets the full story.
func (c *Client) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	if c.key == "" {
		return hostcalls.LLMResponse{}, ErrNoKey
	}
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
		return hostcalls.LLMResponse{}, fmt.Errorf("the request could not be encoded: %v", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		c.log("building the request", err)
		return hostcalls.LLMResponse{}, errors.New("the endpoint's URL is not valid (see the host's log)")
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if c.key != "" {
		hr.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return hostcalls.LLMResponse{}, fmt.Errorf("the call was stopped: %w", context.Cause(ctx))
		}
		c.log("sending the request", err)
		return hostcalls.LLMResponse{}, errors.New(transportProblem(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return hostcalls.LLMResponse{}, fmt.Errorf("the call was stopped: %w", context.Cause(ctx))
		}
		c.log("reading the reply", err)
		return hostcalls.LLMResponse{}, errors.New("the endpoint's reply could not be read: the connection broke")
	}
	if len(raw) > maxReplyBytes {
		return hostcalls.LLMResponse{}, fmt.Errorf("the endpoint's reply is larger than %d MiB", maxReplyBytes>>20)
	}
	if resp.StatusCode/100 != 2 {
		return hostcalls.LLMResponse{}, errors.New(c.statusProblem(resp, raw))
	}
	var reply chatReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return hostcalls.LLMResponse{}, fmt.Errorf("the endpoint's reply is not a chat completion: %v", err)
	}
	if len(reply.Choices) == 0 {
		return hostcalls.LLMResponse{}, errors.New("the endpoint's reply has no choices")
	}
	m := reply.Choices[0].Message
	if m.Content == nil {
		if m.Refusal != "" {
			return hostcalls.LLMResponse{}, fmt.Errorf("the model refused: %s", c.scrub(m.Refusal))
		}
		return hostcalls.LLMResponse{}, fmt.Errorf("the endpoint's reply has no text (finish_reason %q)", c.scrub(reply.Choices[0].FinishReason))
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

// statusProblem describes a reply that is not 2xx: the status, and the
// provider's message with the host's secrets taken out. The body of an
// authentication failure is dropped whole: providers echo part of the key
// ("Incorrect API key provided: sk-...abcd").
func (c *Client) statusProblem(resp *http.Response, raw []byte) string {
	msg := "the endpoint answered " + resp.Status
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired:
		c.log("the endpoint refused the credentials", fmt.Errorf("%s: %s", resp.Status, c.scrub(errorText(raw))))
		return msg + ": the host's credentials for it were refused"
	}
	return msg + ": " + c.scrub(errorText(raw))
}

// transportProblem names what went wrong with a request that got no reply,
// from a fixed list.
func transportProblem(err error) string {
	var (
		dnsErr  *net.DNSError
		unknown x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		netErr  net.Error
		opErr   *net.OpError
	)
	switch {
	case errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &verify):
		return "the endpoint's TLS certificate was not accepted"
	case errors.As(err, &record), errors.As(err, &alert):
		return "the TLS handshake with the endpoint failed"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's unexported error
		return "the TLS handshake with the endpoint failed: it answered in plain HTTP"
	case strings.Contains(err.Error(), "stopped after 10 redirects"): // net/http's, unexported
		return "the endpoint redirected more than 10 times (a redirect loop?)"
	case strings.Contains(err.Error(), "unsupported protocol scheme"):
		return "the endpoint redirected to a URL that is not http or https"
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return "the endpoint's reply headers are larger than 10 MiB"
	case errors.As(err, &dnsErr):
		return "the endpoint could not be reached: its host name did not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the endpoint could not be reached: the connection was refused"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "the endpoint could not be reached: it did not answer in time"
	case errors.As(err, &opErr):
		return "the endpoint could not be reached: the connection failed"
	}
	return "the endpoint could not be reached"
}

// scrub takes the host's configuration out of text from the endpoint, which
// may echo what it was sent.
func (c *Client) scrub(s string) string { return redact.Text(s, c.secrets...) }

// log tells the operator what the guest only gets a fixed description of.
func (c *Client) log(what string, err error) {
	if c.logger != nil {
		c.logger.Warn("llmhost: "+what, "endpoint", c.Endpoint(), "err", c.scrub(err.Error()))
	}
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
