package mcpserver_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TestToolErrorsReadAsTheRequestDecoders: a tool's bad arguments get the
// cell request decoder's words, as on the command line and HTTP, not the
// JSON-schema validator's.
func TestToolErrorsReadAsTheRequestDecoders(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	// The same cell, as a request to the library (and so eval lines and
	// HTTP), whose message the tools must repeat.
	libraryDetail := func(cell string) string {
		_, err := sandbox.DecodeRequest([]byte(`{"cells":[` + cell + `]}`))
		var re *sandbox.RequestError
		if !errors.As(err, &re) {
			t.Fatalf("the library took %s: %v", cell, err)
		}
		re.Path = strings.TrimPrefix(strings.TrimPrefix(re.Path, "cells[0]"), ".")
		return re.Detail()
	}
	for _, tc := range []struct {
		name, tool, args string
		want             string // "" means the library's message for the cell in args
	}{
		{"eval timeout 0", "eval", `{"cells":[{"language":"py","code":"1","timeout":0}]}`, "cells[0].timeout: 0 is out of range; use an integer from 1 to 600 seconds"},
		{"eval unknown field", "eval", `{"cells":[{"language":"py","code":"1","timout":5}]}`, `did you mean "timeout"?`},
		{"run_code timeoutMs 0", "run_code", `{"language":"js","code":"1","timeoutMs":0}`, "code_interpreter: timeoutMs: 0 is out of range; give a whole number of milliseconds from 1 to 600000"},
		{"run_code timeoutMs text", "run_code", `{"language":"js","code":"1","timeoutMs":"soon"}`, `timeoutMs: must be a number, not the string "soon"`},
		{"run_code older timeout", "run_code", `{"language":"js","code":"1","timeout":900}`, "timeout: not a field here: the CodeInterpreter interface times runs in milliseconds: give timeoutMs"},
		{"run_code language", "run_code", `{"language":"ruby","code":"1"}`, `language: "ruby" is not a language here`},
		{"run_code misspelt field", "run_code", `{"language":"js","code":"1","timeoutms":5}`, `unknown field "timeoutms" (did you mean "timeoutMs"?)`},
		{"run_code unknown field", "run_code", `{"language":"js","code":"1","fuel":5}`, `unknown field "fuel"; the fields are language, code, timeoutMs`},
		{"run_in_code_context no id", "run_in_code_context", `{"code":"1"}`, "contextId: missing; give the contextId that createContext returned"},
		{"run_in_code_context timeout", "run_in_code_context", `{"contextId":"x","code":"1","timeout":0.5}`, "timeout"},
		{"create_code_context field", "create_code_context", `{"lang":"py"}`, `unknown field "lang"`},
		{"delete_code_context id type", "delete_code_context", `{"contextId":7}`, "contextId: must be a string"},
		{"python timeout text", "python", `{"cells":[{"code":"1"}],"timeout":"soon"}`, "python: timeout: must be a number of seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				var m map[string]any
				json.Unmarshal([]byte(tc.args), &m)
				cell, _ := json.Marshal(m)
				want = libraryDetail(string(cell))
			}
			res := call(t, cs, tc.tool, json.RawMessage(tc.args))
			got := text(res)
			if !res.IsError || !strings.Contains(got, want) {
				t.Errorf("%s(%s) = %q (isError %v), want an error containing %q", tc.tool, tc.args, got, res.IsError, want)
			}
			if strings.Contains(got, "minimum") || strings.Contains(got, "validating") {
				t.Errorf("%s: the schema validator's words reached the model: %q", tc.tool, got)
			}
		})
	}
}
