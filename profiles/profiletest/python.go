package profiletest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PythonResult is the python result as the suite reads it.
type PythonResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Details struct {
		Cells []struct {
			Index      int     `json:"index"`
			Title      *string `json:"title"`
			Code       string  `json:"code"`
			Output     string  `json:"output"`
			Status     string  `json:"status"`
			DurationMs *int64  `json:"durationMs"`
			ExitCode   *int    `json:"exitCode"`
			Language   *string `json:"language"`
		} `json:"cells"`
		JSONOutputs    []json.RawMessage `json:"jsonOutputs"`
		IsError        bool              `json:"isError"`
		Cancelled      bool              `json:"cancelled"`
		StdinRequested bool              `json:"stdinRequested"`
		KernelMode     string            `json:"kernelMode"`
	} `json:"details"`
}

// Text is the result's text content.
func (r PythonResult) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// pyCaller sends python calls for one case.
type pyCaller struct {
	t    *testing.T
	face Face
	root string
}

// ok sends a call that must be accepted and returns its result.
func (c *pyCaller) ok(args string) PythonResult {
	c.t.Helper()
	res, inv, err := c.face.Tool(context.Background(), "python", []byte(args))
	if err != nil {
		c.t.Fatalf("call %s: %v", args, err)
	}
	if inv != "" {
		c.t.Fatalf("call %s refused: %s", args, inv)
	}
	var r PythonResult
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatalf("result %s: %v", res, err)
	}
	var raw struct {
		Details map[string]json.RawMessage `json:"details"`
	}
	json.Unmarshal(res, &raw)
	for _, f := range []string{"cells", "jsonOutputs", "images", "statusEvents", "isError", "cancelled", "stdinRequested", "kernelMode"} {
		if _, ok := raw.Details[f]; !ok {
			c.t.Errorf("result %s has no details.%s", res, f)
		}
	}
	if len(r.Content) == 0 || r.Content[0].Type != "text" {
		c.t.Errorf("result %s: content does not start with a text item", res)
	}
	for _, cell := range r.Details.Cells {
		if cell.Language != nil {
			c.t.Errorf("cell %d has a language field (%q); the python tool's cells have none", cell.Index, *cell.Language)
		}
		if cell.DurationMs == nil {
			c.t.Errorf("cell %d has no durationMs", cell.Index)
		}
	}
	return r
}

// invalid sends a call that must be refused with a text holding want.
func (c *pyCaller) invalid(args string, want ...string) {
	c.t.Helper()
	res, inv, err := c.face.Tool(context.Background(), "python", []byte(args))
	if err != nil {
		c.t.Fatalf("call %s: %v", args, err)
	}
	if inv == "" {
		c.t.Fatalf("call %s accepted, want a refusal holding %q; result %s", args, want, res)
	}
	for _, w := range want {
		if !strings.Contains(inv, w) {
			c.t.Errorf("refusal %q does not hold %q", inv, w)
		}
	}
}

func wantOutput(t *testing.T, r PythonResult, cell int, want string) {
	t.Helper()
	if cell >= len(r.Details.Cells) {
		t.Fatalf("no cell %d in %+v", cell, r.Details.Cells)
	}
	if got := r.Details.Cells[cell].Output; got != want {
		t.Errorf("cell %d output = %q, want %q", cell, got, want)
	}
}

func wantStatus(t *testing.T, r PythonResult, statuses ...string) {
	t.Helper()
	if len(r.Details.Cells) != len(statuses) {
		t.Fatalf("%d cells, want %d", len(r.Details.Cells), len(statuses))
	}
	for i, s := range statuses {
		c := r.Details.Cells[i]
		if c.Status != s {
			t.Errorf("cell %d status = %q, want %q (output %q)", i, c.Status, s, c.Output)
		}
		switch {
		case s == "pending" && c.ExitCode != nil:
			t.Errorf("cell %d exitCode = %d, want null", i, *c.ExitCode)
		case s == "complete" && (c.ExitCode == nil || *c.ExitCode != 0):
			t.Errorf("cell %d exitCode = %v, want 0", i, c.ExitCode)
		case s == "error" && (c.ExitCode == nil || *c.ExitCode != 1):
			t.Errorf("cell %d exitCode = %v, want 1", i, c.ExitCode)
		}
	}
}

type pyCase struct {
	name string
	run  func(t *testing.T, c *pyCaller)
}

// RunPython runs the python table (seed 001) on face. The face's session
// runs in kernel mode session; face.Root is its root.
func RunPython(t *testing.T, face Face) {
	if _, inv, err := face.Tool(context.Background(), "python", []byte(`{"cells": [{"code": "first = 1"}]}`)); err != nil || inv != "" {
		t.Fatalf("first call: invalid %q, err %v", inv, err)
	}
	root := face.Root()
	for _, tc := range pythonCases() {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &pyCaller{t: t, face: face, root: root})
		})
	}
}

func pythonCases() []pyCase {
	return []pyCase{
		{"one cell: output, status, exit code", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "print('hello')\n6 * 7"}]}`)
			wantStatus(t, r, "complete")
			wantOutput(t, r, 0, "hello\n42\n")
			wantEq(t, "text", r.Text(), "hello\n42")
			wantEq(t, "isError", r.Details.IsError, false)
			wantEq(t, "cancelled", r.Details.Cancelled, false)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, false)
			wantEq(t, "kernelMode", r.Details.KernelMode, "session")
			if r.Details.Cells[0].Title != nil {
				t.Errorf("title = %q for a cell that gave none; want it left out", *r.Details.Cells[0].Title)
			}
		}},
		{"state persists between calls (kernel mode session)", func(t *testing.T, c *pyCaller) {
			c.ok(`{"cells": [{"code": "kept = 41"}]}`)
			r := c.ok(`{"cells": [{"code": "print(kept + 1, first)"}]}`)
			wantOutput(t, r, 0, "42 1\n")
		}},
		{"cells run in order in one interpreter", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "a = 2", "title": "set"}, {"code": "print(a * 3)", "title": "use"}]}`)
			wantStatus(t, r, "complete", "complete")
			wantOutput(t, r, 1, "6\n")
			if !strings.Contains(r.Text(), "[1/2] set") || !strings.Contains(r.Text(), "[2/2] use\n6") {
				t.Errorf("text %q lacks the cells' headers", r.Text())
			}
			if r.Details.Cells[0].Title == nil || *r.Details.Cells[0].Title != "set" {
				t.Errorf("title = %v, want \"set\"", r.Details.Cells[0].Title)
			}
		}},
		{"a failing cell stops the rest and is named", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "before = 'kept'"}, {"code": "1 / 0", "title": "divide"}, {"code": "after = 1"}]}`)
			wantStatus(t, r, "complete", "error", "pending")
			wantEq(t, "isError", r.Details.IsError, true)
			if !strings.Contains(r.Details.Cells[1].Output, "ZeroDivisionError") {
				t.Errorf("output %q lacks the traceback", r.Details.Cells[1].Output)
			}
			if !strings.Contains(r.Text(), "Cell 2 (divide) failed") {
				t.Errorf("text %q does not name the failed cell", r.Text())
			}
			// Earlier cells' state remains; later cells did not run.
			r = c.ok(`{"cells": [{"code": "print(before, 'after' in globals())"}]}`)
			wantOutput(t, r, 0, "kept False\n")
		}},
		{"reset applies before the first cell only", func(t *testing.T, c *pyCaller) {
			c.ok(`{"cells": [{"code": "old = 1"}]}`)
			r := c.ok(`{"cells": [{"code": "print('old' in globals())\nnew = 2"}, {"code": "print(new)"}], "reset": true}`)
			wantStatus(t, r, "complete", "complete")
			wantOutput(t, r, 0, "False\n")
			wantOutput(t, r, 1, "2\n")
		}},
		{"timeout: the text, cancelled, the session kept", func(t *testing.T, c *pyCaller) {
			c.ok(`{"cells": [{"code": "survivor = 'yes'"}]}`)
			start := time.Now()
			r := c.ok(`{"cells": [{"code": "print('started')\nwhile True: pass"}, {"code": "print('never')"}], "timeout": 1}`)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("a 1 s call took %v", d)
			}
			wantStatus(t, r, "error", "pending")
			wantEq(t, "cancelled", r.Details.Cancelled, true)
			wantEq(t, "isError", r.Details.IsError, true)
			if out := r.Details.Cells[0].Output; !strings.HasPrefix(out, "started\n") || !strings.HasSuffix(out, "Command timed out after 1 seconds\n") {
				t.Errorf("output %q, want the printed text and then the timeout's", out)
			}
			if !strings.Contains(r.Text(), "Command timed out after 1 seconds") {
				t.Errorf("text %q lacks the timeout", r.Text())
			}
			r = c.ok(`{"cells": [{"code": "print(survivor)"}]}`)
			wantOutput(t, r, 0, "yes\n")
		}},
		{"timeout is per call, not per cell", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "import time\ntime.sleep(0.7)"}, {"code": "time.sleep(0.7)"}], "timeout": 1}`)
			wantStatus(t, r, "complete", "error")
			if !strings.HasSuffix(r.Details.Cells[1].Output, "Command timed out after 1 seconds\n") {
				t.Errorf("output %q, want the call's timeout in the second cell", r.Details.Cells[1].Output)
			}
		}},
		{"timeout clamped up to 1 second", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "import time\ntime.sleep(0.3)\nprint('slept')"}], "timeout": 0.001}`)
			wantStatus(t, r, "complete")
			r = c.ok(`{"cells": [{"code": "while True: pass"}], "timeout": 0}`)
			if !strings.HasSuffix(r.Details.Cells[0].Output, "Command timed out after 1 seconds\n") {
				t.Errorf("output %q, want the clamped timeout of 1 s", r.Details.Cells[0].Output)
			}
		}},
		{"timeout clamped down to 600 seconds", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "1"}], "timeout": 100000}`)
			wantStatus(t, r, "complete")
		}},
		{"cwd: a folder of the root", func(t *testing.T, c *pyCaller) {
			if err := os.MkdirAll(filepath.Join(c.root, "work", "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(c.root, "work", "sub", "in.txt"), []byte("from sub"), 0o644)
			r := c.ok(`{"cells": [{"code": "import os\nprint(os.path.basename(os.getcwd()), open('in.txt').read())"}], "cwd": "work/sub"}`)
			wantOutput(t, r, 0, "sub from sub\n")
			// An absolute path inside the root, as the guest sees it, is the
			// same folder.
			abs := filepath.Join(c.root, "work", "sub")
			r = c.ok(`{"cells": [{"code": "print(open('in.txt').read())"}], "cwd": ` + quoteJSON(abs) + `}`)
			wantOutput(t, r, 0, "from sub\n")
			r = c.ok(`{"cells": [{"code": "import os\nprint(os.getcwd())"}]}`)
			if strings.HasSuffix(strings.TrimSpace(r.Details.Cells[0].Output), "sub") {
				t.Errorf("a call without cwd ran in %q; want the session root", r.Details.Cells[0].Output)
			}
		}},
		{"cwd that does not exist", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"code": "1"}], "cwd": "no/such/folder"}`, "python", "cwd", `"no/such/folder"`, "does not exist")
		}},
		{"cwd that is a file", func(t *testing.T, c *pyCaller) {
			os.WriteFile(filepath.Join(c.root, "plain.txt"), []byte("x"), 0o644)
			c.invalid(`{"cells": [{"code": "1"}], "cwd": "plain.txt"}`, "cwd", "not a folder")
		}},
		{"cwd outside the root", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"code": "1"}], "cwd": "../"}`, "cwd", "outside the session root")
			c.invalid(`{"cells": [{"code": "1"}], "cwd": "/etc"}`, "cwd", "outside the session root")
		}},
		{"input() marks stdin requested and fails the cell", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "name = input('name? ')"}, {"code": "print('never')"}]}`)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, true)
			wantEq(t, "isError", r.Details.IsError, true)
			wantStatus(t, r, "error", "pending")
			if !strings.Contains(r.Details.Cells[0].Output, "stdin is not supported") {
				t.Errorf("output %q does not explain", r.Details.Cells[0].Output)
			}
		}},
		{"a caught input() still fails the cell", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "try:\n    input()\nexcept OSError:\n    pass\nprint('went on')"}]}`)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, true)
			wantStatus(t, r, "error")
		}},
		// The seed: the execution is a failure at the executor layer, and
		// later cells are not executed. The cell that caught the error runs
		// to its end, then fails; the next one never starts.
		{"a caught input() stops the cells after it", func(t *testing.T, c *pyCaller) {
			c.ok(`{"cells": [{"code": "ran_after = False"}]}`)
			r := c.ok(`{"cells": [{"code": "try:\n    input()\nexcept OSError:\n    pass\nprint('went on')"}, {"code": "ran_after = True\nprint('second')"}]}`)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, true)
			wantEq(t, "isError", r.Details.IsError, true)
			wantStatus(t, r, "error", "pending")
			if out := r.Details.Cells[0].Output; !strings.Contains(out, "went on") || !strings.Contains(out, "stdin is not supported") {
				t.Errorf("cell 1 output %q: want its own output, then why it failed", out)
			}
			if out := r.Details.Cells[1].Output; out != "" {
				t.Errorf("cell 2 output %q: it must not have run", out)
			}
			if r.Details.Cells[1].ExitCode != nil {
				t.Errorf("cell 2 exitCode %v, want null (never ran)", *r.Details.Cells[1].ExitCode)
			}
			if !strings.Contains(r.Content[0].Text, "Cell 1 failed") || !strings.Contains(r.Content[0].Text, "(not run)") {
				t.Errorf("content %q: want cell 2 (not run) and cell 1 named as failed", r.Content[0].Text)
			}
			r = c.ok(`{"cells": [{"code": "print(ran_after)"}]}`)
			wantOutput(t, r, 0, "False\n")
		}},
		{"sys.stdin.read() marks stdin requested", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "import sys\nsys.stdin.read()"}]}`)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, true)
			wantStatus(t, r, "error")
		}},
		{"no stdin request, no mark", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "print('fine')"}]}`)
			wantEq(t, "stdinRequested", r.Details.StdinRequested, false)
		}},
		{"kernel mode per-call: a fresh interpreter on the session's files", func(t *testing.T, c *pyCaller) {
			c.ok(`{"cells": [{"code": "session_only = 1"}]}`)
			r := c.ok(`{"cells": [{"code": "print('session_only' in globals())\nleak = 1\n_ = open('percall.txt', 'w').write('made per call')"}], "kernelMode": "per-call"}`)
			wantStatus(t, r, "complete")
			wantOutput(t, r, 0, "False\n")
			wantEq(t, "kernelMode", r.Details.KernelMode, "per-call")
			r = c.ok(`{"cells": [{"code": "print('leak' in globals(), session_only, open('percall.txt').read())"}]}`)
			wantOutput(t, r, 0, "False 1 made per call\n")
			r = c.ok(`{"cells": [{"code": "print('leak' in globals())"}], "kernelMode": "per-call"}`)
			wantOutput(t, r, 0, "False\n")
		}},
		{"displays are collected", func(t *testing.T, c *pyCaller) {
			r := c.ok(`{"cells": [{"code": "display({'n': 1})"}]}`)
			if len(r.Details.JSONOutputs) != 1 || string(r.Details.JSONOutputs[0]) != `{"n": 1}` && string(r.Details.JSONOutputs[0]) != `{"n":1}` {
				t.Errorf("jsonOutputs = %s", r.Details.JSONOutputs)
			}
		}},

		// Invalid calls.
		{"no cells", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"timeout": 5}`, "python", "cells", "missing")
			c.invalid(`{"cells": []}`, "python", "cells", "empty")
		}},
		{"a cell without code", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"title": "t"}]}`, "cells[0].code", "missing")
			c.invalid(`{"cells": [{"code": "  "}]}`, "cells[0].code", "empty")
			c.invalid(`{"cells": [{"code": 1}]}`, "cells[0].code", "must be a string")
		}},
		{"a cell with a language", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"code": "1"}, {"code": "1", "language": "py"}]}`, "python", "cells[1]", `"language"`, "no language")
		}},
		{"unknown fields", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"code": "1"}], "timeuot": 5}`, "python", `unknown field "timeuot"`, `did you mean "timeout"`)
			c.invalid(`{"cells": [{"code": "1", "titel": "x"}]}`, "cells[0]", `unknown field "titel"`, `did you mean "title"`)
		}},
		{"bad timeout, reset, cwd, kernelMode", func(t *testing.T, c *pyCaller) {
			c.invalid(`{"cells": [{"code": "1"}], "timeout": "5"}`, "timeout", "must be a number", "1 to 600")
			c.invalid(`{"cells": [{"code": "1"}], "reset": "yes"}`, "reset", "true or false")
			c.invalid(`{"cells": [{"code": "1"}], "cwd": 3}`, "cwd", "must be a string")
			c.invalid(`{"cells": [{"code": "1"}], "kernelMode": "fresh"}`, "kernelMode", `"session"`, `"per-call"`)
		}},
		{"not an object", func(t *testing.T, c *pyCaller) {
			c.invalid(`[{"code": "1"}]`, "object") // on eval lines an array names no profile
		}},
	}
}
