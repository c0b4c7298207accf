package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// fakeSession answers each cell by its code: "ok TEXT" completes with TEXT
// as output, "fail" fails, "hosterr" is a host failure, "hang" waits for
// the context.
type fakeSession struct {
	evals  []sandbox.Request
	closed bool
}

func (f *fakeSession) Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
	f.evals = append(f.evals, req)
	res := &sandbox.Result{Details: sandbox.Details{Language: req.Cells[0].Language}}
	var text []string
	for i, c := range req.Cells {
		cr := sandbox.CellResult{Index: i, Language: c.Language, Code: c.Code, Status: sandbox.StatusComplete}
		switch {
		case strings.HasPrefix(c.Code, "ok "):
			cr.Output = strings.TrimPrefix(c.Code, "ok ") + "\n"
		case c.Code == "fail":
			cr.Status, cr.Output = sandbox.StatusError, "Error: failed\n"
			res.Details.IsError = true
		case c.Code == "hosterr":
			return nil, errors.New("sandbox: cell 0: py runtime: python runtime not built: run make")
		case c.Code == "hang":
			<-ctx.Done()
			cr.Status, cr.Output = sandbox.StatusCancelled, "cancelled\n"
			res.Details.IsError = true
		}
		res.Details.Cells = append(res.Details.Cells, cr)
		text = append(text, strings.TrimSuffix(cr.Output, "\n"))
		if cr.Status != sandbox.StatusComplete {
			break
		}
	}
	res.Content = []sandbox.Content{{Type: "text", Text: strings.Join(text, "\n")}}
	return res, nil
}

func (f *fakeSession) Close(ctx context.Context) error {
	f.closed = true
	return nil
}

func withFakeSession(t *testing.T) *fakeSession {
	t.Helper()
	f := &fakeSession{}
	old := openSession
	openSession = func(ctx context.Context, opts sandbox.SessionOptions, sbo sandbox.Options) (evalSession, error) {
		return f, nil
	}
	t.Cleanup(func() { openSession = old })
	return f
}

func run(t *testing.T, ctx context.Context, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = doMain(ctx, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func req(codes ...string) string {
	var cells []map[string]string
	for _, c := range codes {
		cells = append(cells, map[string]string{"language": "py", "code": c})
	}
	b, _ := json.Marshal(map[string]any{"cells": cells})
	return string(b)
}

// results parses stdout: one JSON value a line, each an error or a result.
func results(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.SplitAfter(stdout, "\n") {
		if l == "" {
			continue
		}
		if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
			t.Fatalf("stdout line %q is not one whole line", l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func summary(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return e["code"].(string) + ": " + e["message"].(string)
	}
	return "text: " + m["content"].([]any)[0].(map[string]any)["text"].(string)
}

func TestEval(t *testing.T) {
	tests := []struct {
		name     string
		stdin    string
		wantCode int
		want     []string
	}{
		{
			name:     "all complete",
			stdin:    req("ok one") + "\n" + req("ok two", "ok three") + "\n",
			wantCode: 0,
			want:     []string{"text: one", "text: two\nthree"},
		},
		{
			name:     "no final newline, CRLF and blank lines",
			stdin:    "\n" + req("ok one") + "\r\n  \t\n\n" + req("ok two"),
			wantCode: 0,
			want:     []string{"text: one", "text: two"},
		},
		{
			name:     "empty input",
			stdin:    "",
			wantCode: 0,
		},
		{
			name:     "a failing cell",
			stdin:    req("fail") + "\n" + req("ok after") + "\n",
			wantCode: 1,
			want:     []string{"text: Error: failed", "text: after"},
		},
		{
			name:     "an invalid line, and the next line still runs",
			stdin:    req("ok one") + "\nnot json\n\n" + `{"cells":[{"language":"py","code":"x","timout":1}]}` + "\n" + req("ok four") + "\n",
			wantCode: 2,
			want: []string{
				"text: one",
				`invalid_request: line 2: not JSON: it starts with "not json"; send one JSON object like {"cells":[{"language":"py","code":"print(1)"}]}`,
				`invalid_request: line 4: cells[0]: unknown field "timout" (did you mean "timeout"?); the fields are language, code, title, timeout, reset, fuel`,
				"text: four",
			},
		},
		{
			name:     "invalid wins over failed",
			stdin:    req("fail") + "\n{}\n",
			wantCode: 2,
			want:     []string{"text: Error: failed", `invalid_request: line 2: cells: missing; give at least one cell, like {"cells":[{"language":"py","code":"print(1)"}]}`},
		},
		{
			name:     "host failure wins, and the next line still runs",
			stdin:    req("hosterr") + "\n{}\n" + req("ok three") + "\n",
			wantCode: 3,
			want: []string{
				"host_error: line 1: sandbox: cell 0: py runtime: python runtime not built: run make",
				`invalid_request: line 2: cells: missing; give at least one cell, like {"cells":[{"language":"py","code":"print(1)"}]}`,
				"text: three",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := withFakeSession(t)
			code, stdout, stderr := run(t, context.Background(), tt.stdin, "eval", "--cwd", t.TempDir())
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr)
			}
			var got []string
			for _, m := range results(t, stdout) {
				got = append(got, summary(m))
			}
			if strings.Join(got, "\n---\n") != strings.Join(tt.want, "\n---\n") {
				t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n---\n"), strings.Join(tt.want, "\n---\n"))
			}
			if !f.closed {
				t.Error("session not closed")
			}
		})
	}
}

func TestEvalHostErrorOnStderr(t *testing.T) {
	withFakeSession(t)
	_, _, stderr := run(t, context.Background(), req("hosterr")+"\n", "eval", "--cwd", t.TempDir())
	if !strings.Contains(stderr, "wasmeval eval: line 1: sandbox: cell 0: py runtime: python runtime not built") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestEvalLongLines(t *testing.T) {
	withFakeSession(t)
	old := maxLineBytes
	maxLineBytes = 100
	t.Cleanup(func() { maxLineBytes = old })
	long := req("ok " + strings.Repeat("x", 200))
	stdin := long + "\n" + req("ok fits") + "\n" + long // the last without a newline
	code, stdout, _ := run(t, context.Background(), stdin, "eval", "--cwd", t.TempDir())
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	var got []string
	for _, m := range results(t, stdout) {
		got = append(got, summary(m))
	}
	want := []string{
		"invalid_request: line 1: longer than 100 bytes; send smaller requests, or put large data in a file in the session root",
		"text: fits",
		"invalid_request: line 3: longer than 100 bytes; send smaller requests, or put large data in a file in the session root",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// flushCounter records what had been written at each Write.
type flushCounter struct{ writes []string }

func (w *flushCounter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestEvalFlushesEachResult(t *testing.T) {
	withFakeSession(t)
	var out flushCounter
	code := doMain(context.Background(), []string{"eval", "--cwd", t.TempDir()},
		strings.NewReader(req("ok 1")+"\n"+req("ok 2")+"\n"), &out, io.Discard)
	if code != 0 || len(out.writes) != 2 {
		t.Errorf("exit %d, %d writes; want 0, one per result", code, len(out.writes))
	}
}

func TestEvalInterrupted(t *testing.T) {
	withFakeSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() { done <- doMain(ctx, []string{"eval", "--cwd", t.TempDir()}, pr, &out, &errb) }()
	pw.Write([]byte(req("hang") + "\n"))
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
	case <-time.After(testenv.Stretch(5 * time.Second)):
		t.Fatal("eval did not stop on cancel")
	}
	if !strings.Contains(out.String(), `"status":"cancelled"`) {
		t.Errorf("the interrupted request's result is missing: %q", out.String())
	}

	// Waiting for input, too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	go func() { done <- doMain(ctx2, []string{"eval", "--cwd", t.TempDir()}, pr2, io.Discard, io.Discard) }()
	time.Sleep(20 * time.Millisecond)
	cancel2()
	select {
	case code := <-done:
		if code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
	case <-time.After(testenv.Stretch(5 * time.Second)):
		t.Fatal("eval waiting for stdin did not stop on cancel")
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a substring; "" means empty
		wantStderr string // a substring; "" means empty
	}{
		{"no command", nil, 2, "", "Usage:\n  wasmeval <command>"},
		{"help", []string{"-h"}, 0, "Commands:\n  eval", ""},
		{"help long", []string{"--help"}, 0, "Commands:\n  eval", ""},
		{"help eval", []string{"help", "eval"}, 0, "Usage: wasmeval eval [--cwd DIR]", ""},
		{"eval help", []string{"eval", "-h"}, 0, "Exit status", ""},
		{"eval help long", []string{"eval", "--help"}, 0, "Usage: wasmeval eval [--cwd DIR]", ""},
		{"eval bad flag", []string{"eval", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{"eval argument", []string{"eval", "x.json"}, 2, "", `unexpected argument "x.json": requests come on stdin`},
		{"eval missing cwd", []string{"eval", "--cwd", "/nonexistent/wasmeval"}, 2, "", "--cwd /nonexistent/wasmeval: no such directory; create it first or add --mkdir"},
		{"version", []string{"version"}, 0, "wasmeval ", ""},
		{"version flag", []string{"--version"}, 0, "wasmeval ", ""},
		{"version help", []string{"version", "-h"}, 0, "Usage: wasmeval version", ""},
		{"serve without tokens", []string{"serve"}, 2, "", "wasmeval serve: no bearer tokens"},
		{"mcp bad flag", []string{"mcp", "--x"}, 2, "", "flag provided but not defined: -x"},
		{"mcp help", []string{"mcp", "-h"}, 0, "Usage: wasmeval mcp", ""},
		{"replay without a tape", []string{"replay"}, 2, "", "wasmeval replay: give exactly one tape file"},
		{"serve help", []string{"serve", "-h"}, 0, "Usage: wasmeval serve", ""},
		{"unknown", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withFakeSession(t)
			code, stdout, stderr := run(t, context.Background(), "", tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			check := func(what, got, want string) {
				if want == "" && got != "" || !strings.Contains(got, want) {
					t.Errorf("%s = %q, want it to contain %q", what, got, want)
				}
			}
			check("stdout", stdout, tt.wantStdout)
			check("stderr", stderr, tt.wantStderr)
		})
	}
}

func TestEvalDefaultCwd(t *testing.T) {
	var gotRoot string
	old := openSession
	openSession = func(ctx context.Context, opts sandbox.SessionOptions, sbo sandbox.Options) (evalSession, error) {
		gotRoot = opts.Root
		return &fakeSession{}, nil
	}
	t.Cleanup(func() { openSession = old })
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, stderr := run(t, context.Background(), "", "eval"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if gotRoot != dir {
		t.Errorf("root = %q, want %q", gotRoot, dir)
	}
}
