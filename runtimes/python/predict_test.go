package python_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// predictSrc runs instruction pairs that a prediction may join (ceval.c's
// PREDICT, live in wasm, which has no computed gotos: it jumps from one
// handler straight to the next without the dispatch, while tracing is
// off). Live now: CPython's own (GET_ITER, then FOR_ITER; a comprehension
// body's LIST_APPEND, SET_ADD or MAP_ADD, then JUMP_BACKWARD_QUICK; FOR_ITER,
// then STORE_FAST) and names-wasmeval.patch's FOR_ITER, then STORE_NAME;
// measured and dropped (README.md, "Speed flags"): PRECALL_PYFUNC
// or PRECALL_BOUND_METHOD, then CALL_PY_EXACT_ARGS or CALL_PY_WITH_DEFAULTS,
// a new frame's RESUME_QUICK, and JUMP_BACKWARD_QUICK, then FOR_ITER. It
// runs them while sys.settrace, with f_trace_opcodes, and sys.setprofile
// watch, in functions and at module level: a prediction must never hold
// while tracing is on, so every line, opcode, call and return event is seen
// as natively, also when a callee turns tracing on in the middle of a loop.
// Each function runs 60 times first so that its instructions are
// specialised. Offsets (f_lasti) are the same as natively: the same
// compiler made the code.
const predictSrc = `import sys

def P(*a):
    print(*a)

def add(a, b):
    return a + b
def dflt(a, b=1):
    return a - b
class K:
    def m(self, x):
        return x + 1
    def md(self, x, y=2):
        return x * y
k = K()
bm = k.m
bmd = k.md
def gen(n):
    for i in range(n):
        yield add(i, i)
def work(n):
    t = 0
    for i in range(n):
        t += add(i, 1) + dflt(i) + bm(i) + bmd(i)
    for v in gen(2):
        t += v
    t += sum([add(i, 1) for i in range(n)]) + len({i for i in range(n)}) + len({i: i for i in range(n)})
    return t
def nested(n):
    out = []
    for i in range(n):
        for j in range(2):
            out.append(dflt(i, j))
    return out
def on_at(i, at, opcodes):
    if i == at:
        sys.settrace(tr)
        f = sys._getframe(1)
        f.f_trace = tr
        f.f_trace_opcodes = opcodes
    return i
def loop_on(n, at, opcodes):
    t = 0
    for i in range(n):
        t += on_at(i, at, opcodes) + add(i, i)
    return t
for i in range(60):
    work(3)
    nested(2)
    loop_on(3, -1, False)
P('warm', work(5), nested(3), loop_on(4, -1, False))

ev = []
opcodes = False
def tr(frame, event, arg):
    if frame.f_code.co_filename == '<pred>':
        frame.f_trace_opcodes = opcodes
        ev.append((event, frame.f_code.co_name, frame.f_lineno, frame.f_lasti if event == 'opcode' else arg if event == 'return' else None))
    return tr
def traced(fn, *a):
    ev.clear()
    sys.settrace(tr)
    r = fn(*a)
    sys.settrace(None)
    P(fn.__name__, r, len(ev), ev)
traced(work, 3)
traced(nested, 2)
opcodes = True
traced(work, 2)
traced(nested, 2)
opcodes = False
for op in (False, True):
    ev.clear()
    r = loop_on(4, 1, op)
    sys.settrace(None)
    P('switched on in a loop', op, r, len(ev), ev)
for op in (False, True):
    opcodes = op
    ev.clear()
    sys.settrace(tr)
    sys._getframe().f_trace = tr
    sys._getframe().f_trace_opcodes = op
    tot = 0
    for q in range(3):
        tot += add(q, 1)
    sys.settrace(None)
    sys._getframe().f_trace = None
    P('module level', op, tot, len(ev), ev)
opcodes = False
pev = []
def prof(frame, event, arg):
    if frame.f_code.co_filename == '<pred>':
        pev.append((event, frame.f_code.co_name, frame.f_lineno))
sys.setprofile(prof)
work(2)
nested(2)
sys.setprofile(None)
P('setprofile', len(pev), pev)
P('after tracing', work(5), nested(3), loop_on(4, -1, False))
`

// TestPredictTraceMatchesNative: with predicted instruction pairs on the
// path, sys.settrace (line and opcode events, tracing switched on by a
// callee in a loop, a module-level loop) and sys.setprofile see what native
// python3.11 sees. A module whose PREDICT leaves out cframe.use_tracing
// fails it (opcode events go missing), though TestCallReturnMatchesNative
// passes on it.
func TestPredictTraceMatchesNative(t *testing.T) {
	// The markers: the program ran to its end and traced something.
	matchesNative(t, "exec(compile("+strconv.Quote(predictSrc)+", '<pred>', 'exec'), {'__name__': '__pred__'})\n",
		"work ", "('opcode', 'work', ", "('line', 'add', ", "switched on in a loop True ", "('opcode', 'loop_on', ", "module level True ", "('opcode', '<module>', ", "setprofile ", "after tracing ")
}

// forStopCells loop forever through FOR_ITER and JUMP_BACKWARD_QUICK, at
// module level (FOR_ITER predicts STORE_NAME) and in a function, with and
// without a call in the body. A for loop with no call sees the host's
// interrupt only at JUMP_BACKWARD_QUICK's eval breaker check, which a
// prediction there must come after: a module whose JUMP_BACKWARD_QUICK
// predicts FOR_ITER before the check fails both tests on the loops without
// a call (the cell is not stopped by its KeyboardInterrupt but rolled back),
// and the while loops of stop_test.go do not notice.
var forStopCells = []stopCell{
	{"for loop", "import itertools\nn = 0\nfor n in itertools.count():\n    pass"},
	{"for loop of calls", "import itertools\ndef f(x):\n    return x\nn = 0\nfor n in itertools.count():\n    f(n)"},
	{"for loop in a function", "import itertools\nn = 0\ndef g():\n    global n\n    for i in itertools.count():\n        n = i\ng()"},
}

// forStopCheck checks a stopped for cell: a KeyboardInterrupt raised in
// the loop, after many iterations, and the session going on.
func forStopCheck(t *testing.T, inst runtimes.Instance, r *rec, name string) {
	t.Helper()
	if !strings.Contains(r.out.String(), "KeyboardInterrupt") {
		t.Fatalf("no KeyboardInterrupt: %q", r.out.String())
	}
	if r, o := run(t, inst, "print(n > 1000)"); o.Failed || r.out.String() != "True\n" {
		t.Fatalf("iterations before the stop: %+v %q", o, r.out.String())
	}
	afterStop(t, inst, name)
}

// TestPredictForLoopsStopOnFuel: each for cell is stopped by a fuel
// budget, and the session goes on.
func TestPredictForLoopsStopOnFuel(t *testing.T) {
	stopsOnFuel(t, forStopCells, forStopCheck)
}

// TestPredictForLoopsStopOnTimeout: each for cell is interrupted by the
// host (the SIGINT flags) when its context's deadline passes, and the
// session goes on.
func TestPredictForLoopsStopOnTimeout(t *testing.T) {
	stopsOnTimeout(t, forStopCells, forStopCheck)
}
