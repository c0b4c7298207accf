package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// concurrentReadsPython starts the tool call sub, whose host evals a
// JavaScript cell in the session while this Python cell goes on, reads
// its clocks and random bytes, works, reads them again, calls go (which
// lets sub's host eval, where it waits for it) and prints what it read
// and what sub answered (the JavaScript cell's output).
const concurrentReadsPython = `import _wasmeval_helpers as h, os, time
s = h._start({"op": "tool", "name": "sub", "args": {}})
before = (time.time_ns(), time.monotonic_ns(), os.urandom(8).hex())
sum(range(3 * 10**6))
after = (time.time_ns(), time.monotonic_ns(), os.urandom(8).hex())
g = h._start({"op": "tool", "name": "go", "args": {}})
sub = h._decode(h._wait_for(s))
h._wait_for(g)
print("py", before, after)
print(sub)`

// concurrentReadsJS is the JavaScript cell sub's host evals.
const concurrentReadsJS = `console.log("js", Date.now(), performance.now(), Math.random(), crypto.randomUUID());`

// TestDeterministicConcurrentInstances: in a deterministic session a
// JavaScript eval nested in a waiting Python cell reads its clock and
// random numbers while the Python cell reads its own, once between the
// Python cell's two reads (sub's host evals at once) and once after them
// (it evals once the cell calls go). With one virtual clock and one
// seeded stream for the session the two runs printed other times and
// bytes (whichever instance read first took the next reading); each
// instance has its own now, and the runs agree byte for byte. The next
// request's cells (Python, then JavaScript) read later times than every
// read of the request before, in either language.
func TestDeterministicConcurrentInstances(t *testing.T) {
	testenv.RequirePython(t)
	run := func(waitForGo bool) []string {
		t.Helper()
		ctx := context.Background()
		var sess *sandbox.Session
		goCalled := make(chan struct{})
		host := hostcalls.HostFuncs{
			ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
				if r.Name == "go" {
					close(goCalled)
					return hostcalls.ToolResponse{Result: json.RawMessage(`"gone"`)}, nil
				}
				if waitForGo {
					select {
					case <-goCalled:
					case <-time.After(testenv.Stretch(20 * time.Second)):
						return hostcalls.ToolResponse{}, errors.New("the cell did not call go")
					}
				}
				res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: concurrentReadsJS}}})
				if err != nil {
					return hostcalls.ToolResponse{}, err
				}
				b, _ := json.Marshal(res.Details.Cells[0].Output)
				return hostcalls.ToolResponse{Result: b}, nil
			},
		}
		sb, err := sandbox.New(ctx, sandbox.Options{Host: host})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close(ctx)
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Env: map[string]string{}, Deterministic: true})
		if err != nil {
			t.Fatal(err)
		}
		sess = s
		var outs []string
		for _, req := range []sandbox.Request{
			{Cells: []sandbox.Cell{{Language: "py", Code: concurrentReadsPython}}},
			{Cells: []sandbox.Cell{
				{Language: "py", Code: "print('py', time.time_ns())"},
				{Language: "js", Code: "console.log('js', Date.now())"},
			}},
		} {
			res, err := s.Eval(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Details.Cells {
				if c.Status != sandbox.StatusComplete {
					t.Fatalf("cell %d: %s: %q", c.Index, c.Status, c.Output)
				}
				outs = append(outs, c.Output)
			}
		}
		return outs
	}
	between, after := run(false), run(true)
	for i := range between {
		if between[i] != after[i] {
			t.Errorf("output %d differs between the two deterministic runs:\n%s\n%s", i, between[i], after[i])
		}
	}
	// The second request's Python cell reads a later time than every read
	// of the first request, in either language, and its JavaScript cell a
	// later one than that.
	num := func(re, out string) int64 {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in %q", re, out)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	pyAfter := num(`py \(\d+, \d+, '[0-9a-f]+'\) \((\d+),`, between[0])
	jsFirst := num(`js (\d+) `, between[0]) * int64(time.Millisecond)
	py2, js2 := num(`py (\d+)`, between[1]), num(`js (\d+)`, between[2])*int64(time.Millisecond)
	if py2 <= pyAfter || py2 <= jsFirst || js2 <= py2 {
		t.Errorf("times: first request Python %d, JavaScript %d; then Python %d, JavaScript %d: want each later than the reads before it", pyAfter, jsFirst, py2, js2)
	}
}
