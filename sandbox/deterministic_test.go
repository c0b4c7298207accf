package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// nondeterministicCells read every clock and source of randomness the
// guests have, and the hash order of a set of strings.
var nondeterministicCells = []sandbox.Cell{
	{Language: "py", Code: `import time, random, uuid, os
print(time.time(), time.monotonic(), time.perf_counter_ns(), random.random(), uuid.uuid4(), os.urandom(4).hex())
print(list({"apple", "banana", "cherry", "date", "elder", "fig"}), hash("wasmeval"))`},
	{Language: "js", Code: `console.log(Date.now(), new Date().toISOString(), performance.now(), Math.random(), crypto.randomUUID())`},
}

// runFresh runs the cells in a session of a sandbox of its own.
func runFresh(t *testing.T, deterministic bool) []string {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Env: map[string]string{}, Deterministic: deterministic})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: nondeterministicCells})
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, c := range res.Details.Cells {
		if c.Status != sandbox.StatusComplete {
			t.Fatalf("cell %d: %s: %s", c.Index, c.Status, c.Output)
		}
		outs = append(outs, c.Output)
	}
	return outs
}

func TestDeterministic(t *testing.T) {
	testenv.RequirePython(t)
	a, b := runFresh(t, true), runFresh(t, true)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("cell %d differs between two deterministic runs:\n%s\n%s", i, a[i], b[i])
		}
	}
	// The hash secret is fixed in the template, not drawn on this machine:
	// a tape made elsewhere orders sets the same way.
	if want := "['fig', 'banana', 'date', 'elder', 'apple', 'cherry'] 872005716\n"; !strings.HasSuffix(a[0], want) {
		t.Errorf("Python's set order and hash: %q; want it to end with %q on every machine", a[0], want)
	}
	c, d := runFresh(t, false), runFresh(t, false)
	for i := range c {
		if c[i] == d[i] {
			t.Errorf("cell %d is the same in two ordinary runs (the test reads no clock or randomness?):\n%s", i, c[i])
		}
	}
}

// TestDeterministicSleep: a deterministic session's Python sleeps move its
// clock on without waiting (a 600 s sleep in a cell whose timeout is 30 s
// completes).
func TestDeterministicSleep(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	out, res := evalLang(t, s, "py", "import time\nt0 = time.time()\ntime.sleep(600)\nprint(round(time.time() - t0, 3))")
	if res.Details.Cells[0].Status != sandbox.StatusComplete || out != "600.002\n" { // sleep reads the monotonic clock once
		t.Errorf("a deterministic sleep: %s %q", res.Details.Cells[0].Status, out)
	}
}

// timerCell orders timers of several delays, an interval that clears
// itself, nested timeouts and immediates, and reads the clocks and Math.random
// in the callbacks: its output depends on the order and the times the
// timers fire at.
const timerCell = `const log = [];
const t0 = Date.now(), p0 = performance.now();
const at = (what) => log.push(what + "@" + (Date.now() - t0) + "/" + Math.round(performance.now() - p0) + " r" + Math.random().toFixed(6));
setTimeout(() => at("t300"), 300);
setTimeout(() => { at("t10"); setTimeout(() => at("t10+5"), 5); }, 10);
setImmediate(() => at("immediate"));
let n = 0;
const iv = setInterval(() => { at("iv" + n); if (++n === 3) clearInterval(iv); }, 40);
await new Promise((resolve) => setTimeout(resolve, 1000));
at("end");
console.log(log.join("\n"), new Date().toISOString());`

// TestDeterministicTimers: a JavaScript cell's timers run on the virtual
// clock of a deterministic session: two fresh runs print the same bytes,
// the timers fire in order of their delays, and a 60 s wait takes no time.
func TestDeterministicTimers(t *testing.T) {
	testenv.RequirePython(t)
	run := func() string {
		ctx := context.Background()
		sb, err := sandbox.New(ctx, sandbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close(ctx)
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Env: map[string]string{}, Deterministic: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		start := time.Now()
		out, res := evalLang(t, s, "js", timerCell+"\nawait new Promise((r) => setTimeout(r, 60000)); console.log('waited', Date.now() - t0 >= 61000)")
		if res.Details.Cells[0].Status != sandbox.StatusComplete {
			t.Fatalf("%s: %s", res.Details.Cells[0].Status, out)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("the cell took %v: its timers waited on the real clock", d)
		}
		return out
	}
	a, b := run(), run()
	if a != b {
		t.Errorf("two deterministic runs differ:\n%s\n---\n%s", a, b)
	}
	var order []string
	for _, l := range strings.Split(a, "\n") {
		if name, _, ok := strings.Cut(l, "@"); ok {
			order = append(order, name)
		}
	}
	if got, want := strings.Join(order, " "), "immediate t10 t10+5 iv0 iv1 iv2 t300 end"; got != want {
		t.Errorf("timers fired in the order %q; want %q\n%s", got, want, a)
	}
	if !strings.Contains(a, "waited true") || !strings.Contains(a, "t300@3") {
		t.Errorf("the virtual clock did not move on by the timers' delays:\n%s", a)
	}
}
