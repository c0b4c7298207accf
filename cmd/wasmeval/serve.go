package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

const serveUsage = `Usage: wasmeval serve [flags]

Serves sandboxed Python and JavaScript sessions to agents over HTTP, with a
JSON API described at /openapi.json:

  POST   /v1/sessions                 create a session            -> 201 {"id": "..."}
  POST   /v1/sessions/{id}/eval       run a cell request          -> the result
                                      (Accept: text/event-stream streams stdout,
                                      stderr, display, result and status events,
                                      then a final "done" event)
  GET    /v1/sessions                 the caller's sessions       -> {"sessions": [...]}
  GET    /v1/sessions/{id}            created, last used, live languages, fuel
                                      used, memory, what the root holds
  POST   /v1/sessions/{id}/interrupt  stop the running cell, keep the session
  GET    /v1/sessions/{id}/files/{path}  a file's bytes, or a folder's listing
  PUT    /v1/sessions/{id}/files/{path}  write a file (body cap, disk quota)
  DELETE /v1/sessions/{id}/files/{path}  remove a file or an empty folder
  POST   /v1/sessions/{id}/fork       copy files and Python state -> 201 {"id": "..."}
                                      (JavaScript starts afresh in the copy:
                                      "freshLanguages": ["js"] says so)
  DELETE /v1/sessions/{id}            delete a session            -> 204
  GET    /v1/sessions/{id}/outputs/{outputId}   the full text of a cut output
  POST   /v1/sessions/{id}/calls/{callId}      answer a host call -> 204
                                      (a streaming eval sends each tool(), llm()
                                      and agent() call of the guest as a "call"
                                      event {"callId","kind","request"}; answer
                                      {"result": ...} or {"error": {"message"}})
  POST   /v1/run                      one-shot {"language","code"} -> CodeInterpreter outputs
  POST   /v1/sessions/{id}/profiles/evaluate_python
                                      the asteval tool's {"code","globals","reads",
                                      "writes"} in a fresh namespace of the session
  POST   /v1/sessions/{id}/profiles/{tool}
                                      any profile tool in the session: python,
                                      evaluate_python, run_code, create_code_context,
                                      run_in_code_context, delete_code_context
  POST   /v1/profiles/{tool}          the same without a session: python and
                                      evaluate_python in a temporary one
  GET    /healthz, /openapi.json      no token needed
  GET    /metrics                     Prometheus metrics
  POST/GET/DELETE /mcp                MCP over streamable HTTP: tools eval, python,
                                      evaluate_python, run_code, create_code_context,
                                      run_in_code_context, delete_code_context
                                      (see wasmeval mcp -h)

Every /v1 endpoint, /mcp and /metrics needs "Authorization: Bearer <token>" with
one of the configured tokens (401 otherwise). A session belongs to the token
that created it; other tokens get 404 for it. At least one token is required.

Flags:
  --addr HOST:PORT
        the address to listen on (default 127.0.0.1:8080: this machine only;
        give 0.0.0.0:8080 to accept other machines, behind TLS)
  --token TOKEN
        a bearer token to accept; repeat for several. Tokens on the command
        line are visible to other local users in the process list: prefer
        --tokens-file or WASMEVAL_TOKENS
  --tokens-file FILE
        a file of bearer tokens, one per line; blank lines and lines starting
        with # are skipped
  --workspace DIR
        the folder under which each session gets its own folder (default: a
        temporary folder, removed on exit; a named one keeps the sessions'
        folders on exit, and with --store's default its sessions survive a
        restart)
  --max-sessions N
        the most sessions kept; one more evicts the least recently used idle
        session (default 1000)
  --max-sessions-per-token N
        the most sessions one token may hold; more answers 429 (default 100;
        0 means no limit)
  --idle-timeout DURATION
        evict a session unused for this long, like 10m or 1h (default 15m;
        0 means never)
  --max-inflight N
        the most evals and runs in progress at once; more answers 429 with
        Retry-After (default 64)
  --max-body BYTES
        the largest request body accepted; larger answers 413 (default 8388608)
  --shutdown-timeout DURATION
        on SIGINT or SIGTERM, how long running cells get to finish before
        they are cancelled (default 30s)
  --log-format text|json
        the format of the log on stderr (default text). Logs never contain
        tokens (sessions are logged by owner, a hash of the token) and cut
        code to 200 characters
  --cache-dir DIR
        the wasm compilation cache (default: the user cache folder)
` + packageUsage + pythonBackendUsage + jupyterURLUsage + `  --memory-budget SIZE
        the host memory all sessions together may hold, like 8GiB; past it
        idle sessions are trimmed, then the largest idle ones evicted. A
        running eval counts at its session's --memory-limit (per language;
        twice for Python with checkpoints): one that does not fit waits up
        to 10s for running cells, then gets 503 (default: half the
        machine's memory, at most 4GiB; "none" for no cap)
` + toolsUsage + `        Here it picks the tools at /mcp and the profile endpoints; the session
        API (/v1/sessions/{id}/eval, /v1/run) is always served
` + storeUsage + nodeUsage + limitUsage + languagesUsage + envUsage + managerTapeUsage + `  --call-timeout DURATION
        how long a streaming client has to answer a host call before the
        guest's helper fails with a timeout error (default 60s)
  --tools-mcp 'CMD ARGS'
        run CMD as an MCP server over stdio (split on spaces, with '...' and
        "..." quoting; no shell) whose tools answer tool.<name>(args) in evals
        that do not stream and in /v1/run (a streaming eval's calls go to its
        client). Without it those calls fail saying no tools are configured
  --llm-url URL
        an OpenAI-compatible chat-completions endpoint answering llm() in
        evals that do not stream and in /v1/run. The API key is read from
        WASMEVAL_LLM_API_KEY (without it llm() fails before sending
        anything; any value suits an endpoint that needs none); guests never
        see it
  --llm-model NAME, --llm-model-smol NAME, --llm-model-slow NAME
        the models for llm(model='default'|'smol'|'slow') (smol and slow
        default to --llm-model; no model field is sent when unset)

Environment:
  WASMEVAL_TOKENS   comma-separated bearer tokens, added to the flags'
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type serveConfig struct {
	addr, tokensFile, workspace, logFormat, cacheDir string
	tokens                                           stringList
	tools                                            toolsFlag
	maxSessions, perToken, maxInFlight               int
	idle, grace                                      time.Duration
	maxBody                                          int64
	callTimeout                                      time.Duration
	host                                             hostFlags
	limits                                           limitFlags
	languages                                        languagesFlag
	env                                              envFlags
	memoryBudget                                     byteSize
	packages                                         packageFlags
	python                                           pythonBackendFlags
	jupyterURL                                       jupyterURLFlag // jupyterflags.go
	store                                            storeFlags     // storeflags.go
	node                                             nodeFlags      // nodeflags.go

	tape managerTapeFlags // --deterministic, --record-dir
}

func parseServeFlags(args []string, stdout, stderr io.Writer) (*serveConfig, int, bool) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var flagOut bytes.Buffer
	fs.SetOutput(&flagOut)
	fs.Usage = func() {}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "")
	c.packages.register(fs)
	c.python.register(fs)
	c.jupyterURL.register(fs)
	c.limits.register(fs)
	c.languages.register(fs)
	c.env.register(fs)
	c.tools.register(fs)
	c.tape.register(fs)
	c.store.register(fs)
	c.node.register(fs)
	fs.Var(&c.memoryBudget, "memory-budget", "")
	fs.Var(&c.tokens, "token", "")
	fs.StringVar(&c.tokensFile, "tokens-file", "", "")
	fs.StringVar(&c.workspace, "workspace", "", "")
	fs.IntVar(&c.maxSessions, "max-sessions", 1000, "")
	fs.IntVar(&c.perToken, "max-sessions-per-token", 100, "")
	fs.DurationVar(&c.idle, "idle-timeout", 15*time.Minute, "")
	fs.IntVar(&c.maxInFlight, "max-inflight", server.DefaultMaxInFlight, "")
	fs.Int64Var(&c.maxBody, "max-body", server.DefaultMaxBodyBytes, "")
	fs.DurationVar(&c.grace, "shutdown-timeout", 30*time.Second, "")
	fs.StringVar(&c.logFormat, "log-format", "text", "")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "")
	fs.DurationVar(&c.callTimeout, "call-timeout", server.DefaultCallTimeout, "")
	fs.StringVar(&c.host.toolsMCP, "tools-mcp", "", "")
	fs.StringVar(&c.host.llmURL, "llm-url", "", "")
	fs.StringVar(&c.host.models[0], "llm-model", "", "")
	fs.StringVar(&c.host.models[1], "llm-model-smol", "", "")
	fs.StringVar(&c.host.models[2], "llm-model-slow", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, serveUsage)
			return nil, exitOK, false
		}
		flagError(stderr, "serve", flagOut.String())
		return nil, exitInvalid, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmeval serve: unexpected argument %q\nrun 'wasmeval serve -h' for the flags\n", fs.Arg(0))
		return nil, exitInvalid, false
	}
	bad := func(format string, a ...any) (*serveConfig, int, bool) {
		fmt.Fprintf(stderr, "wasmeval serve: "+format+"\n", a...)
		return nil, exitInvalid, false
	}
	switch {
	case c.logFormat != "text" && c.logFormat != "json":
		return bad("--log-format %q: use text or json", c.logFormat)
	case c.maxSessions < 1:
		return bad("--max-sessions %d: give at least 1", c.maxSessions)
	case c.perToken < 0:
		return bad("--max-sessions-per-token %d: give 0 (no limit) or more", c.perToken)
	case c.maxInFlight < 1:
		return bad("--max-inflight %d: give at least 1", c.maxInFlight)
	case c.maxBody < 1:
		return bad("--max-body %d: give a positive number of bytes", c.maxBody)
	case c.callTimeout <= 0:
		return bad("--call-timeout %s: give a positive duration, like 30s or 2m", c.callTimeout)
	case c.idle < 0:
		return bad("--idle-timeout %s: give a positive duration, or 0 for never", c.idle)
	}
	if err := c.limits.check(); err != nil {
		return bad("%v", err)
	}
	if err := c.packages.check(); err != nil {
		return bad("%v", err)
	}
	if err := c.python.check(); err != nil {
		return bad("%v", err)
	}
	if err := c.node.check(); err != nil {
		return bad("%v", err)
	}
	return c, exitOK, true
}

// loadTokens gathers the tokens of --token, --tokens-file and
// WASMEVAL_TOKENS.
func loadTokens(c *serveConfig, env string) ([]string, error) {
	var tokens []string
	add := func(t string) {
		if t = strings.TrimSpace(t); t != "" {
			tokens = append(tokens, t)
		}
	}
	for _, t := range c.tokens {
		add(t)
	}
	for _, t := range strings.Split(env, ",") {
		add(t)
	}
	if c.tokensFile != "" {
		f, err := os.Open(c.tokensFile)
		if err != nil {
			return nil, fmt.Errorf("--tokens-file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); !strings.HasPrefix(line, "#") {
				add(line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("--tokens-file: %w", err)
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("no bearer tokens: give --token, --tokens-file or WASMEVAL_TOKENS (anyone who can reach the server could run code otherwise)")
	}
	return tokens, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, code, ok := parseServeFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	tokens, err := loadTokens(c, os.Getenv("WASMEVAL_TOKENS"))
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitInvalid
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if c.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(h)
	// Listening now gives the default node id its port (nodeflags.go).
	if logger, err = c.node.listen(c.addr, c.store.url, logger); err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitHost
	}
	defer c.node.close()

	backends, closeBackends, code := serveBackends(ctx, &c.host, stderr)
	if code != exitOK {
		return code
	}
	defer closeBackends()

	sbo := sandbox.Options{CacheDir: c.cacheDir, Logger: logger}
	c.packages.apply(&sbo)
	c.python.apply(&sbo)
	if code := c.jupyterURL.apply(ctx, &sbo, "serve", stderr); code != exitOK {
		return code
	}
	sbo.Languages = c.languages.list
	sb, err := sandbox.New(ctx, sbo)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		if errors.Is(err, sandbox.ErrPackages) {
			return exitInvalid
		}
		return exitHost
	}
	defer sb.Close(context.WithoutCancel(ctx))
	if err := c.packages.start(ctx, sb); err != nil { // the preload, before the first cell
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		if errors.Is(err, sandbox.ErrPackages) {
			return exitInvalid
		}
		return exitHost
	}
	idle := c.idle
	if idle == 0 {
		idle = -1 // the manager's "never"
	}
	// Untrusted agents: a runaway cell rolls back instead of costing the
	// session its Python state.
	sessOpts := sandbox.SessionOptions{Checkpoints: true}
	c.limits.apply(&sessOpts)
	if err := c.env.apply(&sessOpts, "serve", stderr); err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitInvalid
	}
	mo := sandbox.ManagerOptions{Workspace: c.workspace, IdleTimeout: idle, MaxSessions: c.maxSessions, MemoryBudgetBytes: c.memoryBudget.n}
	c.tape.apply(&sessOpts, &mo)
	c.store.apply(&mo)
	mo.Session = sessOpts
	if mo.Store, code = c.store.open("serve", c.workspace, stderr); code != exitOK {
		return code
	} else if mo.Store != nil {
		defer mo.Store.Close()
	}
	node, err := c.node.node(&mo, logger) // several nodes over one store
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitInvalid
	}
	mgr, err := sandbox.NewManager(sb, mo)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitHost
	}
	srv, err := server.New(server.Config{
		Sandbox: sb, Manager: mgr, Tokens: tokens, Logger: logger,
		MaxBodyBytes: c.maxBody, MaxInFlight: c.maxInFlight, MaxSessionsPerToken: c.perToken,
		Host: backends, CallTimeout: c.callTimeout, Tools: c.tools.set, KernelMode: string(c.tools.kernelMode),
		Node: node,
	})
	if err != nil {
		mgr.Close(ctx)
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitInvalid
	}
	ln, err := c.node.listener(c.addr)
	if err != nil {
		mgr.Close(ctx)
		fmt.Fprintf(stderr, "wasmeval serve: %v\n", err)
		return exitHost
	}
	logger.Info("listening", "addr", ln.Addr().String(), "tokens", len(tokens))
	if err := serveAndDrain(ctx, ln, srv, mgr, node, c.grace); err != nil { // drain.go
		logger.Error("shutdown", "err", err)
		return exitHost
	}
	logger.Info("stopped")
	return exitOK
}

// serveBackends builds the operator's backends with eval's hostFlags.host,
// keeping only what the flags configure: the server answers the rest with
// its own message (which names serve's flags, not eval's).
func serveBackends(ctx context.Context, f *hostFlags, stderr io.Writer) (hostcalls.Host, func(), int) {
	return backendsFor(ctx, "serve", f, stderr)
}

// backendsFor is serveBackends for command cmd (serve or mcp), whose name
// hostFlags.host's messages carry.
func backendsFor(ctx context.Context, cmd string, f *hostFlags, stderr io.Writer) (hostcalls.Host, func(), int) {
	h, closeHost, code := f.host(ctx, cmdErrors{stderr, cmd})
	if code != exitOK || h == nil {
		return nil, func() {}, code
	}
	var b hostcalls.HostFuncs
	if f.toolsMCP != "" {
		b.ToolFunc = h.Tool
	}
	if f.llmURL != "" {
		b.LLMFunc = h.LLM
	}
	return b, closeHost, exitOK
}

// cmdErrors names cmd, not eval, in hostFlags.host's messages (each one
// Write).
type cmdErrors struct {
	w   io.Writer
	cmd string
}

func (s cmdErrors) Write(p []byte) (int, error) {
	if _, err := s.w.Write(bytes.ReplaceAll(p, []byte("wasmeval eval:"), []byte("wasmeval "+s.cmd+":"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
