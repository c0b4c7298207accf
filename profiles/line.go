package profiles

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/wasmeval/wasmeval/sandbox"
)

// EvalRequest reads line when it is an eval request of the common shape
// (sandbox.ScanRequest's: {"cells": [...]} with a language in every
// cell, valid), which is what DecodeLine and sandbox.DecodeRequest would
// make of it, in a few microseconds. ok false means the line takes
// DecodeLine's path.
func EvalRequest(line []byte) (req sandbox.Request, ok bool) {
	if req, ok = sandbox.ScanRequest(line); !ok || cellsClaimed() {
		return sandbox.Request{}, false
	}
	return req, true
}

// cellsClaimed reports whether a tool's Detect claims a line whose only
// field is "cells", each with a language: then EvalRequest leaves such
// lines to DecodeLine. Detect decides by the fields a line has, so one
// such line stands for all.
var cellsClaimed = sync.OnceValue(func() bool {
	m := map[string]json.RawMessage{"cells": json.RawMessage(`[{"language":"py","code":"x"}]`)}
	for _, t := range tools {
		if t.Detect != nil && t.Detect(m) {
			return true
		}
	}
	return false
})

// DecodeLine reads one `wasmeval eval` line. A "profile" field names the
// line's profile (or tool); without one, a line that a Tool's Detect
// claims is that tool's call (python's: "cells" none of which has a
// "language"; evaluate_python's: "code", "globals", "reads" or "writes",
// and neither "cells" nor "language"; run_code's: "language" and "code";
// create_code_context's: "language" without "code"; run_in_code_context's:
// "contextId" and "code"; delete_code_context's: "contextId" alone), and
// anything else is an eval request. For an eval request tool is nil and args is
// the request with any "profile" field removed, for
// sandbox.DecodeRequest and its messages; otherwise args are the tool's
// arguments, for Tool.Run. Errors are *Error.
func DecodeLine(data []byte) (tool *Tool, args []byte, err error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil, data, nil // not an object: DecodeRequest says what is wrong
	}
	raw, named := m["profile"]
	if !named {
		for _, t := range tools {
			if t.Detect != nil && t.Detect(m) {
				return &t, data, nil
			}
		}
		return nil, data, nil
	}
	valid := fmt.Sprintf("use %q (cells) or %s", Eval, strings.Join(quoteAll(ToolNames()), ", "))
	var name string
	if kind(raw) != "string" || json.Unmarshal(raw, &name) != nil {
		return nil, nil, &Error{Profile: "eval line", Path: "profile", Message: fmt.Sprintf("must be a string, not %s; %s", describe(raw), valid)}
	}
	delete(m, "profile")
	args, _ = json.Marshal(m)
	if name == Eval {
		return nil, args, nil
	}
	if t, ok := LookupTool(name); ok {
		return &t, args, nil
	}
	if name == CodeInterpreter {
		return nil, nil, &Error{Profile: name, Path: "profile", Message: fmt.Sprintf("name one of its tools: %s", strings.Join(quoteAll(ProfileTools(CodeInterpreter)), ", "))}
	}
	return nil, nil, &Error{Profile: "eval line", Path: "profile", Message: fmt.Sprintf("unknown profile %s; %s", quote(name), valid)}
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
