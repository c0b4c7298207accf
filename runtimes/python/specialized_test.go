package python_test

import (
	"strconv"
	"testing"
)

// specializedSrc exercises the specialised instructions whose common paths
// ceval-inline-wasmeval.patch inlines into the eval loop (Python-to-Python
// calls and returns, int add, subtract and compare-and-jump) and those
// around them (fast locals and constants with their superinstructions,
// module and builtin globals), on their common paths and on the ways off
// them that Python code can take: ints past the small-int cache and past
// one digit, int subclasses and bools, compare-and-jump both ways and
// backwards, globals and builtins rebound or shadowed while code that
// loads them runs, unbound locals in each superinstruction (the error's
// position, too), the frame memory and recursion limits, tracing switched
// on by a finaliser in the middle of a function, and the instruction
// offsets (f_lasti) a finaliser sees in its callers. Each function is
// called 60 times before the checked call so that its code is specialised.
// It prints only what native python3.11 prints the same. It was written
// for resume-fast-loop-wasmeval.patch, a second dispatch loop since
// dropped (wasm/python/README.md, "Speed flags"); it checks the eval loop
// now.
const specializedSrc = `import sys, traceback

def P(*a):
    print(*a)

def warm(fn, *args):
    for _ in range(60):
        fn(*args)

def add(a, b):
    return a + b
def sub(a, b):
    return a - b
def cmp(a, b):
    if a < b:
        return -1
    if a > b:
        return 1
    return 0
warm(add, 1, 2)
warm(sub, 5, 3)
warm(cmp, 1, 2)
pairs = ((1, 2), (250, 10), (-5, -300), (2**30 - 1, 1), (-2**30 + 1, -1), (2**62, 2**62),
         (-2**100, 1), (True, 2), (1, True), (0, 0), (1.5, 1), (2**40, -2**40))
P('add', [add(a, b) for a, b in pairs])
P('sub', [sub(a, b) for a, b in pairs])
P('cmp', [cmp(a, b) for a, b in pairs])
class I(int):
    def __add__(self, o):
        return 'I+'
P('int subclass', add(I(3), 4), add(3, I(4)), sub(I(3), I(1)), cmp(I(1), 2))
try:
    add(1, 'x')
except TypeError as e:
    P('add error', e)

def count(k):
    i = 0
    t = 0
    while i < k:
        t = t + i
        i = i + 1
    return t
warm(count, 5)
P('while', count(1000), count(0), count(-3))

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
warm(fib, 8)
P('fib', fib(22))
def step(x):
    return x + 1
def rebinder(n):
    global step
    if n == 3:
        step = lambda x: x + 100
    return step(n)
def many_steps(k):
    t = 0
    i = 0
    while i < k:
        t = t + rebinder(i)
        i = i + 1
    return t
for _ in range(60):
    step = lambda x: x + 1
    many_steps(2)
P('global rebound mid-run', many_steps(6))
def uses_len(x):
    return len(x)
warm(uses_len, 'ab')
len = lambda x: 'shadowed'
P('builtin shadowed', uses_len('abc'))
del len
P('builtin back', uses_len('abc'))
f = fib
del fib
try:
    f(3)
except NameError as e:
    P('global deleted', e)

def ub_ff(flag):
    if flag > 0:
        a = 1
    b = 2
    return a + b
def ub_ff2(flag):
    if flag > 0:
        b = 1
    a = 2
    return a + b
def ub_ff3(flag):
    if flag > 0:
        b = 1
    return flag + b
def ub_ff4(flag):
    if flag > 0:
        a = 1
    return a + flag
def ub_fc(flag):
    if flag > 0:
        a = 1
    return a + 1
def ub_cf(flag):
    if flag > 0:
        a = 1
    return 1 + a
def ub_sf(flag):
    if flag > 0:
        a = 1
    b = flag
    return b, a
def ub_f(flag):
    if flag > 0:
        a = 1
    return a
for fn in (ub_ff, ub_ff2, ub_ff3, ub_ff4, ub_fc, ub_cf, ub_sf, ub_f):
    warm(fn, 1)
    try:
        fn(0)
    except UnboundLocalError as e:
        tb = e.__traceback__.tb_next
        pos = list(tb.tb_frame.f_code.co_positions())[tb.tb_lasti // 2]
        P('unbound', fn.__name__, e, tb.tb_lineno, tb.tb_lasti, pos)

def deep(n):
    return 0 if n == 0 else deep(n - 1) + 1
warm(deep, 5)
old = sys.getrecursionlimit()
sys.setrecursionlimit(25000)
P('deep', deep(20000))
sys.setrecursionlimit(old)
def wide(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p):
    x0 = x1 = x2 = x3 = x4 = x5 = x6 = x7 = x8 = x9 = a
    return a + p + x9
def wide_deep(n):
    return 0 if n == 0 else wide_deep(n - 1) + wide(*range(16))
warm(wide_deep, 3)
sys.setrecursionlimit(5000)
P('frame memory chunks', wide_deep(4000))
sys.setrecursionlimit(old)
def over(n):
    return over(n + 1) + 1
try:
    over(0)
except RecursionError as e:
    P('over', e)

events = []
def tracer(frame, event, arg):
    if frame.f_code.co_filename == '<edge>':
        events.append((event, frame.f_code.co_name, frame.f_lineno))
    return tracer
seen = []
class Tr:
    def __init__(self, on):
        self.on = on
    def __del__(self):
        f = sys._getframe(1)
        seen.append((f.f_code.co_name, f.f_lineno, f.f_lasti, f.f_back.f_code.co_name, f.f_back.f_lasti))
        seen.append(f)
        if self.on:
            sys.settrace(tracer)
            f.f_trace = tracer
def victim(x, n):
    x = n
    y = x + 1
    z = y - 1
    return z
def vcaller(n, on):
    return victim(Tr(on), n) + 1
for _ in range(60):
    vcaller(1, False)
    seen.clear()
r = vcaller(2, True)
sys.settrace(None)
kept = seen.pop()
P('tracing from a finaliser', r, seen, events)
P('kept frame', kept.f_code.co_name, kept.f_lineno, kept.f_lasti, sorted(kept.f_locals.items()))
`

// TestSpecializedMatchesNative: the specialised instructions of
// specializedSrc, and the ways off their common paths, behave as in
// Debian's python3.11: results, errors and their positions, recursion
// limits, trace events and the instruction offsets a finaliser sees.
func TestSpecializedMatchesNative(t *testing.T) {
	driver := "exec(compile(" + strconv.Quote(specializedSrc) + ", '<edge>', 'exec'), {'__name__': '__edge__'})\n"
	matchesNative(t, driver, "add [3, 260, -305,", "while 499500 0 0", "fib 17711",
		"global rebound mid-run", "builtin shadowed shadowed", "unbound ub_sf", "deep 20000",
		"frame memory chunks", "over maximum recursion depth exceeded", "tracing from a finaliser 3 [(", "kept frame victim")
}
