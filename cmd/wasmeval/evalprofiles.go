package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wasmeval/wasmeval/profiles"
)

const profileLinesUsage = `  A line may instead be a call of another profile: "profile" names it, or
  a line with "code" (or "globals", "reads", "writes") and no "cells" or
  "language" is an evaluate_python call (the asteval tool's shape, in a
  fresh namespace of the session's Python, sharing its files):
    {"profile": "evaluate_python", "code": "total = 6\ntotal",
     "globals": {"n": "3"}, "reads": [{"path": "in.txt"}],
     "writes": [{"path": "out.txt", "content": "{total}", "mode": "create"}]}
  Its result line is {"value_repr", "stdout", "stderr", "globals", "reads",
  "writes"}; a failed run (stderr and no value) counts as a failed cell.
`

// profileLine runs a line of a profile other than eval, under the context
// observe makes (--stream's events). handled false means the line is an
// eval request: text is what sandbox.DecodeRequest reads. code is the exit
// status the line raises.
func profileLine(ctx context.Context, observe func(context.Context) context.Context, sess evalSession, n int, line []byte, stderr io.Writer) (v any, code int, handled bool, text []byte) {
	tool, args, err := profiles.DecodeLine(line)
	if err != nil {
		return errorLine{errorBody{"invalid_request", fmt.Sprintf("line %d: %s", n, profiles.Detail(err))}}, exitInvalid, true, nil
	}
	if tool == nil {
		return nil, exitOK, false, args
	}
	res, failed, err := tool.Run(observe(ctx), sess, args)
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
