package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles/profiletest"
)

// evalPipe runs `wasmeval eval --cwd root` with a line-at-a-time stdin.
type evalPipe struct {
	in     *io.PipeWriter
	out    *bufio.Reader
	done   chan int
	stderr lockedBuffer
}

func startEvalPipe(t *testing.T, root string) *evalPipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &evalPipe{in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan int, 1)}
	go func() {
		code := runEval(context.Background(), []string{"--cwd", root}, inR, outW, &p.stderr)
		outW.Close()
		p.done <- code
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-p.done
	})
	return p
}

// send writes one line and reads its result line.
func (p *evalPipe) send(line []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, line); err != nil {
		buf.Reset()
		buf.Write(line)
	}
	buf.WriteByte('\n')
	if _, err := p.in.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	out, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading the result: %v (stderr %s)", err, p.stderr.String())
	}
	return out, nil
}

// call is a profiletest.Face's Call over eval lines.
func (p *evalPipe) call(ctx context.Context, args []byte) ([]byte, string, error) {
	out, err := p.send(args)
	if err != nil {
		return nil, "", err
	}
	var e errorLine
	if json.Unmarshal(out, &e) == nil && e.Error.Code != "" {
		if e.Error.Code == "invalid_request" {
			return nil, e.Error.Message, nil
		}
		return nil, "", fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)
	}
	return out, "", nil
}

// TestEvalLinesEvaluatePython runs the evaluate_python conformance table on
// eval lines, detected by their fields and named by "profile".
func TestEvalLinesEvaluatePython(t *testing.T) {
	testenv.RequirePython(t)
	t.Run("detected", func(t *testing.T) {
		root := t.TempDir()
		p := startEvalPipe(t, root)
		profiletest.RunEvaluatePython(t, profiletest.Face{Call: p.call, Root: func() string { return root }})
	})
	t.Run("named", func(t *testing.T) {
		root := t.TempDir()
		p := startEvalPipe(t, root)
		named := func(ctx context.Context, args []byte) ([]byte, string, error) {
			var m map[string]json.RawMessage
			if json.Unmarshal(args, &m) == nil {
				m["profile"] = json.RawMessage(`"evaluate_python"`)
				args, _ = json.Marshal(m)
			}
			return p.call(ctx, args)
		}
		profiletest.RunEvaluatePython(t, profiletest.Face{Call: named, Root: func() string { return root }})
	})
}

// TestEvalLinesProfiles checks the profile field: eval lines with it,
// the evaluate_python state shared with eval cells, and the errors that
// name the profile.
func TestEvalLinesProfiles(t *testing.T) {
	testenv.RequirePython(t)
	root := t.TempDir()
	p := startEvalPipe(t, root)
	for _, tc := range []struct{ line, want string }{
		{`{"profile": "eval", "cells": [{"language": "py", "code": "x = 20\nprint(x)"}]}`, `"output":"20\n"`},
		{`{"code": "write_text('from-ep.txt', 'hi')\nx = 1\nx"}`, `"value_repr":"1"`},
		// The eval cells' x is untouched; the file is there.
		{`{"cells": [{"language": "py", "code": "print(x, open('from-ep.txt').read())"}]}`, `"output":"20 hi\n"`},
		{`{"profile": "python", "cells": [{"code": "print(x + 1)"}]}`, `"output":"21\n"`},
		{`{"profile": "code_interpreter", "code": "1"}`, `line 5: code_interpreter: profile: name one of its tools: \"run_code\", \"create_code_context\", \"run_in_code_context\", \"delete_code_context\"`},
		{`{"profile": "asteval", "code": "1"}`, `line 6: eval line: profile: unknown profile \"asteval\"; use \"eval\" (cells) or \"python\", \"evaluate_python\"`},
		{`{"profile": 3, "code": "1"}`, `profile: must be a string, not the number 3`},
		{`{"profile": "evaluate_python", "cells": []}`, `line 8: evaluate_python: unknown field \"cells\"`},
		{`{"profile": "eval", "code": "1"}`, `line 9: unknown field \"code\"; the only field here is \"cells\"`},
		{`{"code": "1", "language": "py"}`, `"outputs":[{"type":"result","value":1}],"exitCode":0`},
		{`{"cells": [{"code": "print(x * 2)"}]}`, `"output":"40\n"`},
		{`{"cells": [{"code": "1"}, {"language": "py", "code": "1"}]}`, `line 12: cells[0].language: missing`},
	} {
		out, err := p.send([]byte(tc.line))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("line %s\n got %s\nwant it to hold %s", tc.line, out, tc.want)
		}
	}
}

// TestEvalStreamEvaluatePython checks that --stream streams an
// evaluate_python line's output as it does a cell's, and never the
// wrapper's own result bundle.
func TestEvalStreamEvaluatePython(t *testing.T) {
	testenv.RequirePython(t)
	var out, errb bytes.Buffer
	in := strings.NewReader(`{"code": "print('hi')\n6*7"}` + "\n")
	if code := runEval(context.Background(), []string{"--cwd", t.TempDir(), "--stream"}, in, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(out.String(), `"event":"stdout","cell":0,"text":"hi\n"`) || !strings.Contains(last, `"event":"done","value_repr":"42","stdout":"hi\n"`) {
		t.Errorf("--stream wrote\n%s", out.String())
	}
	if strings.Contains(out.String(), "vnd.wasmeval") {
		t.Errorf("the wrapper's result bundle was streamed:\n%s", out.String())
	}
}

// TestEvalLinesPython runs the python conformance table on eval lines,
// detected by their fields (cells without a language).
func TestEvalLinesPython(t *testing.T) {
	testenv.RequirePython(t)
	root := t.TempDir()
	p := startEvalPipe(t, root)
	profiletest.RunPython(t, profiletest.Face{Tool: p.tool, Root: func() string { return root }})
}

// TestEvalLinesCodeInterpreter runs the code_interpreter conformance
// table on eval lines, each naming its tool in "profile".
func TestEvalLinesCodeInterpreter(t *testing.T) {
	testenv.RequirePython(t)
	p := startEvalPipe(t, t.TempDir())
	profiletest.RunCodeInterpreter(t, profiletest.Face{Tool: p.tool})
}

// tool is a profiletest.Face's Tool over eval lines: the line names the
// tool in "profile".
func (p *evalPipe) tool(ctx context.Context, name string, args []byte) ([]byte, string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil {
		m["profile"], _ = json.Marshal(name)
		args, _ = json.Marshal(m)
	}
	return p.call(ctx, args)
}

// TestEvalLinesKernelMode checks --kernel-mode per-call on eval lines, and
// a line's kernelMode over it.
func TestEvalLinesKernelMode(t *testing.T) {
	testenv.RequirePython(t)
	var out, errb bytes.Buffer
	in := strings.NewReader(strings.Join([]string{
		`{"cells": [{"code": "x = 1"}]}`,
		`{"cells": [{"code": "print('x' in globals())"}]}`,
		`{"cells": [{"code": "y = 2"}], "kernelMode": "session"}`,
		`{"cells": [{"code": "print(y)"}], "kernelMode": "session"}`,
	}, "\n") + "\n")
	if code := runEval(context.Background(), []string{"--cwd", t.TempDir(), "--kernel-mode", "per-call"}, in, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], `"output":"False\n"`) || !strings.Contains(lines[1], `"kernelMode":"per-call"`) || !strings.Contains(lines[3], `"output":"2\n"`) {
		t.Errorf("eval wrote\n%s", out.String())
	}
	errb.Reset()
	if code := runEval(context.Background(), []string{"--kernel-mode", "fresh"}, strings.NewReader(""), &out, &errb); code != exitInvalid || !strings.Contains(errb.String(), "is not a kernel mode") {
		t.Errorf("--kernel-mode fresh: exit %d, %s", code, errb.String())
	}
}

// TestREADMEProfileExamples runs the eval-line examples of README.md's
// "Tool profiles" section, one per profile, as they stand: each
// `printf '%s\n' '<line>'... | bin/wasmeval eval` in a fresh folder, its
// answers checked against the "# " lines after it (a line ending in " …"
// is the start of its answer).
func TestREADMEProfileExamples(t *testing.T) {
	testenv.RequirePython(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Tool profiles\n")
	if !ok {
		t.Fatal(`README.md has no "## Tool profiles" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	quoted := regexp.MustCompile(`'([^']*)'`)
	lines := strings.Split(section, "\n")
	examples := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "printf '%s\\n' ") || !strings.HasSuffix(l, "| bin/wasmeval eval") {
			continue
		}
		examples++
		var requests []string
		for _, m := range quoted.FindAllStringSubmatch(l, -1)[1:] {
			requests = append(requests, m[1])
		}
		var want []string
		for _, w := range lines[i+1:] {
			if !strings.HasPrefix(w, "# ") {
				break
			}
			want = append(want, strings.TrimPrefix(w, "# "))
		}
		if len(want) != len(requests) {
			t.Errorf("README line %q: %d requests but %d answer lines", l, len(requests), len(want))
			continue
		}
		var out, errb bytes.Buffer
		runEval(context.Background(), []string{"--cwd", t.TempDir()}, strings.NewReader(strings.Join(requests, "\n")+"\n"), &out, &errb)
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(got) != len(want) {
			t.Errorf("README example %q answered %d lines, want %d:\n%s%s", l, len(got), len(want), out.String(), errb.String())
			continue
		}
		for j := range want {
			if prefix, cut := strings.CutSuffix(want[j], " …"); cut {
				if !strings.HasPrefix(got[j], prefix) {
					t.Errorf("README example %q: answer %d\n got %s\nwant it to start %s", l, j+1, got[j], prefix)
				}
			} else if got[j] != want[j] {
				t.Errorf("README example %q: answer %d\n got %s\nwant %s", l, j+1, got[j], want[j])
			}
		}
	}
	if examples < 4 {
		t.Errorf("README's Tool profiles section has %d eval-line examples, want one per profile (4)", examples)
	}
}

// TestEvalLinesContextBackend checks that a code_interpreter context made
// on an eval line may name its Python backend, as on HTTP and MCP: the
// session's own backend works, one outside the choice is refused naming
// the field.
func TestEvalLinesContextBackend(t *testing.T) {
	testenv.RequirePython(t)
	p := startEvalPipe(t, t.TempDir())
	out, err := p.send([]byte(`{"profile": "create_code_context", "language": "python", "python": "wasm"}`))
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		ContextID string `json:"contextId"`
	}
	if json.Unmarshal(out, &made) != nil || made.ContextID == "" {
		t.Fatalf("create_code_context with python wasm answered %s", out)
	}
	out, err = p.send([]byte(fmt.Sprintf(`{"profile": "run_in_code_context", "contextId": %q, "code": "6 * 7"}`, made.ContextID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "42") {
		t.Errorf("run_in_code_context answered %s", out)
	}
	out, err = p.send([]byte(`{"profile": "create_code_context", "language": "python", "python": "cobol"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "python") || strings.Contains(string(out), "contextId") {
		t.Errorf("create_code_context with python cobol answered %s", out)
	}
}
