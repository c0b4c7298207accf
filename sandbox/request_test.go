package sandbox_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want sandbox.Request
	}{
		{
			name: "minimal",
			in:   `{"cells":[{"language":"py","code":"print(1)"}]}`,
			want: sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(1)", TimeoutSeconds: 30}}},
		},
		{
			name: "every field",
			in:   `{"cells":[{"language":"js","code":"1","title":"t","timeout":600,"reset":true}]}`,
			want: sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1", Title: "t", TimeoutSeconds: 600, Reset: true}}},
		},
		{
			name: "nulls mean absent",
			in:   `{"cells":[{"language":"py","code":"x","title":null,"timeout":null,"reset":null}]}`,
			want: sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x", TimeoutSeconds: 30}}},
		},
		{
			name: "whole numbers written as floats",
			in:   `{"cells":[{"language":"py","code":"x","timeout":1.0},{"language":"py","code":"y","timeout":6e2}]}`,
			want: sandbox.Request{Cells: []sandbox.Cell{
				{Language: "py", Code: "x", TimeoutSeconds: 1},
				{Language: "py", Code: "y", TimeoutSeconds: 600},
			}},
		},
		{
			name: "typescript",
			in:   `{"cells":[{"language":"ts","code":"const x: number = 1"}]}`,
			want: sandbox.Request{Cells: []sandbox.Cell{{Language: "ts", Code: "const x: number = 1", TimeoutSeconds: 30}}},
		},
		{
			name: "white space around",
			in:   " \n\t{\"cells\":[{\"language\":\"py\",\"code\":\"x\"}]}\r\n ",
			want: sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x", TimeoutSeconds: 30}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sandbox.DecodeRequest([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the error's Detail
	}{
		{"empty", ``, `empty request; send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"bad JSON", `{"cells":[}`, `not valid JSON: invalid character '}' looking for beginning of value (at byte 11); send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"not JSON at all", "print(1)\n", `not JSON: it starts with "print(1)\n"; send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"long non-JSON", strings.Repeat("é", 30), `not JSON: it starts with "` + strings.Repeat("é", 20) + `..."; send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"truncated JSON", `{"cells":[`, `not valid JSON: the JSON ends too early; send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"not an object", `[1]`, `an array is not an object; the request must be a JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"trailing data", `{"cells":[{"language":"py","code":"x"}]} {}`, `unexpected data after the request, which ends at byte 40; send exactly one JSON object per request`},
		{"unknown top-level field", `{"cells":[],"cell":1}`, `unknown field "cell"; the only field here is "cells"`},
		{"missing cells", `{}`, `cells: missing; give at least one cell, like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"cells not an array", `{"cells":{"language":"py"}}`, `cells: must be an array of cells, not an object; like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"no cells", `{"cells":[]}`, `cells: empty; give at least one cell, like {"cells":[{"language":"py","code":"print(1)"}]}`},
		{"too many cells", `{"cells":[` + strings.Repeat(`{"language":"py","code":"x"},`, 100) + `{"language":"py","code":"x"}]}`, `cells: 101 cells is too many; send at most 100 per request`},
		{"cell not an object", `{"cells":["print(1)"]}`, `cells[0]: the string "print(1)" is not an object; each cell must be a JSON object like {"language":"py","code":"print(1)"}`},
		{"typo in a field", `{"cells":[{"language":"py","code":"x","timout":5}]}`, `cells[0]: unknown field "timout" (did you mean "timeout"?); the fields are language, code, title, timeout, reset, fuel`},
		{"unknown field", `{"cells":[{"language":"py","code":"x","stdin":"y"}]}`, `cells[0]: unknown field "stdin"; the fields are language, code, title, timeout, reset, fuel`},
		{"missing language", `{"cells":[{"code":"x"}]}`, `cells[0].language: missing; use "py", "js" or "ts"`},
		{"language not a string", `{"cells":[{"language":1,"code":"x"}]}`, `cells[0].language: must be a string, not the number 1; use "py", "js" or "ts"`},
		{"unknown language", `{"cells":[{"language":"ruby","code":"x"}]}`, `cells[0].language: "ruby" is not supported; use "py" (Python), "js" (JavaScript) or "ts" (TypeScript)`},
		{"typescript spelled out", `{"cells":[{"language":"TypeScript","code":"x"}]}`, `cells[0].language: "TypeScript" is not supported; use "ts" for TypeScript`},
		{"fuel on a ts cell", `{"cells":[{"language":"ts","code":"x","fuel":100}]}`, `cells[0].fuel: fuel is metered for Python cells only; a ts cell is bounded by its timeout`},
		{"long language name", `{"cells":[{"language":"python","code":"x"}]}`, `cells[0].language: "python" is not supported; use "py" for Python`},
		{"javascript", `{"cells":[{"language":"py","code":"x"},{"language":"JavaScript","code":"x"}]}`, `cells[1].language: "JavaScript" is not supported; use "js" for JavaScript`},
		{"empty language", `{"cells":[{"language":"","code":"x"}]}`, `cells[0].language: missing or empty; use "py", "js" or "ts"`},
		{"missing code", `{"cells":[{"language":"py"}]}`, `cells[0].code: missing; give the code to run as a string`},
		{"empty code", `{"cells":[{"language":"py","code":" \n "}]}`, `cells[0].code: empty; give the code to run`},
		{"code not a string", `{"cells":[{"language":"py","code":["x"]}]}`, `cells[0].code: must be a string, not an array; give the code to run as a string`},
		{"title not a string", `{"cells":[{"language":"py","code":"x","title":5}]}`, `cells[0].title: must be a string, not the number 5; give the title as a string, or leave it out`},
		{"reset not a boolean", `{"cells":[{"language":"py","code":"x","reset":"yes"}]}`, `cells[0].reset: must be true or false, not the string "yes"`},
		{"timeout too big", `{"cells":[{"language":"py","code":"x"},{"language":"py","code":"x","timeout":900}]}`, `cells[1].timeout: 900 is out of range; use an integer from 1 to 600 seconds`},
		{"timeout zero", `{"cells":[{"language":"py","code":"x","timeout":0}]}`, `cells[0].timeout: 0 is out of range; use an integer from 1 to 600 seconds`},
		{"timeout negative", `{"cells":[{"language":"py","code":"x","timeout":-5}]}`, `cells[0].timeout: -5 is out of range; use an integer from 1 to 600 seconds`},
		{"timeout fraction", `{"cells":[{"language":"py","code":"x","timeout":1.5}]}`, `cells[0].timeout: 1.5 is not a whole number; use an integer from 1 to 600 seconds`},
		{"timeout huge", `{"cells":[{"language":"py","code":"x","timeout":1e999}]}`, `cells[0].timeout: 1e999 is out of range; use an integer from 1 to 600 seconds`},
		{"timeout as a string", `{"cells":[{"language":"py","code":"x","timeout":"30"}]}`, `cells[0].timeout: must be a number, not the string "30"; use an integer from 1 to 600 seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.DecodeRequest([]byte(tt.in))
			var re *sandbox.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v (%T), want a *RequestError", err, err)
			}
			if got := re.Detail(); got != tt.want {
				t.Errorf("detail:\n got %s\nwant %s", got, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "sandbox: invalid request: ") {
				t.Errorf("error %q lacks the prefix", err)
			}
		})
	}
}
