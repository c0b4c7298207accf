package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/wasmeval/wasmeval/profiles"
)

const profileLinesUsage = `  A line may instead be a call of another profile's tool: "profile" names
  the tool, or the line's fields say which it is.
  python (the Jupyter-backed python tool's shape): cells without a language,
    {"cells": [{"code": "x = 6 * 7\nx", "title": "t"}], "timeout": 30,
     "cwd": "data", "reset": false, "kernelMode": "session"}
    in the session's Python (kernelMode per-call: a fresh interpreter on its
    files); timeout is for the call, in seconds, clamped to 1..600 (default
    30). Its result line is {"content", "details"}.
  evaluate_python (the asteval tool's shape): "code" (or "globals", "reads",
  "writes") and no "cells" or "language", in a fresh namespace of the
  session's Python, sharing its files:
    {"profile": "evaluate_python", "code": "total = 6\ntotal",
     "globals": {"n": "3"}, "reads": [{"path": "in.txt"}],
     "writes": [{"path": "out.txt", "content": "{total}", "mode": "create"}]}
    Its result line is {"value_repr", "stdout", "stderr", "globals",
    "reads", "writes"}.
  code_interpreter (the CodeInterpreter interface), its tools:
    run_code             {"language": "python", "code": "6 * 7", "timeoutMs": 5000}
    create_code_context  {"language": "python"} -> {"contextId"}
    run_in_code_context  {"contextId": "ctx-...", "code": "x = 1"}
    delete_code_context  {"contextId": "ctx-..."} -> {"ok": true}
    A run's result line is {"outputs", "exitCode", "error"?}; contexts last
    until deleted or the end of input.
  A failed run (a cell that failed, stderr and no value, exitCode 1) counts
  as a failed cell.
`

// profileFlags are eval's flags of the profiles: --kernel-mode.
type profileFlags struct {
	kernelMode kernelModeFlag
}

func (f *profileFlags) register(fs *flag.FlagSet) { f.kernelMode.register(fs) }

// env returns the profiles' Env of eval's session, and a function that
// closes the code contexts made through it.
func (f *profileFlags) env(sess evalSession) (*profiles.Env, func()) {
	env := &profiles.Env{Session: sess, KernelMode: string(f.kernelMode)}
	ss, ok := sess.(*sandboxSession)
	if !ok {
		return env, func() {}
	}
	env.Root = ss.Root()
	env.NewSession = profiles.FreshSessions(ss.Session)
	contexts := profiles.NewContexts(env.NewSession)
	// A context may name its Python backend ("python"), within what the
	// session's options allow (--python-backend-choice).
	contexts.Backend = profiles.FreshBackendSessions(ss.Session)
	env.Contexts = contexts
	return env, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		contexts.Close(ctx)
	}
}

// profileLine runs a line of a profile other than eval, under the context
// observe makes (--stream's events). handled false means the line is an
// eval request: text is what sandbox.DecodeRequest reads. code is the exit
// status the line raises.
func profileLine(ctx context.Context, observe func(context.Context) context.Context, env *profiles.Env, n int, line []byte, stderr io.Writer) (v any, code int, handled bool, text []byte) {
	tool, args, err := profiles.DecodeLine(line)
	if err != nil {
		return errorLine{errorBody{"invalid_request", fmt.Sprintf("line %d: %s", n, profiles.Detail(err))}}, exitInvalid, true, nil
	}
	if tool == nil {
		return nil, exitOK, false, args
	}
	res, failed, err := tool.Run(observe(ctx), env, args)
	var pe *profiles.Error
	switch {
	case errors.As(err, &pe):
		return errorLine{errorBody{"invalid_request", fmt.Sprintf("line %d: %s", n, pe.Detail())}}, exitInvalid, true, nil
	case err != nil:
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "wasmeval eval: line %d: %v\n", n, err)
		}
		return errorLine{errorBody{"host_error", fmt.Sprintf("line %d: %v", n, err)}}, exitHost, true, nil
	case failed:
		return res, exitCellFailed, true, nil
	}
	return res, exitOK, true, nil
}
