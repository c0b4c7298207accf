package profiletest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// CodeResult is the seed's RunCodeResult as the suite reads it.
type CodeResult struct {
	Outputs  []map[string]json.RawMessage `json:"outputs"`
	ExitCode *int                         `json:"exitCode"`
	Error    *string                      `json:"error"`
}

// ciCaller sends code_interpreter calls for one case.
type ciCaller struct {
	t    *testing.T
	face Face
}

func (c *ciCaller) raw(tool, args string) ([]byte, string) {
	c.t.Helper()
	res, inv, err := c.face.Tool(context.Background(), tool, []byte(args))
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res, inv
}

// run sends a runCode or runInContext call that must be accepted.
func (c *ciCaller) run(tool, args string) CodeResult {
	c.t.Helper()
	res, inv := c.raw(tool, args)
	if inv != "" {
		c.t.Fatalf("%s %s refused: %s", tool, args, inv)
	}
	var r CodeResult
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatalf("result %s: %v", res, err)
	}
	if r.Outputs == nil || r.ExitCode == nil {
		c.t.Fatalf("result %s lacks outputs or exitCode", res)
	}
	var top map[string]json.RawMessage
	json.Unmarshal(res, &top)
	for k := range top {
		if k != "outputs" && k != "exitCode" && k != "error" {
			c.t.Errorf("result %s has the field %q; the seed's RunCodeResult has outputs, exitCode, error", res, k)
		}
	}
	if *r.ExitCode == 0 && r.Error != nil {
		c.t.Errorf("result %s: exitCode 0 with an error", res)
	}
	for _, o := range r.Outputs {
		var typ string
		json.Unmarshal(o["type"], &typ)
		want := map[string][]string{"stdout": {"type", "text"}, "stderr": {"type", "text"}, "display": {"type", "mime", "data"}, "result": {"type", "value"}}[typ]
		if want == nil {
			c.t.Errorf("output of type %q in %s", typ, res)
			continue
		}
		if len(o) != len(want) {
			c.t.Errorf("a %s output has fields %v, want %v", typ, keys(o), want)
		}
		for _, f := range want {
			if _, ok := o[f]; !ok {
				c.t.Errorf("a %s output lacks %q: %s", typ, f, res)
			}
		}
	}
	return r
}

// invalid sends a call that must be refused with a text holding want.
func (c *ciCaller) invalid(tool, args string, want ...string) {
	c.t.Helper()
	res, inv := c.raw(tool, args)
	if inv == "" {
		c.t.Fatalf("%s %s accepted, want a refusal holding %q; result %s", tool, args, want, res)
	}
	for _, w := range want {
		if !strings.Contains(inv, w) {
			c.t.Errorf("refusal %q does not hold %q", inv, w)
		}
	}
}

// create makes a context and returns its id.
func (c *ciCaller) create(args string) string {
	c.t.Helper()
	res, inv := c.raw("create_code_context", args)
	if inv != "" {
		c.t.Fatalf("create_code_context %s refused: %s", args, inv)
	}
	var r map[string]any
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatal(err)
	}
	id, _ := r["contextId"].(string)
	if id == "" || len(r) != 1 {
		c.t.Fatalf("create_code_context = %s, want {contextId}", res)
	}
	return id
}

func (c *ciCaller) delete(id string) {
	c.t.Helper()
	res, inv := c.raw("delete_code_context", `{"contextId": `+quoteJSON(id)+`}`)
	if inv != "" || strings.TrimSpace(string(res)) != `{"ok":true}` {
		c.t.Fatalf("delete_code_context = %s, refusal %q; want {\"ok\":true}", res, inv)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// outputs returns the outputs of type typ: their text, a display's
// decoded data prefixed with its MIME type and a space, or a result's
// value JSON.
func outputs(r CodeResult, typ string) []string {
	var out []string
	for _, o := range r.Outputs {
		var t string
		json.Unmarshal(o["type"], &t)
		if t != typ {
			continue
		}
		switch typ {
		case "stdout", "stderr":
			var s string
			json.Unmarshal(o["text"], &s)
			out = append(out, s)
		case "display":
			var mime, data string
			json.Unmarshal(o["mime"], &mime)
			json.Unmarshal(o["data"], &data)
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				b = []byte("(not base64: " + data + ")")
			}
			out = append(out, mime+" "+string(b))
		case "result":
			var b bytes.Buffer
			if json.Compact(&b, o["value"]) != nil {
				b.Write(o["value"])
			}
			out = append(out, b.String())
		}
	}
	return out
}

func wantOutputs(t *testing.T, r CodeResult, typ string, want ...string) {
	t.Helper()
	got := outputs(r, typ)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%s outputs = %q, want %q (all: %v)", typ, got, want, r.Outputs)
	}
}

func wantExit(t *testing.T, r CodeResult, code int, errHolds string) {
	t.Helper()
	if *r.ExitCode != code {
		t.Errorf("exitCode = %d, want %d (error %v)", *r.ExitCode, code, r.Error)
	}
	switch {
	case errHolds == "" && r.Error != nil:
		t.Errorf("error = %q, want none", *r.Error)
	case errHolds != "" && (r.Error == nil || !strings.Contains(*r.Error, errHolds)):
		t.Errorf("error = %v, want one holding %q", r.Error, errHolds)
	}
}

type ciCase struct {
	name string
	run  func(t *testing.T, c *ciCaller)
}

// RunCodeInterpreter runs the code_interpreter table (seed 004) on face:
// run_code, create_code_context, run_in_code_context and
// delete_code_context.
func RunCodeInterpreter(t *testing.T, face Face) {
	for _, tc := range codeCases() {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, &ciCaller{t: t, face: face}) })
	}
}

func codeCases() []ciCase {
	return []ciCase{
		{"runCode python: stdout and the last value as JSON", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "print('hi')\n{'a': [1, 2.5, None, True], 'b': 'x'}"}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "stdout", "hi\n")
			wantOutputs(t, r, "result", `{"a":[1,2.5,null,true],"b":"x"}`)
		}},
		{"runCode javascript: console.log and the last value", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "javascript", "code": "console.log('hi'); 6 * 7"}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "stdout", "hi\n")
			wantOutputs(t, r, "result", `42`)
			r = c.run("run_code", `{"language": "javascript", "code": "'it\\'s'"}`)
			wantOutputs(t, r, "result", `"it's"`)
			r = c.run("run_code", `{"language": "javascript", "code": "({a: [1, 'x', true], 'b-c': null, d: {e: 2.5}})"}`)
			wantOutputs(t, r, "result", `{"a":[1,"x",true],"b-c":null,"d":{"e":2.5}}`)
			r = c.run("run_code", `{"language": "javascript", "code": "class P { constructor() { this.x = 1 } }; new P()"}`)
			wantOutputs(t, r, "result", `"P { x: 1 }"`)
		}},
		// The value itself, not its inspected text: inspect cuts objects at
		// depth 2, arrays at 100 items and strings at 10,000 characters.
		{"runCode javascript: the result is the real value", func(t *testing.T, c *ciCaller) {
			for _, tc := range []struct{ code, want string }{
				{"({a: {b: {c: {d: [1, {e: 'deep'}]}}}})", `{"a":{"b":{"c":{"d":[1,{"e":"deep"}]}}}}`},
				{"Array.from({length: 150}, (_, i) => i).length", "150"},
				{"const xs = Array.from({length: 150}, (_, i) => i % 3)\nxs", "[" + strings.TrimSuffix(strings.Repeat("0,1,2,", 50), ",") + "]"},
				{"'x'.repeat(12000).length", "12000"},
				{"// a comment\nlet o = {}\n\n  // another\n  Object.assign(o, {'key with space': [true, null, -1.5e3]})", `{"key with space":[true,null,-1500]}`},
				{"await Promise.resolve(1)\n;({awaited: await Promise.resolve([2, 3])})", `{"awaited":[2,3]}`},
				{"Object.create(null)", `{}`},
			} {
				r := c.run("run_code", `{"language": "javascript", "code": `+quoteJSON(tc.code)+`}`)
				wantExit(t, r, 0, "")
				wantOutputs(t, r, "result", tc.want)
			}
			r := c.run("run_code", `{"language": "javascript", "code": "'y'.repeat(12000)"}`)
			if got := outputs(r, "result"); len(got) != 1 || got[0] != `"`+strings.Repeat("y", 12000)+`"` {
				t.Errorf("a 12,000-character string: result %.80q..., want the whole string", got)
			}
			// What JSON cannot hold as it is stays its repr.
			for _, tc := range []struct{ code, want string }{
				{"NaN", `"NaN"`},
				{"[1, undefined]", `"[ 1, undefined ]"`},
				{"new Set(['a'])", `"Set(1) { 'a' }"`},
				{"({f() {}})", `"{ f: [Function: f] }"`},
				{"10n", `"10n"`},
			} {
				r := c.run("run_code", `{"language": "javascript", "code": `+quoteJSON(tc.code)+`}`)
				wantOutputs(t, r, "result", tc.want)
			}
			// The last expression keeps its place: an error in it names
			// its own line and column.
			r = c.run("run_code", `{"language": "javascript", "code": "const a = 1\n  a + nothingHere"}`)
			wantExit(t, r, 1, "ReferenceError")
			if got := strings.Join(outputs(r, "stderr"), ""); !strings.Contains(got, ":2:7") {
				t.Errorf("stderr %q: want the error at line 2, column 7", got)
			}
		}},
		{"language aliases: py, js, typescript, ts", func(t *testing.T, c *ciCaller) {
			for _, tc := range []struct{ lang, code, want string }{
				{"py", "1 + 1", "2"},
				{"js", "[1, 2].length", "2"},
				{"typescript", "const n: number = 2; n * 3", "6"},
				{"ts", "let s: string = 'a'; s + 'b'", `"ab"`},
			} {
				r := c.run("run_code", `{"language": "`+tc.lang+`", "code": `+quoteJSON(tc.code)+`}`)
				wantExit(t, r, 0, "")
				wantOutputs(t, r, "result", tc.want)
			}
		}},
		{"result: the repr when JSON cannot hold the value", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "{1, 2}"}`)
			wantOutputs(t, r, "result", `"{1, 2}"`)
			r = c.run("run_code", `{"language": "python", "code": "{1: 'a'}"}`)
			wantOutputs(t, r, "result", `"{1: 'a'}"`)
			r = c.run("run_code", `{"language": "python", "code": "float('nan')"}`)
			wantOutputs(t, r, "result", `"nan"`)
		}},
		{"no result without a last expression, or for None", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "x = 1"}`)
			wantOutputs(t, r, "result")
			r = c.run("run_code", `{"language": "python", "code": "None"}`)
			wantOutputs(t, r, "result")
		}},
		{"display: one chunk per MIME type, data in base64", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "display({'n': 1})"}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "display", `application/json {"n": 1}`, "text/plain {'n': 1}")
			r = c.run("run_code", `{"language": "python", "code": "class H:\n    def _repr_html_(self): return '<b>x</b>'\ndisplay(H())"}`)
			got := outputs(r, "display")
			if len(got) != 2 || got[0] != "text/html <b>x</b>" || !strings.HasPrefix(got[1], "text/plain <") {
				t.Errorf("display outputs = %q, want text/html then text/plain", got)
			}
		}},
		{"stderr is its own chunk", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "import sys\nprint('o')\nsys.stderr.write('e\\n')\nprint('p')"}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "stdout", "o\n", "p\n")
			wantOutputs(t, r, "stderr", "e\n")
		}},
		{"a failure: exitCode 1 and the error", func(t *testing.T, c *ciCaller) {
			r := c.run("run_code", `{"language": "python", "code": "print('before')\n1 / 0"}`)
			wantExit(t, r, 1, "ZeroDivisionError: division by zero")
			wantOutputs(t, r, "stdout", "before\n")
			if s := outputs(r, "stderr"); len(s) != 1 || !strings.Contains(s[0], "Traceback") {
				t.Errorf("stderr = %q, want the traceback", s)
			}
			r = c.run("run_code", `{"language": "javascript", "code": "throw new TypeError('boom')"}`)
			wantExit(t, r, 1, "TypeError: boom")
		}},
		{"runCode is stateless", func(t *testing.T, c *ciCaller) {
			c.run("run_code", `{"language": "python", "code": "stateless = 1\nopen('f.txt', 'w').write('x')"}`)
			r := c.run("run_code", `{"language": "python", "code": "import os\nprint(os.path.exists('f.txt'))\nstateless"}`)
			wantOutputs(t, r, "stdout", "False\n")
			wantExit(t, r, 1, "NameError")
		}},
		{"timeoutMs is honoured to the millisecond", func(t *testing.T, c *ciCaller) {
			for _, lang := range []string{"python", "javascript"} {
				code := "while True: pass"
				if lang == "javascript" {
					code = "while (true) {}"
				}
				start := time.Now()
				r := c.run("run_code", `{"language": "`+lang+`", "code": "`+code+`", "timeoutMs": 300}`)
				d := time.Since(start)
				wantExit(t, r, 1, "timed out after 300 ms")
				// The interpreter starts before the timer does; the call's
				// own overhead (a session folder, HTTP, MCP) is small.
				if d < 300*time.Millisecond || d > 950*time.Millisecond {
					t.Errorf("%s: a 300 ms run took %v", lang, d)
				}
			}
			r := c.run("run_code", `{"language": "python", "code": "import time\ntime.sleep(0.2)\n'done'", "timeoutMs": 5000}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "result", `"done"`)
		}},
		{"contexts keep state until deleted", func(t *testing.T, c *ciCaller) {
			id := c.create(`{"language": "python"}`)
			c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "x = 20"}`)
			r := c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "x + 1"}`)
			wantExit(t, r, 0, "")
			wantOutputs(t, r, "result", "21")
			other := c.create(`{"language": "py"}`)
			r = c.run("run_in_code_context", `{"contextId": "`+other+`", "code": "x"}`)
			wantExit(t, r, 1, "NameError")
			c.delete(other)
			c.delete(id)
			c.invalid("run_in_code_context", `{"contextId": "`+id+`", "code": "x"}`, "code_interpreter", "contextId", "no such code context")
			c.invalid("delete_code_context", `{"contextId": "`+id+`"}`, "contextId", "no such code context")
		}},
		{"a javascript context", func(t *testing.T, c *ciCaller) {
			id := c.create(`{"language": "javascript"}`)
			defer c.delete(id)
			c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "var n = 5"}`)
			r := c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "console.log(n); n * 2"}`)
			wantOutputs(t, r, "stdout", "5\n")
			wantOutputs(t, r, "result", "10")
			// The value's slot is gone after the run: the context's globals
			// are its own.
			r = c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "({deep: {er: {still: [n]}}})"}`)
			wantOutputs(t, r, "result", `{"deep":{"er":{"still":[5]}}}`)
			r = c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "Object.getOwnPropertySymbols(globalThis).map(String).filter(s => s.includes('wasmeval')).length"}`)
			wantOutputs(t, r, "result", "0")
		}},
		{"a context survives a timeout", func(t *testing.T, c *ciCaller) {
			id := c.create(`{"language": "python"}`)
			defer c.delete(id)
			c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "kept = 'yes'"}`)
			r := c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "while True: pass", "timeoutMs": 250}`)
			wantExit(t, r, 1, "timed out after 250 ms")
			r = c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "kept"}`)
			wantOutputs(t, r, "result", `"yes"`)
		}},
		{"a python context's cwd", func(t *testing.T, c *ciCaller) {
			id := c.create(`{"language": "python", "cwd": "work/here"}`)
			defer c.delete(id)
			r := c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "import os\nos.getcwd().endswith('/work/here')"}`)
			wantOutputs(t, r, "result", "true")
		}},

		// Invalid calls.
		{"bad language", func(t *testing.T, c *ciCaller) {
			c.invalid("run_code", `{"language": "ruby", "code": "1"}`, "code_interpreter", "language", `"ruby"`, `"python"`, `"javascript"`)
			c.invalid("run_code", `{"language": "pyhton", "code": "1"}`, `did you mean "python"`)
			c.invalid("run_code", `{"code": "1"}`, "language", "missing")
			c.invalid("run_code", `{"language": 3, "code": "1"}`, "language", "must be a string")
			c.invalid("create_code_context", `{"language": "cobol"}`, "language", `"cobol"`)
		}},
		{"bad timeoutMs", func(t *testing.T, c *ciCaller) {
			for _, v := range []string{`0`, `-5`, `1.5`, `600001`} {
				c.invalid("run_code", `{"language": "python", "code": "1", "timeoutMs": `+v+`}`, "code_interpreter", "timeoutMs", "1 to 600000")
			}
			c.invalid("run_code", `{"language": "python", "code": "1", "timeoutMs": "100"}`, "timeoutMs", "must be a number")
			id := c.create(`{"language": "python"}`)
			defer c.delete(id)
			c.invalid("run_in_code_context", `{"contextId": "`+id+`", "code": "1", "timeoutMs": 0}`, "timeoutMs", "1 to 600000")
		}},
		{"missing or empty code", func(t *testing.T, c *ciCaller) {
			c.invalid("run_code", `{"language": "python"}`, "code", "missing")
			c.invalid("run_code", `{"language": "python", "code": " "}`, "code", "empty")
		}},
		{"unknown fields", func(t *testing.T, c *ciCaller) {
			c.invalid("run_code", `{"language": "python", "code": "1", "timeoutMS": 5}`, `unknown field "timeoutMS"`, `did you mean "timeoutMs"`)
			c.invalid("create_code_context", `{"language": "python", "cdw": "x"}`, `unknown field "cdw"`, `did you mean "cwd"`)
		}},
		{"unknown or missing context", func(t *testing.T, c *ciCaller) {
			c.invalid("run_in_code_context", `{"contextId": "ctx-nope", "code": "1"}`, "contextId", "no such code context", `"ctx-nope"`)
			c.invalid("run_in_code_context", `{"code": "1"}`, "contextId", "missing")
			c.invalid("delete_code_context", `{"contextId": "ctx-nope"}`, "no such code context")
			c.invalid("delete_code_context", `{}`, "contextId", "missing")
		}},
		{"a context's language is its own", func(t *testing.T, c *ciCaller) {
			id := c.create(`{"language": "python"}`)
			defer c.delete(id)
			c.invalid("run_in_code_context", `{"contextId": "`+id+`", "code": "1", "language": "javascript"}`, "language", "not a field here", "the language it was created with")
			c.invalid("run_in_code_context", `{"contextId": "`+id+`", "code": "1", "language": "python"}`, "language", "not a field here")
		}},
		// wasmeval's earlier shapes, which the seed's interface does not
		// have: refused, naming the field and what to give instead.
		{"older shapes are refused", func(t *testing.T, c *ciCaller) {
			c.invalid("create_code_context", `{}`, "code_interpreter", "language", "missing", `"python"`)
			c.invalid("create_code_context", `{"cwd": "work"}`, "language", "missing")
			c.invalid("create_code_context", `{"language": null}`, "language", "missing")
			c.invalid("create_code_context", `{"language": "python", "id": "mine"}`, "id", "not a field here", "contextId")
			c.invalid("create_code_context", `{"language": "python", "timeout": 5}`, "timeout", "timeoutMs")
			c.invalid("run_code", `{"language": "python", "code": "1", "timeout": 5}`, "timeout", "not a field here", "milliseconds", "timeoutMs")
			id := c.create(`{"language": "python"}`)
			defer c.delete(id)
			c.invalid("run_in_code_context", `{"id": "`+id+`", "code": "1"}`, "id", "not a field here", `"contextId"`)
			c.invalid("run_in_code_context", `{"contextId": "`+id+`", "code": "1", "timeout": 5}`, "timeout", "timeoutMs")
			c.invalid("delete_code_context", `{"id": "`+id+`"}`, "id", "contextId")
			// The context is still there: none of those touched it.
			r := c.run("run_in_code_context", `{"contextId": "`+id+`", "code": "1 + 1"}`)
			wantOutputs(t, r, "result", "2")
		}},
		{"bad cwd", func(t *testing.T, c *ciCaller) {
			c.invalid("create_code_context", `{"language": "python", "cwd": "../out"}`, "cwd", `".."`)
			c.invalid("create_code_context", `{"language": "javascript", "cwd": "work"}`, "cwd", "python")
		}},
	}
}
