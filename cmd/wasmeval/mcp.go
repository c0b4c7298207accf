package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server/mcpserver"
)

const mcpUsage = `Usage: wasmeval mcp [flags]

Serves sandboxed Python and JavaScript to one MCP client on stdin and stdout
(newline-delimited JSON-RPC, the MCP stdio transport). Logs go to stderr.
A line that is not a JSON-RPC message, or is longer than 16 MiB, gets a
JSON-RPC error (-32700 or -32600, id null) and the connection goes on.

Tools:
  eval                 {"cells": [{"language": "py"|"js"|"ts", "code", "title"?,
                       "timeout"?, "reset"?}]} in this connection's session;
                       text and image content, per-cell details as the
                       structured result
  python               {"cells": [{"code", "title"?}], "timeout"?, "cwd"?,
                       "reset"?, "kernelMode"?}: the Jupyter-backed python
                       tool's shape, in this connection's session
  run_code             {"language": "python"|"javascript"|"typescript", "code",
                       "timeoutMs"?} in a throwaway session -> {"outputs",
                       "exitCode", "error"?} (the CodeInterpreter interface)
  create_code_context  {"language", "cwd"?, "python"?} -> {"contextId"}: a
                       persistent interpreter; python "wasm"|"jupyter" picks
                       a python context's backend (--python-backend-choice)
  run_in_code_context  {"contextId", "code", "timeoutMs"?}
  delete_code_context  {"contextId"} -> {"ok": true}
  evaluate_python      {"code", "globals"?, "reads"?, "writes"?}: the asteval
                       tool's shape, in a fresh namespace of this connection's
                       session (the one eval uses: files shared); -> {"value_repr",
                       "stdout", "stderr", "globals", "reads", "writes"}

llm() in a cell asks the client for a completion (MCP sampling) when the
client offers the sampling capability; otherwise it goes to --llm-url, or
fails with a message. tool.<name>() calls go to --tools-mcp's server.

Flags:
  --tools-mcp 'CMD ARGS'
        run CMD as an MCP server over stdio (split on spaces, with '...' and
        "..." quoting; no shell) whose tools answer tool.<name>(args)
  --llm-url URL
        an OpenAI-compatible chat-completions endpoint answering llm() when
        the client offers no sampling. The API key is read from
        WASMEVAL_LLM_API_KEY; guests never see it
  --llm-model NAME, --llm-model-smol NAME, --llm-model-slow NAME
        the models for llm(model='default'|'smol'|'slow')
  --workspace DIR
        the folder under which each session gets its own folder (default: a
        temporary folder, removed on exit; a named one keeps the sessions'
        folders on exit)
  --cache-dir DIR
        the wasm compilation cache (default: the user cache folder)
` + packageUsage + pythonBackendUsage + jupyterURLUsage + `  --idle-timeout DURATION
        delete a code context unused for this long, like 10m or 1h (default
        15m; 0 means never)
  --max-sessions N
        the most sessions kept; one more evicts the least recently used idle
        session (default 100)
  --memory-budget SIZE
        the host memory all sessions together may hold (default: half the
        machine's memory, at most 4GiB; "none" for no cap)
` + toolsUsage + limitUsage + languagesUsage + envUsage + managerTapeUsage

func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var workspace, cacheDir string
	var idle time.Duration
	var maxSessions int
	var limits limitFlags
	var memoryBudget byteSize
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	limits.register(fs)
	var languages languagesFlag
	languages.register(fs)
	var packages packageFlags
	packages.register(fs)
	var pbf pythonBackendFlags
	pbf.register(fs)
	var jf jupyterURLFlag // --jupyter-url (jupyterflags.go)
	jf.register(fs)
	var ef envFlags
	ef.register(fs)
	var tools toolsFlag
	tools.register(fs)
	var tf managerTapeFlags
	tf.register(fs)
	fs.Var(&memoryBudget, "memory-budget", "")
	var hf hostFlags
	fs.StringVar(&hf.toolsMCP, "tools-mcp", "", "")
	fs.StringVar(&hf.llmURL, "llm-url", "", "")
	fs.StringVar(&hf.models[0], "llm-model", "", "")
	fs.StringVar(&hf.models[1], "llm-model-smol", "", "")
	fs.StringVar(&hf.models[2], "llm-model-slow", "", "")
	var flagOut bytes.Buffer
	fs.SetOutput(&flagOut)
	fs.Usage = func() {}
	fs.StringVar(&workspace, "workspace", "", "")
	fs.StringVar(&cacheDir, "cache-dir", "", "")
	fs.DurationVar(&idle, "idle-timeout", 15*time.Minute, "")
	fs.IntVar(&maxSessions, "max-sessions", 100, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, mcpUsage)
			return exitOK
		}
		flagError(stderr, "mcp", flagOut.String())
		return exitInvalid
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "wasmeval mcp: unexpected argument %q\nrun 'wasmeval mcp -h' for the flags\n", fs.Arg(0))
		return exitInvalid
	case maxSessions < 1:
		fmt.Fprintf(stderr, "wasmeval mcp: --max-sessions %d: give at least 1\n", maxSessions)
		return exitInvalid
	case idle < 0:
		fmt.Fprintf(stderr, "wasmeval mcp: --idle-timeout %s: give a positive duration, or 0 for never\n", idle)
		return exitInvalid
	}
	if err := limits.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitInvalid
	}
	if err := packages.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitInvalid
	}
	if err := pbf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitInvalid
	}
	if idle == 0 {
		idle = -1 // the manager's "never"
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	sbo := sandbox.Options{CacheDir: cacheDir, Logger: logger}
	packages.apply(&sbo)
	pbf.apply(&sbo)
	if code := jf.apply(ctx, &sbo, "mcp", stderr); code != exitOK {
		return code
	}
	sbo.Languages = languages.list
	sb, err := sandbox.New(ctx, sbo)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		if errors.Is(err, sandbox.ErrPackages) {
			return exitInvalid
		}
		return exitHost
	}
	defer sb.Close(context.WithoutCancel(ctx))
	if err := packages.start(ctx, sb); err != nil { // the preload, before the first cell
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		if errors.Is(err, sandbox.ErrPackages) {
			return exitInvalid
		}
		return exitHost
	}
	sessOpts := sandbox.SessionOptions{Checkpoints: true}
	limits.apply(&sessOpts)
	if err := ef.apply(&sessOpts, "mcp", stderr); err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitInvalid
	}
	mo := sandbox.ManagerOptions{Workspace: workspace, IdleTimeout: idle, MaxSessions: maxSessions, MemoryBudgetBytes: memoryBudget.n}
	tf.apply(&sessOpts, &mo)
	mo.Session = sessOpts
	mgr, err := sandbox.NewManager(sb, mo)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitHost
	}
	defer mgr.Close(context.WithoutCancel(ctx))
	backends, closeBackends, code := backendsFor(ctx, "mcp", &hf, stderr)
	if code != exitOK {
		return code
	}
	defer closeBackends()
	srv, err := mcpserver.New(mcpserver.Config{Sandbox: sb, Manager: mgr, Version: version(), Logger: logger, Tools: tools.set, KernelMode: string(tools.kernelMode), Host: backends})
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
		return exitHost
	}
	// A LineTransport, not the SDK's IOTransport: one bad or oversized line
	// gets a JSON-RPC error instead of ending the connection. srv.Run, not
	// srv.MCP().Run: a session settles after each answer (issue 15).
	err = srv.Run(ctx, &mcpserver.LineTransport{Reader: stdin, Writer: stdout, Logger: logger})
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return exitOK
	}
	fmt.Fprintf(stderr, "wasmeval mcp: %v\n", err)
	return exitHost
}
