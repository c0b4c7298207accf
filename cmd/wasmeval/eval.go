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
	"path/filepath"
	"time"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

const evalUsage = `Usage: wasmeval eval [--cwd DIR] [--stream] [--tools-mcp 'CMD ARGS'] [--llm-url URL [--llm-model NAME]]
       [--deterministic] [--record FILE] [--kernel-mode session|per-call]

Reads requests from stdin, one JSON object a line, runs them in order in ONE
session (state persists from line to line, per language), and writes one
compact JSON result a line to stdout, flushed after each. Blank lines are
skipped; lines may be up to 16 MiB long.

A request:
  {"cells": [{"language": "py", "js" or "ts", "code": "...",
              "title": "...", "timeout": 30, "reset": false, "fuel": N}]}
  timeout is in whole seconds from 1 to 600 (default 30); reset discards the
  language's state before the cell; fuel (Python only) is a deterministic
  budget: past it the cell stops with "fuel exhausted". All but language
  and code are optional.

A result is {"content": [...], "details": {...}} as docs/design.md defines it.
` + profileLinesUsage + `
A line that is not a valid request gets
  {"error": {"code": "invalid_request", "message": "line N: ..."}}
and a request the host could not run gets
  {"error": {"code": "host_error", "message": "line N: ..."}}
(with the message on stderr too); either way the next line still runs.

Exit status (the highest that applies):
  0    every request ran and every cell completed
  1    a cell failed, timed out or was cancelled
  2    a line was not a valid request, or the command line was wrong
  3    the host failed: a runtime did not start, stdout could not be written
  130  interrupted (SIGINT or SIGTERM)

Flags:
  --cwd DIR   the session root: the guest's working directory, the only
              part of the host filesystem it sees (default: the current
              directory). It must not be, contain or lie inside wasmeval's
              cache ($XDG_CACHE_HOME/wasmeval or ~/.cache/wasmeval), so not
              $HOME: that is refused with status 2
  --mkdir     create the --cwd folder (and its parents) when it is missing
  --stream    write each request's events as they happen, then its answer,
              all tagged with the request's line number (see Streaming)
  --memory-limit SIZE, --disk-quota SIZE, --disk-quota-files N
              the session's limits (see Limits below)
  --tools-mcp 'CMD ARGS'
              run CMD as an MCP server over stdio (split on spaces, with
              '...' and "..." quoting; no shell) and let tool.<name>(args)
              call its tools; tool.get_sum also finds a tool "get-sum".
              Text content comes back as a string, structuredContent as an
              object, isError as the helper's error.
  --llm-url URL
              send llm() to an OpenAI-compatible chat-completions endpoint:
              POST URL/chat/completions, or URL itself when it ends in
              /chat/completions. The API key is read from the host
              environment variable WASMEVAL_LLM_API_KEY and sent as a bearer
              token; the guest never sees it. Without it llm() fails before
              sending anything (any value suits an endpoint that needs none)
  --llm-model NAME
              the model for llm(model='default') (no model field is sent
              when unset)
  --llm-model-smol NAME, --llm-model-slow NAME
              the models for 'smol' and 'slow' (default: --llm-model)
` + kernelModeUsage + tapeUsage + `
Streaming (--stream):
` + streamUsage + `
Python packages:
` + packageUsage + `
Python backend:
` + pythonBackendUsage + jupyterURLUsage + `
Cell languages:
` + languagesUsage + `
Limits:
` + limitUsage + `
Environment of the guest:
` + envUsage

// maxLineBytes is the longest request line eval reads.
var maxLineBytes = 16 << 20

// evalSession is what eval needs of a session; tests substitute fakes.
type evalSession interface {
	Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error)
	Close(ctx context.Context) error
}

// openSession starts the sandbox (sbo: its logger, host, packages) and the
// one session eval runs in.
var openSession = func(ctx context.Context, opts sandbox.SessionOptions, sbo sandbox.Options) (evalSession, error) {
	sb, err := sandbox.New(ctx, sbo)
	if err != nil {
		return nil, err
	}
	if len(sbo.Preload) > 0 { // the preload, before the first cell
		if err := sb.StartRuntime(ctx, "py"); err != nil {
			sb.Close(ctx)
			return nil, err
		}
	}
	s, err := sb.NewSession(ctx, opts)
	if err != nil {
		sb.Close(ctx)
		return nil, err
	}
	return &sandboxSession{Session: s, sb: sb}, nil
}

type sandboxSession struct {
	*sandbox.Session
	sb *sandbox.Sandbox
}

func (s *sandboxSession) Close(ctx context.Context) error {
	return errors.Join(s.Session.Close(ctx), s.sb.Close(ctx))
}

// errorLine is the line written for a request that did not run.
type errorLine struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func runEval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var flagOut bytes.Buffer
	fs.SetOutput(&flagOut)
	fs.Usage = func() { fmt.Fprint(&flagOut, evalUsage) }
	cwd := fs.String("cwd", "", "the session root (default: the current directory)")
	mkdir := fs.Bool("mkdir", false, "create --cwd (and its parents) when missing")
	streamFlag := fs.Bool("stream", false, "write events as they happen, then the answer, each tagged with its line")
	var lf limitFlags
	lf.register(fs)
	var lgf languagesFlag
	lgf.register(fs)
	var pf packageFlags
	pf.register(fs)
	var pbf pythonBackendFlags
	pbf.register(fs)
	var jf jupyterURLFlag // --jupyter-url (jupyterflags.go)
	jf.register(fs)
	var ef envFlags
	ef.register(fs)
	var tf tapeFlags
	tf.register(fs)
	var prf profileFlags
	prf.register(fs)
	var hf hostFlags
	fs.StringVar(&hf.toolsMCP, "tools-mcp", "", "an MCP server command whose tools tool.<name>() calls")
	fs.StringVar(&hf.llmURL, "llm-url", "", "an OpenAI-compatible chat-completions endpoint for llm()")
	fs.StringVar(&hf.models[0], "llm-model", "", "the model for llm(model='default')")
	fs.StringVar(&hf.models[1], "llm-model-smol", "", "the model for llm(model='smol')")
	fs.StringVar(&hf.models[2], "llm-model-slow", "", "the model for llm(model='slow')")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, evalUsage)
			return exitOK
		}
		flagError(stderr, "eval", flagOut.String())
		return exitInvalid
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmeval eval: unexpected argument %q: requests come on stdin\nrun 'wasmeval eval -h' for the flags\n", fs.Arg(0))
		return exitInvalid
	}
	root := *cwd
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: the current directory: %v; give --cwd\n", err)
			return exitHost
		}
		root = wd
	}
	if *mkdir {
		if err := os.MkdirAll(root, 0o755); err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: --mkdir: %v\n", err)
			return exitInvalid
		}
	}
	if fi, err := os.Stat(root); err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: --cwd %s: no such directory; create it first or add --mkdir\n", root)
		return exitInvalid
	} else if !fi.IsDir() {
		fmt.Fprintf(stderr, "wasmeval eval: --cwd %s: not a directory; give the folder the session should work in\n", root)
		return exitInvalid
	}
	root, _ = filepath.Abs(root)
	if err := lf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		return exitInvalid
	}
	if err := pf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		return exitInvalid
	}
	if err := pbf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		return exitInvalid
	}
	opts := sandbox.SessionOptions{Root: root, Checkpoints: true}
	lf.apply(&opts)
	opts.Languages = lgf.list
	if err := ef.apply(&opts, "eval", stderr); err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		return exitInvalid
	}
	closeTape, err := tf.apply(&opts)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		return exitInvalid
	}
	defer closeTape() // after the session's Close, which finishes the tape

	host, closeHost, code := hf.host(ctx, stderr)
	if code != exitOK {
		return code
	}
	defer closeHost()

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sbo := sandbox.Options{Logger: logger, Host: host}
	pf.apply(&sbo)
	pbf.apply(&sbo)
	if code := jf.apply(ctx, &sbo, "eval", stderr); code != exitOK {
		return code
	}
	sess, err := openSession(ctx, opts, sbo)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval eval: %v\n", err)
		if errors.Is(err, sandbox.ErrRootOverlap) || errors.Is(err, sandbox.ErrPackages) {
			return exitInvalid // a --cwd that cannot be a session root, a bad --packages
		}
		return exitHost
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := sess.Close(closeCtx); err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: closing the session: %v\n", err)
		}
	}()

	env, closeContexts := prf.env(sess) // the profiles' tools (evalprofiles.go)
	defer closeContexts()

	write := newResultWriter(stdout).write
	var st *eventStream // --stream's, or nil
	if *streamFlag {
		st = newEventStream(stdout)
		defer st.close()
		write = st.result
	}

	// A session that does work between cells (sandbox.Session.Settle)
	// does it after each answer, not on the next line's path (issue 15).
	settle, _ := sess.(interface{ Settle() })
	lines := newLineSource(ctx, stdin, maxLineBytes) // evalstdin.go
	defer lines.stop()
	status := exitOK
	raise := func(code int) { status = max(status, code) }
	for n := 1; ; n++ {
		ln, interrupted := lines.next(ctx)
		if interrupted {
			fmt.Fprintln(stderr, "wasmeval eval: interrupted")
			return exitInterrupted
		}
		st.at(n)
		if ln.err != nil {
			if errors.Is(ln.err, io.EOF) {
				return status
			}
			fmt.Fprintf(stderr, "wasmeval eval: reading stdin: %v\n", ln.err)
			return exitHost
		}
		var v any
		switch {
		case ln.tooLong:
			raise(exitInvalid)
			v = errorLine{errorBody{"invalid_request", fmt.Sprintf("line %d: longer than %s; send smaller requests, or put large data in a file in the session root", n, sizeText(maxLineBytes))}}
		case len(bytes.TrimSpace(ln.text)) == 0:
			continue
		default:
			// The common line, an eval request, is read without
			// reflection (profiles.EvalRequest); any other line, and
			// every invalid one, takes the general path.
			req, ok := profiles.EvalRequest(ln.text)
			if !ok {
				pv, code, handled, text := profileLine(ctx, st.observe, env, n, ln.text, stderr)
				if handled {
					if ctx.Err() != nil {
						fmt.Fprintln(stderr, "wasmeval eval: interrupted")
						return exitInterrupted
					}
					raise(code)
					v = pv
					break
				}
				var err error
				if req, err = sandbox.DecodeRequest(text); err != nil {
					raise(exitInvalid)
					v = errorLine{errorBody{"invalid_request", fmt.Sprintf("line %d: %s", n, detail(err))}}
					break
				}
			}
			res, err := sess.Eval(st.observe(ctx), req)
			if err != nil {
				if ctx.Err() != nil {
					fmt.Fprintln(stderr, "wasmeval eval: interrupted")
					return exitInterrupted
				}
				raise(exitHost)
				fmt.Fprintf(stderr, "wasmeval eval: line %d: %v\n", n, err)
				v = errorLine{errorBody{"host_error", fmt.Sprintf("line %d: %v", n, err)}}
				break
			}
			if res.Details.IsError {
				raise(exitCellFailed)
			}
			v = res
		}
		if err := write(v); err != nil {
			fmt.Fprintf(stderr, "wasmeval eval: writing results: %v\n", err)
			return exitHost
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "wasmeval eval: interrupted")
			return exitInterrupted
		}
		if settle != nil && !lines.ended() { // not for a session about to close
			settle.Settle() // the work between cells, while the answer travels
		}
	}
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func detail(err error) string {
	var re *sandbox.RequestError
	if errors.As(err, &re) {
		return re.Detail()
	}
	return err.Error()
}

// line is one line of stdin, or the error that ended reading.
type line struct {
	text    []byte
	tooLong bool
	err     error
}

type lineStream struct {
	c     chan line
	done  chan struct{}
	ahead *line // taken from c by ended, for next
}

func (s *lineStream) stop() { close(s.done) }

// readLines reads r in a goroutine, so that a signal can stop eval while it
// waits for input. Lines longer than max are skipped and reported.
func readLines(r io.Reader, max int) *lineStream {
	s := &lineStream{c: make(chan line), done: make(chan struct{})}
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			ln := readLine(br, max)
			select {
			case s.c <- ln:
			case <-s.done:
				return
			}
			if ln.err != nil {
				return
			}
		}
	}()
	return s
}

func readLine(br *bufio.Reader, max int) line {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 { // room for "\r\n"
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return line{err: err}
		case errors.Is(err, io.EOF) && len(buf) == 0 && !tooLong:
			return line{err: io.EOF}
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		return line{text: buf, tooLong: tooLong}
	}
}
