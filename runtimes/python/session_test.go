package python_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// cellCase is one cell of a session-feature test, run in order on one
// instance: its result's text/plain, or what its output holds.
type cellCase struct {
	name, code string
	failed     bool
	result     string   // text/plain of the last expression ("" for none)
	contains   []string // in the output
	lacks      []string // not in the output
}

func runCells(t *testing.T, inst runtimes.Instance, cases []cellCase) {
	t.Helper()
	for _, tc := range cases {
		r, o := run(t, inst, tc.code)
		out := r.out.String()
		got := ""
		if len(r.result) > 0 {
			got = r.result[0]["text/plain"]
		}
		if o.Failed != tc.failed || got != tc.result {
			t.Errorf("%s: failed = %v, result = %q; want %v, %q; output:\n%s", tc.name, o.Failed, got, tc.failed, tc.result, out)
		}
		for _, c := range tc.contains {
			if !strings.Contains(out, c) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, c, out)
			}
		}
		for _, c := range tc.lacks {
			if strings.Contains(out, c) {
				t.Errorf("%s: output has %q:\n%s", tc.name, c, out)
			}
		}
	}
}

// TestAsyncioLoop: every cell runs on one event loop that lives for the
// session, so tasks outlive the cell that made them.
func TestAsyncioLoop(t *testing.T) {
	inst, _ := newInstance(t)
	runCells(t, inst, []cellCase{
		{name: "create_task in a plain cell", code: "import asyncio\nasync def work(n):\n    await asyncio.sleep(0.01)\n    return n * 2\nt = asyncio.create_task(work(21))\nt.done()", result: "False"},
		{name: "await it in a later cell", code: "await t", result: "42"},
		{name: "running loop in a plain cell", code: "asyncio.get_running_loop() is asyncio.get_event_loop()", result: "True"},
		{name: "same loop in an await cell", code: "await asyncio.sleep(0)\nasyncio.get_running_loop() is t.get_loop()", result: "True"},
		{name: "a task starts when its cell ends", code: "started = []\nasync def note():\n    started.append(1)\nasyncio.create_task(note());", result: ""},
		{name: "it ran", code: "started", result: "[1]"},
		{name: "a background task runs while a later cell awaits",
			code: "ticks = []\nasync def ticker():\n    for i in range(3):\n        ticks.append(i)\n        await asyncio.sleep(0.001)\nbg = asyncio.create_task(ticker())"},
		{name: "ticks", code: "await asyncio.sleep(0.05)\n(ticks, bg.done())", result: "([0, 1, 2], True)"},
		{name: "gather", code: "await asyncio.gather(work(1), work(2))", result: "[2, 4]"},
		{name: "asyncio.run fails as in a running loop", code: "asyncio.run(work(1))", failed: true,
			contains: []string{"RuntimeError: asyncio.run() cannot be called from a running event loop"},
			lacks:    []string{"Errno 58", "Exception ignored"}},
		{name: "a second loop cannot run inside", code: "asyncio.new_event_loop().run_until_complete(work(1))", failed: true,
			contains: []string{"RuntimeError: Cannot run the event loop while another loop is running"}, lacks: []string{"Errno"}},
		{name: "await on nothing fails instead of hanging", code: "await asyncio.Future()", failed: true,
			contains: []string{"RuntimeError", "nothing can complete"}},
		{name: "the loop goes on", code: "await work(5)", result: "10"},
		{name: "an exception in an awaited task", code: "async def bad():\n    raise ValueError('inner')\nawait bad()", failed: true,
			contains: []string{"ValueError: inner", "<cell-"}, lacks: []string{"never retrieved"}},
		{name: "wait_for timeout", code: "try:\n    await asyncio.wait_for(asyncio.sleep(1), 0.01)\nexcept asyncio.TimeoutError:\n    r = 'timeout'\nr", result: "'timeout'"},
	})

	// A cell stopped by its deadline while it awaits: the session and its
	// loop stay usable.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "await asyncio.sleep(30)", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Interrupted || !strings.Contains(r.out.String(), "KeyboardInterrupt") {
		t.Fatalf("interrupted await: %+v %q", o, r.out.String())
	}
	runCells(t, inst, []cellCase{
		{name: "after an interrupt", code: "t2 = asyncio.create_task(work(50))\nawait t2", result: "100"},
	})
}

// TestRootImports: the session root is first on sys.path, so modules and
// packages written there import, and edits show after a reload.
func TestRootImports(t *testing.T) {
	inst, root := newInstance(t)
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mymod.py", "X = 1\n")
	write("pkg/__init__.py", "")
	write("pkg/sub.py", "def f():\n    return 'sub'\n")
	runCells(t, inst, []cellCase{
		{name: "root first on sys.path", code: "import sys\nsys.path[0]", result: "'" + root + "'"},
		{name: "module", code: "import mymod\nmymod.X", result: "1"},
		{name: "package", code: "from pkg import sub\nsub.f()", result: "'sub'"},
	})
	write("mymod.py", "X = 2\n") // same size, likely the same mtime second
	write("pkg/sub.py", "def f():\n    return 'edited'\n")
	runCells(t, inst, []cellCase{
		{name: "reload sees the edit", code: "import importlib\nimportlib.reload(mymod).X", result: "2"},
		{name: "reload a submodule", code: "importlib.reload(sub).f()", result: "'edited'"},
		{name: "write a module from a cell", code: "open('fresh.py', 'w').write('Y = 3\\n')\nimport fresh\nfresh.Y", result: "3"},
		{name: "new package folder from a cell", code: "import os\nos.makedirs('newpkg')\nopen('newpkg/__init__.py', 'w').write('Z = 4\\n');"},
		{name: "import it in the next cell", code: "import newpkg\nnewpkg.Z", result: "4"},
		{name: "a chdir does not move the root", code: "os.chdir('pkg')\nimport importlib\nimportlib.import_module('fresh').Y", result: "3"},
	})

	// A fork's root replaces its source's on sys.path.
	root2 := t.TempDir()
	cp, err := inst.(runtimes.Forker).Fork(context.Background(), runtimes.InstanceOptions{Root: root2})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(context.Background())
	runCells(t, cp, []cellCase{
		{name: "fork's root", code: "import sys\n(sys.path[0], " + pyStr(root) + " in sys.path)", result: "(" + pyStr(root2) + ", False)"},
	})
}

func pyStr(s string) string { return "'" + s + "'" }

// TestAsyncioLoopRollback: a cell stopped hard is rolled back with the
// loop (its tasks are gone, older ones go on as before it); Reset starts
// with an empty loop.
func TestAsyncioLoopRollback(t *testing.T) {
	rt := runtimeForTest(t)
	inst, err := rt.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), Checkpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	runCells(t, inst, []cellCase{
		{name: "an older task", code: "import asyncio\nasync def later(v):\n    await asyncio.sleep(0.05)\n    return v\nold = asyncio.create_task(later('old'))"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "new = asyncio.create_task(later('new'))\nwhile True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Failed || !strings.Contains(r.out.String(), "rolled back to before this cell") {
		t.Fatalf("hard stop: %+v %q", o, r.out.String())
	}
	runCells(t, inst, []cellCase{
		{name: "the older task goes on", code: "await old", result: "'old'"},
		{name: "the stopped cell's task is gone", code: "('new' in globals(), len(asyncio.all_tasks()))", result: "(False, 0)"},
		{name: "a pending task before reset", code: "pending = asyncio.create_task(later('p'))\nlen(asyncio.all_tasks())", result: "1"},
	})
	if err := inst.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	runCells(t, inst, []cellCase{
		{name: "after reset the loop is empty", code: "import asyncio\n(len(asyncio.all_tasks()), 'pending' in globals())", result: "(0, False)"},
		{name: "and works", code: "await asyncio.sleep(0.001, 'ok')", result: "'ok'"},
	})
}

// TestAsyncioLoopStartsOnImport: the loop starts when asyncio is first
// imported, however indirectly, and a plain cell that imports it already
// runs on it.
func TestAsyncioLoopStartsOnImport(t *testing.T) {
	inst, _ := newInstance(t)
	runCells(t, inst, []cellCase{
		{name: "not imported by the template", code: "import sys\n'asyncio' in sys.modules", result: "False"},
		{name: "imported inside a function", code: "def go():\n    from asyncio import create_task, sleep\n    async def f():\n        await sleep(0)\n        return 'done'\n    return create_task(f())\nt = go()"},
		{name: "awaited later", code: "await t", result: "'done'"},
	})
}
