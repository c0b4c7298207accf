// Package profiletest is the conformance suite of the profiles, written
// from the seed documents of the tools they copy: one table per profile
// that every face (the library, `wasmeval eval` lines, serve's HTTP API,
// MCP) runs through its own Face, like testing/slogtest. It is for tests
// only.
package profiletest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Face is one way to reach a session with a profile's calls.
type Face struct {
	// Call sends one call (a JSON object of the profile's arguments) and
	// returns the result's JSON, or, for a call the face refused as
	// invalid, the text the caller sees (invalid non-empty). err is a
	// failure of the face itself.
	Call func(ctx context.Context, args []byte) (result []byte, invalid string, err error)
	// Tool sends one call of the tool named name, as Call does; the
	// python and code_interpreter tables use it.
	Tool func(ctx context.Context, name string, args []byte) (result []byte, invalid string, err error)
	// Root returns the session root of the session the calls run in,
	// after a first call, so the suite can put files there and look at
	// what the calls wrote.
	Root func() string
}

// EvalResult is the evaluate_python result as the suite reads it, with
// value_repr's null kept apart from "".
type EvalResult struct {
	ValueRepr *string           `json:"value_repr"`
	Stdout    string            `json:"stdout"`
	Stderr    string            `json:"stderr"`
	Globals   map[string]string `json:"globals"`
	Reads     []map[string]any  `json:"reads"`
	Writes    []map[string]any  `json:"writes"`
}

// evalCase is one row of the evaluate_python table.
type evalCase struct {
	name string
	// files are put in a fresh folder of the session root, the case's
	// own; paths in args are relative to it when the case's code and
	// paths use the {dir} placeholder.
	files map[string]string
	args  string
	// invalid, when set, are the texts the refusal must hold.
	invalid []string
	check   func(t *testing.T, r EvalResult, dir string)
	// after checks the files once the call is done.
	after func(t *testing.T, dir string)
}

// RunEvaluatePython runs the evaluate_python table on face.
func RunEvaluatePython(t *testing.T, face Face) {
	ctx := context.Background()
	if _, inv, err := face.Call(ctx, []byte(`{"code": "secret = 1\n1"}`)); err != nil || inv != "" {
		t.Fatalf("first call: invalid %q, err %v", inv, err)
	}
	root := face.Root()
	for i, c := range evalCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := "case" + itoa(i)
			for name, content := range c.files {
				p := filepath.Join(root, dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := strings.ReplaceAll(c.args, "{dir}", dir)
			if !json.Valid([]byte(args)) {
				t.Fatalf("the case's args are not JSON: %s", args)
			}
			res, inv, err := face.Call(ctx, []byte(args))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if c.invalid != nil {
				if inv == "" {
					t.Fatalf("call accepted, want a refusal holding %q; result %s", c.invalid, res)
				}
				for _, want := range c.invalid {
					if !strings.Contains(inv, want) {
						t.Errorf("refusal %q does not hold %q", inv, want)
					}
				}
			} else {
				if inv != "" {
					t.Fatalf("call refused: %s", inv)
				}
				var r EvalResult
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatalf("result %s: %v", res, err)
				}
				var raw map[string]json.RawMessage
				json.Unmarshal(res, &raw)
				for _, f := range []string{"value_repr", "stdout", "stderr", "globals", "reads", "writes"} {
					if _, ok := raw[f]; !ok {
						t.Errorf("result %s has no %q field", res, f)
					}
				}
				for _, f := range []string{"globals", "reads", "writes"} {
					if string(raw[f]) == "null" {
						t.Errorf("result's %q is null, want an empty %s", f, map[bool]string{true: "object", false: "array"}[f == "globals"])
					}
				}
				if c.check != nil {
					c.check(t, r, dir)
				}
			}
			if c.after != nil {
				c.after(t, filepath.Join(root, dir))
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func str(s string) *string { return &s }

func wantRepr(t *testing.T, r EvalResult, want *string) {
	t.Helper()
	switch {
	case want == nil && r.ValueRepr != nil:
		t.Errorf("value_repr = %q, want null", *r.ValueRepr)
	case want != nil && r.ValueRepr == nil:
		t.Errorf("value_repr = null, want %q (stderr %q)", *want, r.Stderr)
	case want != nil && *r.ValueRepr != *want:
		t.Errorf("value_repr = %q, want %q", *r.ValueRepr, *want)
	}
}

func wantEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading %s: %v", path, err)
		return
	}
	if string(b) != want {
		t.Errorf("%s holds %q, want %q", filepath.Base(path), b, want)
	}
}

func wantNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s exists; the write should have been discarded", filepath.Base(path))
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

func evalCases() []evalCase {
	long := strings.Repeat("x", 2001)
	deep := strings.Repeat("d/", 16) + "f.txt"
	return []evalCase{
		{name: "expression value", args: `{"code": "1 + 2"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, str("3"))
				wantEq(t, "stdout", r.Stdout, "")
				wantEq(t, "stderr", r.Stderr, "")
			}},
		{name: "seed example", args: `{"code": "total = 0\nfor value in range(5):\n    total += value\nprint(total)\ntotal", "globals": {}, "reads": [], "writes": []}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, str("10"))
				wantEq(t, "stdout", r.Stdout, "10\n")
				wantEq(t, "globals[total]", r.Globals["total"], "10")
				wantEq(t, "globals[value]", r.Globals["value"], "4")
			}},
		{name: "defaults: only code", args: `{"code": "x = 'a'"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, nil)
				wantEq(t, "globals[x]", r.Globals["x"], "a")
				wantEq(t, "len(reads)", len(r.Reads), 0)
				wantEq(t, "len(writes)", len(r.Writes), 0)
			}},
		{name: "None is no value", args: `{"code": "None"}`,
			check: func(t *testing.T, r EvalResult, _ string) { wantRepr(t, r, nil) }},
		{name: "repr of the last expression", args: `{"code": "'a' * 2"}`,
			check: func(t *testing.T, r EvalResult, _ string) { wantRepr(t, r, str("'aa'")) }},
		{name: "globals decoded from JSON", args: `{"code": "[n * 2, name, xs[1], none, f, ok]", "globals": {"n": "3", "name": "\"Ada\"", "xs": "[1, 2]", "none": "null", "f": "1.5", "ok": "true"}}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, str("[6, 'Ada', 2, None, 1.5, True]"))
				for k, v := range map[string]string{"n": "3", "name": "Ada", "xs": "[1, 2]", "none": "null", "f": "1.5", "ok": "true"} {
					wantEq(t, "globals["+k+"]", r.Globals[k], v)
				}
			}},
		{name: "globals that JSON cannot hold get !repr:", args: `{"code": "import math\ns = {1}\nt = (1, 2)\nnan = float('nan')\nd = {1: 2}"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantEq(t, "globals[s]", r.Globals["s"], "!repr:{1}")
				wantEq(t, "globals[t]", r.Globals["t"], "!repr:(1, 2)")
				wantEq(t, "globals[nan]", r.Globals["nan"], "!repr:nan")
				wantEq(t, "globals[d]", r.Globals["d"], "!repr:{1: 2}")
				if !strings.HasPrefix(r.Globals["math"], "!repr:<module 'math'") {
					t.Errorf("globals[math] = %q, want the module's repr", r.Globals["math"])
				}
				if _, ok := r.Globals["read_text"]; ok {
					t.Error("the helpers are listed among the globals")
				}
			}},
		{name: "a fresh namespace per call", args: `{"code": "secret"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				// The first call of the suite ran in the same session; a
				// name of an earlier call is not defined.
				wantRepr(t, r, nil)
				if !strings.Contains(r.Stderr, "NameError") {
					t.Errorf("stderr = %q, want a NameError", r.Stderr)
				}
			}},
		{name: "reads injected under their path", files: map[string]string{"data/a.txt": "hello"},
			args: `{"code": "globals()['{dir}/data/a.txt'].upper()", "reads": [{"path": "{dir}//data/a.txt "}]}`,
			check: func(t *testing.T, r EvalResult, dir string) {
				wantRepr(t, r, str("'HELLO'"))
				if len(r.Reads) != 1 || r.Reads[0]["path"] != dir+"/data/a.txt" {
					t.Errorf("reads = %v, want the normalized path", r.Reads)
				}
				wantEq(t, "globals[path]", r.Globals[dir+"/data/a.txt"], "hello")
			}},
		{name: "read_text in the code", files: map[string]string{"b.txt": "from a file"},
			args:  `{"code": "read_text('{dir}/b.txt')"}`,
			check: func(t *testing.T, r EvalResult, _ string) { wantRepr(t, r, str("'from a file'")) }},
		{name: "writes templated over the final globals", args: `{"code": "total = 6", "globals": {"who": "\"Ada\""}, "writes": [{"path": "{dir}/out/r.txt", "content": "{who}: total={total} {{literal}}"}]}`,
			check: func(t *testing.T, r EvalResult, dir string) {
				if len(r.Writes) != 1 {
					t.Fatalf("writes = %v, want one", r.Writes)
				}
				wantEq(t, "writes[0].content", r.Writes[0]["content"], any("Ada: total=6 {literal}"))
				wantEq(t, "writes[0].mode", r.Writes[0]["mode"], any("create"))
				wantEq(t, "writes[0].path", r.Writes[0]["path"], any(dir+"/out/r.txt"))
			},
			after: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "out", "r.txt"), "Ada: total=6 {literal}")
			}},
		{name: "overwrite and append", files: map[string]string{"o.txt": "old", "a.txt": "one"},
			args: `{"code": "1", "writes": [{"path": "{dir}/o.txt", "content": "new", "mode": "overwrite"}, {"path": "{dir}/a.txt", "content": "+two", "mode": "append"}]}`,
			after: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "o.txt"), "new")
				wantFile(t, filepath.Join(dir, "a.txt"), "one+two")
			}},
		{name: "create fails if the file exists", files: map[string]string{"e.txt": "keep"},
			args:    `{"code": "1", "writes": [{"path": "{dir}/n.txt", "content": "x"}, {"path": "{dir}/e.txt", "content": "x", "mode": "create"}]}`,
			invalid: []string{"evaluate_python", "writes[1].path", "already exists", "overwrite"},
			after: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "e.txt"), "keep")
				wantNoFile(t, filepath.Join(dir, "n.txt"))
			}},
		{name: "writes discarded on error", args: `{"code": "write_text('{dir}/w.txt', 'w')\nx = 1\n1 / 0", "writes": [{"path": "{dir}/p.txt", "content": "p"}]}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, nil)
				if !strings.Contains(r.Stderr, "ZeroDivisionError") || !strings.Contains(r.Stderr, "line 3") {
					t.Errorf("stderr = %q, want the traceback of a ZeroDivisionError on line 3", r.Stderr)
				}
				wantEq(t, "len(writes)", len(r.Writes), 0)
				wantEq(t, "globals[x]", r.Globals["x"], "1")
			},
			after: func(t *testing.T, dir string) {
				wantNoFile(t, filepath.Join(dir, "p.txt"))
				wantNoFile(t, filepath.Join(dir, "w.txt"))
			}},
		{name: "write_text queues like writes", args: `{"code": "write_text('{dir}/q.txt', 'queued', 'create')\nimport os\nos.path.exists('{dir}/q.txt')"}`,
			check: func(t *testing.T, r EvalResult, dir string) {
				wantRepr(t, r, str("False")) // not written while the code runs
				if len(r.Writes) != 1 || r.Writes[0]["path"] != dir+"/q.txt" {
					t.Errorf("writes = %v, want the queued one", r.Writes)
				}
			},
			after: func(t *testing.T, dir string) { wantFile(t, filepath.Join(dir, "q.txt"), "queued") }},
		{name: "stderr without a failure keeps the writes", args: `{"code": "import sys\n_ = sys.stderr.write('careful')", "writes": [{"path": "{dir}/kept.txt", "content": "kept"}]}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, nil)
				wantEq(t, "stderr", r.Stderr, "careful")
				wantEq(t, "len(writes)", len(r.Writes), 1)
			},
			after: func(t *testing.T, dir string) { wantFile(t, filepath.Join(dir, "kept.txt"), "kept") }},
		{name: "write_text checks its path", args: `{"code": "write_text('/etc/x', 'no')"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantRepr(t, r, nil)
				if !strings.Contains(r.Stderr, "absolute") {
					t.Errorf("stderr = %q, want it to say the path is absolute", r.Stderr)
				}
			}},
		{name: "timeout", args: `{"code": "print('before')\nwhile True:\n    pass", "writes": [{"path": "{dir}/t.txt", "content": "t"}]}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantEq(t, "stderr", r.Stderr, "Execution timed out.")
				wantRepr(t, r, nil)
				wantEq(t, "len(writes)", len(r.Writes), 0)
			},
			after: func(t *testing.T, dir string) { wantNoFile(t, filepath.Join(dir, "t.txt")) }},
		{name: "stdout and stderr capped at 4096 characters", args: `{"code": "import sys\nprint('é' * 5000)\nsys.stderr.write('e' * 5000)\n1"}`,
			check: func(t *testing.T, r EvalResult, _ string) {
				wantEq(t, "stdout characters", utf8.RuneCountInString(r.Stdout), 4096)
				wantEq(t, "stderr characters", utf8.RuneCountInString(r.Stderr), 4096)
				if !strings.HasSuffix(r.Stdout, "é...") || !strings.HasSuffix(r.Stderr, "e...") {
					t.Errorf("the streams do not end in an ellipsis: %q, %q", r.Stdout[len(r.Stdout)-10:], r.Stderr[len(r.Stderr)-10:])
				}
				wantRepr(t, r, str("1"))
			}},
		{name: "code at the limit", args: `{"code": ` + quoteJSON("1"+strings.Repeat(" ", 1999)) + `}`,
			check: func(t *testing.T, r EvalResult, _ string) { wantRepr(t, r, str("1")) }},

		// Invalid calls.
		{name: "code too long", args: `{"code": "` + long + `"}`, invalid: []string{"evaluate_python", "code", "2001 characters", "at most 2000"}},
		{name: "code with a control character", args: `{"code": "1\u0001"}`, invalid: []string{"evaluate_python", "code", "control character", "tab and newline"}},
		{name: "code with a carriage return", args: `{"code": "1\r\n"}`, invalid: []string{"code", "control character"}},
		{name: "code missing", args: `{"globals": {}}`, invalid: []string{"evaluate_python", "code", "missing"}},
		{name: "code not a string", args: `{"code": 1}`, invalid: []string{"code", "must be a string"}},
		{name: "unknown field", args: `{"code": "1", "global": {}}`, invalid: []string{"evaluate_python", `unknown field "global"`, `did you mean "globals"`}},
		{name: "global with bad JSON names its key", args: `{"code": "1", "globals": {"n": "{oops"}}`, invalid: []string{"evaluate_python", "globals.n", "not valid JSON"}},
		{name: "global not a string", args: `{"code": "1", "globals": {"n": 3}}`, invalid: []string{"globals.n", "must be a string holding JSON", `"3"`}},
		{name: "global name not an identifier", args: `{"code": "1", "globals": {"2x": "1"}}`, invalid: []string{"globals.2x", "identifier"}},
		{name: "absolute path", args: `{"code": "1", "reads": [{"path": "/etc/passwd"}]}`, invalid: []string{"reads[0].path", "absolute", "relative"}},
		{name: "dot-dot path", args: `{"code": "1", "writes": [{"path": "a/../../x", "content": ""}]}`, invalid: []string{"writes[0].path", `".."`}},
		{name: "non-ASCII path", args: `{"code": "1", "reads": [{"path": "caf\u00e9.txt"}]}`, invalid: []string{"reads[0].path", "ASCII"}},
		{name: "path too deep", args: `{"code": "1", "reads": [{"path": "` + deep + `"}]}`, invalid: []string{"reads[0].path", "17 segments", "at most 16"}},
		{name: "segment too long", args: `{"code": "1", "reads": [{"path": "` + strings.Repeat("s", 81) + `"}]}`, invalid: []string{"reads[0].path", "81 characters", "at most 80"}},
		{name: "empty path", args: `{"code": "1", "reads": [{"path": " "}]}`, invalid: []string{"reads[0].path", "empty"}},
		{name: "duplicate reads", files: map[string]string{"r.txt": "r"}, args: `{"code": "1", "reads": [{"path": "{dir}/r.txt"}, {"path": "{dir}//r.txt"}]}`, invalid: []string{"reads[1].path", "twice"}},
		{name: "duplicate writes", args: `{"code": "1", "writes": [{"path": "{dir}/w.txt", "content": "a"}, {"path": "{dir}/w.txt", "content": "b", "mode": "overwrite"}]}`, invalid: []string{"writes[1].path", "twice"},
			after: func(t *testing.T, dir string) { wantNoFile(t, filepath.Join(dir, "w.txt")) }},
		{name: "read and write of one path", files: map[string]string{"rw.txt": "r"}, args: `{"code": "1", "reads": [{"path": "{dir}/rw.txt"}], "writes": [{"path": "{dir}/rw.txt", "content": "w", "mode": "overwrite"}]}`, invalid: []string{"writes[0].path", "also in reads"},
			after: func(t *testing.T, dir string) { wantFile(t, filepath.Join(dir, "rw.txt"), "r") }},
		{name: "content too long", args: `{"code": "1", "writes": [{"path": "{dir}/big.txt", "content": "` + strings.Repeat("c", 48001) + `"}]}`, invalid: []string{"writes[0].content", "48001 characters", "at most 48000"}},
		{name: "content missing", args: `{"code": "1", "writes": [{"path": "{dir}/c.txt"}]}`, invalid: []string{"writes[0].content", "missing"}},
		{name: "bad mode", args: `{"code": "1", "writes": [{"path": "{dir}/m.txt", "content": "", "mode": "replace"}]}`, invalid: []string{"evaluate_python", "writes[0].mode", `"replace"`, `"create"`, `"overwrite"`, `"append"`}},
		{name: "unknown field of a write", args: `{"code": "1", "writes": [{"path": "{dir}/m.txt", "content": "", "mod": "create"}]}`, invalid: []string{"writes[0]", `unknown field "mod"`, `did you mean "mode"`}},
		{name: "read of a missing file", args: `{"code": "1", "reads": [{"path": "{dir}/missing.txt"}]}`, invalid: []string{"evaluate_python", "reads[0].path", "no file"}},
		{name: "template names a missing global", args: `{"code": "x = 1", "writes": [{"path": "{dir}/tm.txt", "content": "{y}"}]}`, invalid: []string{"evaluate_python", "writes[0].content", "'y'"},
			after: func(t *testing.T, dir string) { wantNoFile(t, filepath.Join(dir, "tm.txt")) }},
	}
}

// Timeout is how long the whole table may take on one face, at most.
const Timeout = 5 * time.Minute
