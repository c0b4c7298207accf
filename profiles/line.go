package profiles

import (
	"encoding/json"
	"fmt"
)

// Line is one decoded `wasmeval eval` line of a profile other than eval.
type Line struct {
	// Profile names the line's profile.
	Profile string
	// EvaluatePython is the call of an evaluate_python line.
	EvaluatePython EvalParams
}

var lineProfiles = map[string]bool{Eval: true, EvaluatePython: true}

// DecodeLine reads one `wasmeval eval` line. A "profile" field names the
// line's profile; without one, a line with neither "cells" nor "language"
// but with evaluate_python's "code", "globals", "reads" or "writes" is an
// evaluate_python call, and anything else is an eval
// request. eval is true for an eval request: text is then the request
// with any "profile" field removed, for sandbox.DecodeRequest and its
// messages. Errors are *Error.
func DecodeLine(data []byte) (l Line, eval bool, text []byte, err error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return Line{}, true, data, nil // not an object: DecodeRequest says what is wrong
	}
	raw, named := m["profile"]
	name := ""
	if named {
		if kind(raw) != "string" || json.Unmarshal(raw, &name) != nil {
			return Line{}, false, nil, &Error{Profile: "eval line", Path: "profile", Message: fmt.Sprintf("must be a string, not %s; use %q or %q", describe(raw), Eval, EvaluatePython)}
		}
		delete(m, "profile")
	} else {
		_, cells := m["cells"]
		_, lang := m["language"]
		asteval := false
		for _, f := range evalFields {
			_, there := m[f]
			asteval = asteval || there
		}
		if asteval && !cells && !lang {
			name = EvaluatePython
		} else {
			name = Eval
		}
	}
	switch {
	case name == Eval:
		if !named {
			return Line{}, true, data, nil
		}
		text, _ := json.Marshal(m)
		return Line{Profile: Eval}, true, text, nil
	case name == EvaluatePython:
		p, err := decodeEvaluatePython(m)
		if err != nil {
			return Line{}, false, nil, err
		}
		return Line{Profile: EvaluatePython, EvaluatePython: p}, false, nil, nil
	case contains(Names, name):
		return Line{}, false, nil, &Error{Profile: name, Path: "profile", Message: fmt.Sprintf("the %s profile is not available on eval lines yet; use %q or %q", name, Eval, EvaluatePython)}
	}
	return Line{}, false, nil, &Error{Profile: "eval line", Path: "profile", Message: fmt.Sprintf("unknown profile %s; use %q (cells) or %q ({code, globals, reads, writes})", quote(name), Eval, EvaluatePython)}
}
