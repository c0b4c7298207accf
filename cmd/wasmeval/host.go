package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/llmhost"
	"github.com/wasmeval/wasmeval/internal/mcphost"
)

// mcpStartTimeout bounds starting the --tools-mcp server and listing its
// tools (npx may download the server first).
const mcpStartTimeout = 2 * time.Minute

// hostFlags are eval's flags that bind tool and llm to real things.
type hostFlags struct {
	toolsMCP string
	llmURL   string
	models   [3]string // default, smol, slow
}

// host builds the Host the flags ask for: nil when they ask for none. It
// prints its own errors; a non-zero code means eval must stop.
func (f *hostFlags) host(ctx context.Context, stderr io.Writer) (hostcalls.Host, func(), int) {
	if f.toolsMCP == "" && f.llmURL == "" {
		if f.models != [3]string{} {
			fmt.Fprintln(stderr, "wasmeval eval: --llm-model and its kin need --llm-url")
			return nil, nil, exitInvalid
		}
		return nil, func() {}, exitOK
	}
	h := hostcalls.HostFuncs{
		ToolFunc: func(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			return hostcalls.ToolResponse{}, errors.New("no tools are configured (start wasmeval eval with --tools-mcp 'CMD ARGS')")
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			return hostcalls.LLMResponse{}, errors.New("no LLM is configured (start wasmeval eval with --llm-url URL)")
		},
		AgentFunc: func(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			return hostcalls.AgentResponse{}, errors.New("wasmeval eval offers no agents")
		},
	}
	closeHost := func() {}
	if f.llmURL != "" {
		c, err := llmhost.New(llmhost.Options{
			URL:    f.llmURL,
			APIKey: os.Getenv(llmhost.KeyEnv),
			Models: map[string]string{"default": f.models[0], "smol": f.models[1], "slow": f.models[2]},
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: --llm-url: %v\n", err)
			return nil, nil, exitInvalid
		}
		h.LLMFunc = c.LLM
	} else if f.models != [3]string{} {
		fmt.Fprintln(stderr, "wasmeval eval: --llm-model and its kin need --llm-url")
		return nil, nil, exitInvalid
	}
	if f.toolsMCP != "" {
		argv, err := mcphost.SplitCommand(f.toolsMCP)
		if err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: --tools-mcp: %v\n", err)
			return nil, nil, exitInvalid
		}
		startCtx, cancel := context.WithTimeout(ctx, mcpStartTimeout)
		defer cancel()
		c, err := mcphost.Start(startCtx, argv, stderr, version())
		if err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: --tools-mcp: %v\n", err)
			return nil, nil, exitHost
		}
		h.ToolFunc = c.Tool
		closeHost = func() {
			if err := c.Close(); err != nil {
				fmt.Fprintf(stderr, "wasmeval eval: closing the MCP server: %v\n", err)
			}
		}
	}
	return h, closeHost, exitOK
}
