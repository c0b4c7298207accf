package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// newJSSession is a session on the real JavaScript runtime under opts.
func newJSSession(t *testing.T, opts sandbox.Options, so sandbox.SessionOptions) *sandbox.Session {
	t.Helper()
	ctx := context.Background()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	sb, err := sandbox.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	so.Root = t.TempDir()
	s, err := sb.NewSession(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func ts(code string) sandbox.Cell { return sandbox.Cell{Language: "ts", Code: code} }

// TestTypeScriptCells: "ts" cells run with their types stripped in the
// session's JavaScript state, both ways, and a failure points into the
// TypeScript source under the cell's <cell-N> name.
func TestTypeScriptCells(t *testing.T) {
	s := newJSSession(t, sandbox.Options{}, sandbox.SessionOptions{})
	res := mustEval(t, s,
		titled(ts("const x: number = 40\ninterface P { n: number }\nconst p: P = { n: 1 }"), "types"),
		js("x + 2"),
		js("let fromJS = 'js'"),
		ts("const y: string = fromJS + '/' + p.n\ny"),
	)
	if got, want := res.Content[0].Text, "[1/4] types\n(no output)\n\n[2/4] js\n42\n\n[3/4] js\n(no output)\n\n[4/4] ts\n'js/1'"; got != want {
		t.Errorf("content:\n got %q\nwant %q", got, want)
	}
	if got := strings.Join(res.Details.Languages, ","); got != "ts,js" {
		t.Errorf("details.languages = %s, want ts,js", got)
	}
	if res.Details.Cells[0].Language != "ts" || res.Details.Cells[0].Title != "types" {
		t.Errorf("cell 0 = %+v", res.Details.Cells[0])
	}
	// The session's fifth JavaScript-runtime cell fails at its TypeScript
	// line and column.
	res = mustEval(t, s, ts("type T = number\nconst f = (n: T): T => {\n  throw new Error('no ' + n)\n}\nf(3)"))
	out := res.Details.Cells[0].Output
	for _, want := range []string{"Uncaught Error: no 3", "at f (<cell-5>:3:9)", "at <cell-5>:5:2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	// A syntax error, esbuild's, at its TypeScript position.
	res = mustEval(t, s, ts("let a: number = 1\nlet b: = 2"))
	if out := res.Details.Cells[0].Output; !strings.Contains(out, "<cell-6>:2\nlet b: = 2\n       ^\n") || !strings.Contains(out, "SyntaxError:") {
		t.Errorf("syntax error output %q", out)
	}
	// A reset by a ts cell resets the JavaScript state too.
	res = mustEval(t, s, sandbox.Cell{Language: "ts", Code: "typeof x", Reset: true})
	if got := res.Content[0].Text; got != "'undefined'" {
		t.Errorf("after a ts reset: %q", got)
	}
}

// TestLanguagesOption: a cell in a language the sandbox or the session
// disables fails with the enabled languages named; "ts" follows "js"
// unless listed itself.
func TestLanguagesOption(t *testing.T) {
	tests := []struct {
		name    string
		sb, ses []string
		cell    sandbox.Cell
		want    string // "" means the cell runs
	}{
		{"py disabled by the sandbox", []string{"js"}, nil, py("print(1)"), `"py" cells are disabled here; the enabled languages are js, ts`},
		{"ts follows js", []string{"js"}, nil, ts("const n: number = 1\nn"), ""},
		{"ts off with js", []string{"py"}, nil, ts("1"), `"ts" cells are disabled here; the enabled languages are py`},
		{"ts alone", []string{"py", "ts"}, nil, ts("2"), ""},
		{"js off when only ts is listed", []string{"py", "ts"}, nil, js("2"), `"js" cells are disabled here; the enabled languages are py, ts`},
		{"the session narrows the sandbox", []string{"py", "js"}, []string{"py"}, js("3"), `"js" cells are disabled here; the enabled languages are py`},
		{"the session cannot widen it", []string{"js"}, []string{"py", "js"}, py("4"), `"py" cells are disabled here; the enabled languages are js, ts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newJSSession(t, sandbox.Options{Languages: tt.sb}, sandbox.SessionOptions{Languages: tt.ses})
			res := mustEval(t, s, tt.cell, tt.cell)
			c := res.Details.Cells[0]
			if tt.want == "" {
				if c.Status != sandbox.StatusComplete {
					t.Fatalf("status %s, output %q; want complete", c.Status, c.Output)
				}
				return
			}
			if c.Status != sandbox.StatusError || strings.TrimSpace(c.Output) != tt.want {
				t.Errorf("status %s, output %q; want error with %q", c.Status, c.Output, tt.want)
			}
			if res.Details.Cells[1].Status != sandbox.StatusPending || !res.Details.IsError {
				t.Errorf("the cell after: %s, isError %v; want pending, true", res.Details.Cells[1].Status, res.Details.IsError)
			}
		})
	}
}

// TestLanguagesOptionBadValues: bad lists are refused with the valid names.
func TestLanguagesOptionBadValues(t *testing.T) {
	ctx := context.Background()
	for _, list := range [][]string{{"rb"}, {"py", "python"}, {}} {
		_, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir(), Languages: list})
		if err == nil || !strings.Contains(err.Error(), "Options.Languages") || !strings.Contains(err.Error(), "py, js, ts") {
			t.Errorf("New with Languages %q: %v; want an error naming the field and py, js, ts", list, err)
		}
		sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Languages: list})
		if err == nil || !strings.Contains(err.Error(), "SessionOptions.Languages") || !strings.Contains(err.Error(), "py, js, ts") {
			t.Errorf("NewSession with Languages %q: %v; want an error naming the field and py, js, ts", list, err)
		}
		sb.Close(ctx)
	}
}

// TestFailedCellIsNamed: the content's last paragraph names the cell that
// failed or was cancelled, single cells too.
func TestFailedCellIsNamed(t *testing.T) {
	s := newJSSession(t, sandbox.Options{}, sandbox.SessionOptions{})
	res := mustEval(t, s, js("throw new Error('boom')"))
	if got, want := res.Content[0].Text, "Uncaught Error: boom\n    at <cell-1>:1:7\n\nCell 1 (js) failed"; got != want {
		t.Errorf("single cell:\n got %q\nwant %q", got, want)
	}
	res = mustEval(t, s, titled(js("1"), "fine"), titled(ts("null!.x"), "load config"), js("2"))
	if got := res.Content[0].Text; !strings.HasSuffix(got, "\n\n[3/3] js\n(not run)\n\nCell 2 (load config) failed") {
		t.Errorf("second of three: %q", got)
	}
	res = mustEval(t, s, sandbox.Cell{Language: "js", Code: "while (true) {}", TimeoutSeconds: 1})
	if got := res.Content[0].Text; !strings.HasSuffix(got, "timed out after 1 second\n\nCell 1 (js) failed") {
		t.Errorf("timed out: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{titled(js("while (true) {}"), "spin")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].Text; !strings.HasSuffix(got, "cancelled\n\nCell 1 (spin) was cancelled") {
		t.Errorf("cancelled: %q", got)
	}
	if res := mustEval(t, s, js("'ok'")); res.Content[0].Text != "'ok'" {
		t.Errorf("a complete cell: %q", res.Content[0].Text)
	}
}

// TestNestedTypeScript: a sub-agent's eval nested in a waiting cell runs
// in its own language, whatever the waiting cell's: a ts cell inside a js
// cell has its types stripped, a js cell inside a ts cell does not (even
// with the agent call's context passed on), and nested cells are named
// <cell-N> like the others.
func TestNestedTypeScript(t *testing.T) {
	s, _ := subAgentSession(t, true)
	out := evalOut(t, s,
		js(`const r = await agent("ts:var typed: number = 6 * 7; print(typed)"); print(r.trim(), typed)`),
		ts(`const r2: string = await agent("js:print(1 as number)"); print(r2.split('\n').slice(0, 2).join(' | '))`),
		ts(`const r3: string = await agent("js:null.x"); print(r3.includes('<cell-'), r3.includes('<cell>'))`),
	)
	if out[0] != "42 42\n" {
		t.Errorf("ts in js: %q", out[0])
	}
	if !strings.HasPrefix(out[1], "FAILED: <cell-") || !strings.Contains(out[1], "1 as number") {
		t.Errorf("js in ts: %q; want the js cell to fail on the type assertion", out[1])
	}
	if out[2] != "true false\n" {
		t.Errorf("nested cell names: %q", out[2])
	}
}
