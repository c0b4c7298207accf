package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// DefaultCallTimeout is how long a streaming client has to answer a host
// call when Config.CallTimeout is zero.
const DefaultCallTimeout = 60 * time.Second

// CallEvent is the data of a "call" event on an eval's SSE stream: a
// guest's tool, llm or agent call for the client to answer with
// POST /v1/sessions/{id}/calls/{callId}.
type CallEvent struct {
	CallID string `json:"callId"`
	// Kind is "tool", "llm" or "agent"; it says which of ToolCall,
	// LLMCall and AgentCall Request is.
	Kind    string `json:"kind"`
	Request any    `json:"request"`
}

// ToolCall is the request of a "tool" call: tool.<name>(args).
type ToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// LLMCall is the request of an "llm" call. Model is "default", "smol" or
// "slow"; with a Schema the answer must be an object that satisfies it.
type LLMCall struct {
	Prompt string          `json:"prompt"`
	Model  string          `json:"model"`
	System string          `json:"system,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// AgentCall is the request of an "agent" call: a sub-agent at Depth.
type AgentCall struct {
	Prompt    string          `json:"prompt"`
	AgentType string          `json:"agentType,omitempty"`
	Model     string          `json:"model,omitempty"`
	Context   string          `json:"context,omitempty"`
	Label     string          `json:"label,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Depth     int             `json:"depth"`
}

// CallAnswer is the body of POST /v1/sessions/{id}/calls/{callId}:
// exactly one of Result (any JSON value; for llm and agent a string is
// the text, an object the structured answer) and Error.
type CallAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *CallError      `json:"error,omitempty"`
}

// CallError is a client's refusal or failure of a call; the guest sees
// Message as the helper's exception.
type CallError struct {
	Message string `json:"message"`
}

// pendingCall is a call waiting for its client's answer.
type pendingCall struct {
	owner, session string
	answer         chan CallAnswer // buffered: the answering handler never waits
}

// clientHost sends one streaming eval's host calls to its client as SSE
// "call" events and waits for the answers.
type clientHost struct {
	s              *Server
	owner, session string
	sse            *sseWriter
}

var _ hostcalls.Host = (*clientHost)(nil)

func (h *clientHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	res, err := h.call(ctx, "tool", ToolCall{Name: req.Name, Args: req.Args})
	return hostcalls.ToolResponse{Result: res}, err
}

func (h *clientHost) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	res, err := h.call(ctx, "llm", LLMCall{Prompt: req.Prompt, Model: req.Model, System: req.System, Schema: req.Schema})
	if err != nil {
		return hostcalls.LLMResponse{}, err
	}
	text, obj := textOrObject(res)
	return hostcalls.LLMResponse{Text: text, Object: obj}, nil
}

func (h *clientHost) Agent(ctx context.Context, req hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	res, err := h.call(ctx, "agent", AgentCall{
		Prompt: req.Prompt, AgentType: req.AgentType, Model: req.Model, Context: req.Context,
		Label: req.Label, Schema: req.Schema, Depth: req.Depth,
	})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	text, obj := textOrObject(res)
	return hostcalls.AgentResponse{Text: text, Object: obj}, nil
}

// textOrObject reads an llm or agent answer: a JSON string is the text,
// anything else a structured answer.
func textOrObject(res json.RawMessage) (string, json.RawMessage) {
	var text string
	if err := json.Unmarshal(res, &text); err == nil {
		return text, nil
	}
	return string(res), res
}

func (h *clientHost) call(ctx context.Context, kind string, req any) (json.RawMessage, error) {
	if h.sse.isEnded() {
		return nil, errors.New("the client's stream has ended, so nobody can answer this call")
	}
	id, err := newCallID()
	if err != nil {
		return nil, err
	}
	pc := &pendingCall{owner: h.owner, session: h.session, answer: make(chan CallAnswer, 1)}
	s := h.s
	s.callsMu.Lock()
	s.calls[id] = pc
	s.callsMu.Unlock()
	s.log.Info("host call", "owner", h.owner, "session", h.session, "call", id, "kind", kind)
	h.sse.send("call", CallEvent{CallID: id, Kind: kind, Request: req})

	timer := time.NewTimer(s.cfg.CallTimeout)
	defer timer.Stop()
	var a CallAnswer
	select {
	case a = <-pc.answer:
	case <-timer.C:
		if !s.forgetCall(id, pc) {
			a = <-pc.answer // answered just in time
			break
		}
		s.hostCalls.WithLabelValues(kind, "timeout").Inc()
		return nil, fmt.Errorf("the client did not answer within %s (the server's call timeout); a streaming client answers each \"call\" event with POST /v1/sessions/%s/calls/%s", s.cfg.CallTimeout, h.session, id)
	case <-ctx.Done():
		if !s.forgetCall(id, pc) {
			a = <-pc.answer
			break
		}
		s.hostCalls.WithLabelValues(kind, "cancelled").Inc()
		return nil, fmt.Errorf("cancelled while waiting for the client's answer: %w", context.Cause(ctx))
	case <-h.sse.done:
		if !s.forgetCall(id, pc) {
			a = <-pc.answer
			break
		}
		s.hostCalls.WithLabelValues(kind, "cancelled").Inc()
		return nil, errors.New("the client's stream ended before it answered")
	}
	if a.Error != nil {
		s.hostCalls.WithLabelValues(kind, "error").Inc()
		return nil, errors.New(a.Error.Message)
	}
	s.hostCalls.WithLabelValues(kind, "ok").Inc()
	return a.Result, nil
}

// forgetCall removes a call that gave up waiting; false means an answer
// took it first (and is in its channel).
func (s *Server) forgetCall(id string, pc *pendingCall) bool {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	if s.calls[id] != pc {
		return false
	}
	delete(s.calls, id)
	return true
}

func newCallID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("server: call id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// answerCall is POST /v1/sessions/{id}/calls/{callID}.
func (s *Server) answerCall(w http.ResponseWriter, r *http.Request, owner string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	a, err := decodeAnswer(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	id, session := r.PathValue("callID"), r.PathValue("id")
	s.callsMu.Lock()
	pc := s.calls[id]
	if pc == nil || pc.owner != owner || pc.session != session {
		s.callsMu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "no such pending call (never made, already answered, timed out, its cell ended, or not yours)")
		return
	}
	delete(s.calls, id)
	s.callsMu.Unlock()
	pc.answer <- a
	w.WriteHeader(http.StatusNoContent)
}

func decodeAnswer(body []byte) (CallAnswer, error) {
	const example = `send {"result": VALUE} or {"error": {"message": "..."}}`
	var a CallAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("the answer is not valid: %v; %s", err, example)
	}
	if dec.More() {
		return a, errors.New("the answer has data after its JSON object; " + example)
	}
	switch {
	case a.Result != nil && a.Error != nil:
		return a, errors.New("the answer has both result and error; " + example)
	case a.Result == nil && a.Error == nil:
		return a, errors.New("the answer has neither result nor error; " + example)
	case a.Error != nil && a.Error.Message == "":
		return a, errors.New(`error.message is empty; say what went wrong, like {"error": {"message": "no such tool"}}`)
	}
	return a, nil
}

// serverHost is the Host of evals whose client does not answer host calls
// (no SSE) and of one-shot runs: the operator's backends, with a message
// saying how to get one for what is missing.
func (s *Server) serverHost() hostcalls.Host {
	missing := hostcalls.HostFuncs{
		ToolFunc: func(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			return hostcalls.ToolResponse{}, errors.New(notConfigured("tools", "--tools-mcp"))
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			return hostcalls.LLMResponse{}, errors.New(notConfigured("LLM", "--llm-url"))
		},
		AgentFunc: func(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			return hostcalls.AgentResponse{}, errors.New(notConfigured("agents", ""))
		},
	}
	switch h := s.cfg.Host.(type) {
	case nil:
		return missing
	case hostcalls.HostFuncs:
		if h.ToolFunc == nil {
			h.ToolFunc = missing.ToolFunc
		}
		if h.LLMFunc == nil {
			h.LLMFunc = missing.LLMFunc
		}
		if h.AgentFunc == nil {
			h.AgentFunc = missing.AgentFunc
		}
		return h
	}
	return s.cfg.Host
}

func notConfigured(what, flag string) string {
	msg := "no " + what + " configured on this server; stream a session's eval (Accept: text/event-stream) to answer its calls as \"call\" events"
	if flag != "" {
		msg += ", or have the operator start wasmeval serve with " + flag
	}
	return msg
}
