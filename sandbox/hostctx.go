package sandbox

import (
	"context"
	"errors"

	"github.com/wasmeval/wasmeval/hostcalls"
)

type hostKey struct{}

// WithHost returns a context under which Session.Eval sends the guest's
// tool, llm and agent calls to h instead of Options.Host. It is how a
// server hands each eval's host calls to the client that runs it. A nil h
// means Options.Host again.
func WithHost(ctx context.Context, h hostcalls.Host) context.Context {
	return context.WithValue(ctx, hostKey{}, h)
}

// sessionHost is the Host of every session's dispatcher: the Host of the
// call's context (WithHost) when there is one, else the Sandbox's.
type sessionHost struct {
	fallback hostcalls.Host
}

// errNoHost says that neither WithHost nor Options.Host gave a Host; the
// dispatcher prefixes the helper's name, giving the same message as a
// dispatcher without a Host ("llm: no LLM is configured for this sandbox
// (sandbox.Options.Host is nil)").
func errNoHost(what string) error {
	return errors.New("no " + what + " is configured for this sandbox (sandbox.Options.Host is nil)")
}

func (s sessionHost) host(ctx context.Context) hostcalls.Host {
	if h, _ := ctx.Value(hostKey{}).(hostcalls.Host); h != nil {
		return h
	}
	return s.fallback
}

func (s sessionHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	defer holdActivity(ctx)()
	h := s.host(ctx)
	if h == nil {
		return hostcalls.ToolResponse{}, errNoHost("tool")
	}
	return h.Tool(ctx, req)
}

func (s sessionHost) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	defer holdActivity(ctx)()
	h := s.host(ctx)
	if h == nil {
		return hostcalls.LLMResponse{}, errNoHost("LLM")
	}
	return h.LLM(ctx, req)
}

func (s sessionHost) Agent(ctx context.Context, req hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	defer holdActivity(ctx)()
	h := s.host(ctx)
	if h == nil {
		return hostcalls.AgentResponse{}, errNoHost("agent")
	}
	return h.Agent(ctx, req)
}
