package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// besidePython is the waiting cell of the beside recordings: it starts
// two tool calls, sub and quick, takes quick's answer at once (its first
// wait for host calls), works a while, writes note.txt, and takes sub's
// answer (its second wait). Replayed, quick's answer may come before sub
// is matched, and is held until it is (callorder.Cell.Ranked).
const besidePython = `import _wasmeval_helpers as h
s = h._start({"op": "tool", "name": "sub", "args": {}})
q = h._start({"op": "tool", "name": "quick", "args": {}})
print(h._decode(h._wait_for(q)))
sum(range(2 * 10**6))
open("note.txt", "w").write("between")
print(h._decode(h._wait_for(s)))`

// besideJS is the nested JavaScript cell: it prints what it finds of
// note.txt.
const besideJS = `const fs = require('fs');
console.log('js saw', fs.existsSync('note.txt') ? fs.readFileSync('note.txt', 'utf8') : 'nothing');`

// besideJSWaiting is besidePython in JavaScript: its event loop's waits
// are counted as Python's waits for host calls are (format 7).
const besideJSWaiting = `const s = tool.sub({});
const q = tool.quick({});
console.log(await q);
let x = 0;
for (let i = 0; i < 2e6; i++) x += i;
require('fs').writeFileSync('note.txt', 'between');
console.log(await s);`

// besidePy is besideJS in Python.
const besidePy = `import os
print('py saw', open('note.txt').read() if os.path.exists('note.txt') else 'nothing')`

// recordJSBesideInSecondWait records besidePython, whose sub call's host
// evals besideJS in the session once the cell has written note.txt: a
// JavaScript eval nested in a Python cell runs on its own instance,
// beside the waiting cell, here in its second wait, and sees the note.
// A JavaScript cell of an earlier request has started that instance. It
// returns the tape and the nested request's number.
func recordJSBesideInSecondWait(t *testing.T) (*tape.Tape, int) {
	t.Helper()
	return recordBeside(t, sandbox.Cell{Language: "py", Code: besidePython}, sandbox.Cell{Language: "js", Code: besideJS},
		"quick\njs saw between\n", 2)
}

// recordBeside records the cell waiting, whose sub call's host evals
// nested in the session once the cell has written note.txt, after a
// request that starts nested's instance; waiting is to print want, and
// the nested result to record beside (and no wait), the wait in which
// the cell took sub's answer. It returns the tape and the nested
// request's number.
func recordBeside(t *testing.T, waiting, nested sandbox.Cell, want string, beside int) (*tape.Tape, int) {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := hostcalls.HostFuncs{
		ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			if r.Name != "sub" {
				return hostcalls.ToolResponse{Result: json.RawMessage(`"quick"`)}, nil
			}
			for deadline := time.Now().Add(testenv.Stretch(20 * time.Second)); ; {
				if b, _ := os.ReadFile(filepath.Join(sess.Root(), "note.txt")); string(b) == "between" {
					break
				}
				if time.Now().After(deadline) {
					return hostcalls.ToolResponse{}, fmt.Errorf("the cell did not write note.txt")
				}
				time.Sleep(5 * time.Millisecond)
			}
			res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{nested}})
			if err != nil {
				return hostcalls.ToolResponse{}, err
			}
			out, _ := json.Marshal(strings.TrimSpace(res.Details.Cells[0].Output))
			return hostcalls.ToolResponse{Result: out}, nil
		},
	}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: nested.Language, Code: "1"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{waiting}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if out := res.Details.Cells[0].Output; out != want {
		t.Fatalf("the recorded cell: %q; want %q", out, want)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n, wait, gotBeside := 0, 0, 0
	waits := map[string]int{}
	for _, r := range tp.Events {
		switch {
		case r.Type == tape.TypeResult && r.Nested:
			n, wait, gotBeside = r.N, r.Wait, r.Beside
		case r.Type == tape.TypeCall:
			var c struct{ Name string }
			json.Unmarshal(r.Call, &c)
			waits[c.Name] = r.Wait
		}
	}
	if n == 0 || wait != 0 || gotBeside != beside || waits["sub"] != beside || waits["quick"] >= beside {
		t.Fatalf("nested request %d records wait %d and beside %d, quick's and sub's calls waits %d and %d; want wait 0 and beside %d, quick's wait before it and sub's that one",
			n, wait, gotBeside, waits["quick"], waits["sub"], beside)
	}
	return tp, n
}

// arrivedEarly is tp with nested request n's request record moved to the
// start of its enclosing request, as a host that evaluated at once would
// have left it: the replay then runs the eval as soon as the call that
// runs it is made, in the waiting cell's first wait (or before it).
func arrivedEarly(t *testing.T, tp *tape.Tape, n int) *tape.Tape {
	t.Helper()
	ev := slices.Clone(tp.Events)
	i := slices.IndexFunc(ev, func(r tape.Record) bool { return r.Type == tape.TypeRequest && r.N == n })
	if i < 0 {
		t.Fatalf("no request %d on the tape", n)
	}
	req := ev[i]
	ev = slices.Delete(ev, i, i+1)
	top := slices.IndexFunc(ev, func(r tape.Record) bool { return r.Type == tape.TypeRequest && !r.Nested && r.N == n-1 })
	if top < 0 {
		t.Fatalf("no request %d encloses nested request %d", n-1, n)
	}
	ev = slices.Insert(ev, top+1, req)
	return &tape.Tape{Header: tp.Header, Root: tp.Root, Events: ev}
}

// TestJSBesideReplaysInRecordedWait: a JavaScript eval nested in a
// waiting Python cell runs beside it, on its own instance; it is recorded
// with the wait of that cell its cell began in (beside, format 9), and
// replayed there: it sees the file the Python cell wrote between its two
// waits, byte for byte, as recorded, and also when the tape says the
// eval's request came before the cell took its first answer (the replay
// then runs it from the start of the cell). Before, such an eval recorded
// no wait: replayed so, its cell ran at once and saw no note.
func TestJSBesideReplaysInRecordedWait(t *testing.T) {
	tp, n := recordJSBesideInSecondWait(t)
	replaysIdentically(t, tp, 3)
	replaysIdentically(t, arrivedEarly(t, tp, n), 3)
}

// TestJSBesideInAnotherWaitDiverges: a tape that says the eval nested
// beside the Python cell began in its third wait (it has two) fails with
// a divergence that names the nested request and both waits, and nothing
// else: the eval began in the last wait the cell had, and the cell was
// not left waiting until its timeout.
func TestJSBesideInAnotherWaitDiverges(t *testing.T) {
	tp, n := recordJSBesideInSecondWait(t)
	tp = arrivedEarly(t, tp, n)
	for i, r := range tp.Events {
		if r.Type == tape.TypeResult && r.N == n {
			tp.Events[i].Beside = 3
		}
	}
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	divs := divergences(rep)
	if len(rep.Divergences) != 1 {
		t.Fatalf("want one divergence; got:\n%s", strings.Join(divs, "\n"))
	}
	if d := rep.Divergences[0]; d.What != "nested request" || d.Request != n || !strings.Contains(d.Message, "wait 2") || !strings.Contains(d.Message, "wait 3") {
		t.Fatalf("the divergence does not name nested request %d and both waits:\n%s", n, divs[0])
	}
}

// TestPythonBesideReplaysInRecordedWait is TestJSBesideReplaysInRecordedWait
// the other way round: a Python eval nested in a waiting JavaScript cell
// runs beside it, on the Python instance, in the second wait of the cell's
// event loop, after the cell wrote note.txt; replayed there, as recorded
// and with its request moved to the start.
func TestPythonBesideReplaysInRecordedWait(t *testing.T) {
	tp, n := recordBeside(t, sandbox.Cell{Language: "js", Code: besideJSWaiting}, sandbox.Cell{Language: "py", Code: besidePy},
		"quick\npy saw between\n", 2)
	replaysIdentically(t, tp, 3)
	replaysIdentically(t, arrivedEarly(t, tp, n), 3)
}
