package hostcalls

import (
	"context"
	"encoding/json"
	"errors"
)

// Host answers the guest's tool, llm and agent calls. The embedder
// implements it; sandbox.Options.Host hands it to every session. Its
// methods may be called concurrently (the guest's parallel helper), each
// with a context that ends with the cell.
//
// An error is shown to the guest as the helper's exception (Python) or
// rejection (JavaScript), prefixed with the helper's name: make it say
// what went wrong in words a model can act on.
type Host interface {
	Tool(ctx context.Context, req ToolRequest) (ToolResponse, error)
	LLM(ctx context.Context, req LLMRequest) (LLMResponse, error)
	Agent(ctx context.Context, req AgentRequest) (AgentResponse, error)
}

// ToolRequest is a call of tool.<name>(args).
type ToolRequest struct {
	// Name is the tool's name: the attribute the guest used.
	Name string
	// Args is the argument object as JSON ({} when none was given).
	Args json.RawMessage
}

// ToolResponse is a tool's answer.
type ToolResponse struct {
	// Result is any JSON value; the helper returns it decoded. Empty means
	// null.
	Result json.RawMessage
}

// LLMRequest is a call of llm(prompt, model, system, schema).
type LLMRequest struct {
	Prompt string
	// Model is "default", "smol" or "slow": a size class, which the Host
	// maps to a model of its choice.
	Model string
	// System is the system prompt; empty when none was given.
	System string
	// Schema is a JSON schema the answer must satisfy; empty when none was
	// given. With a schema, the helper returns the parsed object.
	Schema json.RawMessage
}

// LLMResponse is a model's answer.
type LLMResponse struct {
	// Text is the answer. With a schema, it is the JSON text of the
	// object, unless Object is set.
	Text string
	// Object is the structured answer, for a request with a schema.
	Object json.RawMessage
}

// AgentRequest is a call of agent(prompt, agent_type, model, context,
// label, schema): a sub-agent that works on the prompt and answers.
type AgentRequest struct {
	Prompt    string
	AgentType string // empty: the Host's default kind of agent
	Model     string // empty: the Host's default
	Context   string // extra context for the sub-agent; may be empty
	Label     string // a short name for progress reports; may be empty
	Schema    json.RawMessage
	// Depth is the sub-agent's depth: 1 for an agent started by a
	// top-level session, 2 for one started by that agent's cells, and so
	// on, at most MaxAgentDepth. A Host that gives its sub-agents sandboxes
	// of their own passes Depth on (sandbox.SessionOptions.AgentDepth), so
	// that the cap holds across levels.
	Depth int
}

// AgentResponse is a sub-agent's answer.
type AgentResponse struct {
	Text   string
	Object json.RawMessage
}

// MaxAgentDepth is how deep agents may nest: an agent call that would make
// a deeper one fails.
const MaxAgentDepth = 3

// HostFuncs is a Host made of functions; a nil function makes its helper
// fail with a message saying that the Host offers none. It suits tests
// and embedders that offer only some of the three.
type HostFuncs struct {
	ToolFunc  func(context.Context, ToolRequest) (ToolResponse, error)
	LLMFunc   func(context.Context, LLMRequest) (LLMResponse, error)
	AgentFunc func(context.Context, AgentRequest) (AgentResponse, error)
}

var _ Host = HostFuncs{}

// Tool calls ToolFunc.
func (h HostFuncs) Tool(ctx context.Context, req ToolRequest) (ToolResponse, error) {
	if h.ToolFunc == nil {
		return ToolResponse{}, errors.New("no tools are configured for this sandbox")
	}
	return h.ToolFunc(ctx, req)
}

// LLM calls LLMFunc.
func (h HostFuncs) LLM(ctx context.Context, req LLMRequest) (LLMResponse, error) {
	if h.LLMFunc == nil {
		return LLMResponse{}, errors.New("no LLM is configured for this sandbox")
	}
	return h.LLMFunc(ctx, req)
}

// Agent calls AgentFunc.
func (h HostFuncs) Agent(ctx context.Context, req AgentRequest) (AgentResponse, error) {
	if h.AgentFunc == nil {
		return AgentResponse{}, errors.New("no agents are configured for this sandbox")
	}
	return h.AgentFunc(ctx, req)
}
