package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/redact"
)

// DefaultMaxTokens is what SamplingHost asks for when MaxTokens is zero.
const DefaultMaxTokens = 4096

// SamplingHost is a hostcalls.Host whose LLM asks the MCP client running the
// cell for a completion (sampling/createMessage), when the client declared
// the sampling capability. Other calls, and llm() from clients without
// sampling (or outside an MCP tool call), go to Fallback; with no Fallback
// they fail with a message that says what is missing.
//
// Give it to sandbox.Options.Host of the sandbox that Config.Sandbox and
// Config.Manager use: the tools put the MCP session in the cell's context.
type SamplingHost struct {
	// Fallback answers what sampling cannot; nil means none.
	Fallback hostcalls.Host
	// MaxTokens is the maxTokens of each request; zero means
	// DefaultMaxTokens.
	MaxTokens int64
}

var _ hostcalls.Host = (*SamplingHost)(nil)

// session is the MCP session of the tool call ctx runs under, when its
// client offers sampling.
func samplingSession(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return nil
	}
	return ss
}

// LLM implements hostcalls.Host.
func (h *SamplingHost) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	ss := samplingSession(ctx)
	if ss == nil {
		if h.Fallback != nil {
			return h.Fallback.LLM(ctx, req)
		}
		return hostcalls.LLMResponse{}, errors.New("the MCP client did not offer sampling (the sampling capability), and no other LLM is configured")
	}
	prompt := req.Prompt
	if len(req.Schema) > 0 {
		prompt += "\n\nAnswer with only a JSON value, no prose and no code fence, that satisfies this JSON schema:\n" + string(req.Schema)
	}
	max := h.MaxTokens
	if max <= 0 {
		max = DefaultMaxTokens
	}
	params := &mcp.CreateMessageParams{
		MaxTokens:    max,
		Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
		SystemPrompt: req.System,
	}
	switch req.Model {
	case "smol":
		params.ModelPreferences = &mcp.ModelPreferences{SpeedPriority: 1, CostPriority: 0.8}
	case "slow":
		params.ModelPreferences = &mcp.ModelPreferences{IntelligencePriority: 1}
	}
	res, err := ss.CreateMessage(ctx, params)
	if err != nil {
		return hostcalls.LLMResponse{}, samplingProblem(ctx, err)
	}
	text, ok := res.Content.(*mcp.TextContent)
	if !ok {
		return hostcalls.LLMResponse{}, fmt.Errorf("the MCP client's sampling answered %T, not text", res.Content)
	}
	if len(req.Schema) == 0 {
		return hostcalls.LLMResponse{Text: text.Text}, nil
	}
	obj := unfence(text.Text)
	if !json.Valid([]byte(obj)) {
		return hostcalls.LLMResponse{}, fmt.Errorf("the model's answer is not JSON, though a schema was given: %.200q", text.Text)
	}
	return hostcalls.LLMResponse{Text: obj, Object: json.RawMessage(obj)}, nil
}

// samplingProblem is the guest's message for a failed sampling request: a
// fixed description, with the client's JSON-RPC error code and words (the
// client reads the cell's output anyway), never a raw Go error.
func samplingProblem(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the call was stopped: %w", context.Cause(ctx))
	}
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return fmt.Errorf("the MCP client refused the sampling request (error %d: %s)", we.Code, redact.Text(we.Message))
	case errors.Is(err, mcp.ErrConnectionClosed):
		return errors.New("the MCP client's sampling failed: the connection is closed")
	}
	return errors.New("the MCP client's sampling failed")
}

// unfence takes the JSON out of a ```json fence, which models add unasked.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i+1:]
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	return s
}

// Tool implements hostcalls.Host: it goes to Fallback.
func (h *SamplingHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	if h.Fallback == nil {
		return hostcalls.ToolResponse{}, fmt.Errorf("no tools are configured for this MCP server (asked for %q)", req.Name)
	}
	return h.Fallback.Tool(ctx, req)
}

// Agent implements hostcalls.Host: it goes to Fallback.
func (h *SamplingHost) Agent(ctx context.Context, req hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	if h.Fallback == nil {
		return hostcalls.AgentResponse{}, errors.New("no agent backend is configured for this MCP server")
	}
	return h.Fallback.Agent(ctx, req)
}
