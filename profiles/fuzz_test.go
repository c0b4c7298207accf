package profiles_test

import (
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/profiles"
)

// FuzzDecodeEvaluatePython checks that any input decodes to a valid call
// or to an *Error, without panicking, and that lines decode the same way.
func FuzzDecodeEvaluatePython(f *testing.F) {
	for _, s := range []string{
		profiles.EvaluatePythonExample,
		`{"code": "1", "globals": {"n": "3"}, "reads": [{"path": "a/b"}], "writes": [{"path": "c", "content": "{n}", "mode": "append"}]}`,
		`{"code": 1}`, `[]`, `{"profile": "evaluate_python", "code": ""}`, `{"globals": {"": "x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.DecodeEvaluatePython(data)
		var pe *profiles.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not an *Error", err)
		}
		if err == nil {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("decoded %q but Validate says %v", data, verr)
			}
		}
		if _, _, err := profiles.DecodeLine(data); err != nil && !errors.As(err, &pe) {
			t.Fatalf("DecodeLine error %v is not an *Error", err)
		}
	})
}

// FuzzDecodePython checks that any input decodes to a valid python call
// or to an *Error, without panicking.
func FuzzDecodePython(f *testing.F) {
	for _, s := range []string{
		profiles.PythonExample, `{"cells": [{"code": "1", "title": "t"}], "timeout": 0.5, "cwd": "a", "reset": true, "kernelMode": "per-call"}`,
		`{"cells": []}`, `{"cells": [{"language": "py"}]}`, `{"timeout": "x"}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.DecodePython(data)
		var pe *profiles.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not an *Error", err)
		}
		if err == nil {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("decoded %q but Validate says %v", data, verr)
			}
			if s := p.TimeoutSeconds(); s < profiles.MinPythonTimeout || s > profiles.MaxPythonTimeout {
				t.Fatalf("timeout %v is not clamped", s)
			}
		}
	})
}

// FuzzDecodeCodeInterpreter checks that any input decodes, for each of
// code_interpreter's tools, to a call or to an *Error, without panicking.
func FuzzDecodeCodeInterpreter(f *testing.F) {
	for _, s := range []string{
		`{"language": "python", "code": "1", "timeoutMs": 5}`, `{"language": "js"}`, `{"contextId": "c", "code": "1"}`,
		`{"contextId": "c"}`, `{"id": "c", "language": "ts", "code": "1", "timeout": 3}`, `{"timeoutMs": 1.5}`, `{"language": "python", "cwd": "../x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var pe *profiles.Error
		check := func(err error) {
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("error %v is not an *Error", err)
			}
		}
		p, err := profiles.DecodeRunCode(data)
		check(err)
		if err == nil && (p.TimeoutMs < 0 || p.TimeoutMs > profiles.MaxCodeTimeoutMs) {
			t.Fatalf("timeoutMs %d out of range", p.TimeoutMs)
		}
		_, err = profiles.DecodeCreateContext(data)
		check(err)
		_, err = profiles.DecodeRunInContext(data)
		check(err)
		_, err = profiles.DecodeDeleteContext(data)
		check(err)
		for _, tool := range profiles.Tools() {
			check(tool.Check(data))
		}
	})
}
