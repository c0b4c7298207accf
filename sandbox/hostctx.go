package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/wasmeval/wasmeval/hostcalls"
)

type hostKey struct{}

// hostCallContext is the context a Host gets for a tool or agent call: a
// nested eval made under it streams to its own caller (WithEventFunc), not
// into the waiting cell's events.
func hostCallContext(ctx context.Context) context.Context {
	if fn, _ := ctx.Value(eventKey{}).(EventFunc); fn == nil {
		return ctx
	}
	return context.WithValue(ctx, eventKey{}, EventFunc(nil))
}

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
	if err := stoppedCall(ctx, "tool calls"); err != nil {
		return hostcalls.ToolResponse{}, err
	}
	defer holdActivity(ctx)()
	// While the tool runs, evals of the session run inside the cell.
	if f := frameOf(ctx); f != nil {
		defer f.hold()()
	}
	ctx = hostCallContext(ctx)
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
	if err := stoppedCall(ctx, "sub-agents"); err != nil {
		return hostcalls.AgentResponse{}, err
	}
	defer holdActivity(ctx)()
	if f := frameOf(ctx); f != nil {
		// A nested eval's cell runs deeper than its session: the cap
		// holds across the levels of one session too.
		if f.depth >= hostcalls.MaxAgentDepth {
			return hostcalls.AgentResponse{}, fmt.Errorf("agents nest at most %d deep, and this cell already runs at depth %d; do the work here instead", hostcalls.MaxAgentDepth, f.depth)
		}
		req.Depth = f.depth + 1
		// While the sub-agent runs, its evals of the session run inside
		// the cell.
		defer f.hold()()
	}
	ctx = hostCallContext(ctx)
	h := s.host(ctx)
	if h == nil {
		return hostcalls.AgentResponse{}, errNoHost("agent")
	}
	return h.Agent(ctx, req)
}
