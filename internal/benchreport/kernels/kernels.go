// Package kernels holds the typical-code kernels that make bench runs in
// wasmeval (runtimes/python's BenchmarkKernel) and in Pyodide
// (internal/benchreport/pyodide's BenchmarkPyodideKernel), against native
// python3.11, so that a change to the interpreter is judged on more than
// fib and a module-level loop: method and builtin calls, small functions,
// a loop in a function, objects, strings, a generator and comprehensions.
// Each kernel is a call of a function that Setup defines, and takes tens
// of milliseconds.
package kernels

// Setup defines the kernels' functions; run it once in a session before
// the kernels.
const Setup = `class P:
    def __init__(self, x):
        self.x = x
    def get(self):
        return self.x

def f(o, n):
    if n:
        return o.get() + len([n])
    return 0

def k_calls():
    o = P(3)
    t = 0
    for i in range(300000):
        t += f(o, i)
    return t

def add(a, b):
    return a + b

def k_add():
    t = 0
    for i in range(300000):
        t = add(t, i)
    return t

def k_loop():
    t = 0
    for i in range(500000):
        t += i
    return t

def k_objs():
    t = 0
    for i in range(100000):
        t += P(i).get()
    return t

def up(x):
    return x.upper() + "x"

def k_strs():
    n = 0
    for w in ["ab", "cd", "ef", "gh"] * 50000:
        n += len(up(w))
    return n

def gen(n):
    for i in range(n):
        yield i

def k_gen():
    return sum(gen(300000))

def k_comp():
    n = 0
    for _ in range(30):
        d = {i: str(i) for i in range(3000)}
        n += len([v for k, v in d.items() if k % 3])
    return n
`

// A Kernel is one benchmark's cell: Code calls a function of Setup.
type Kernel struct {
	Name string // the sub-benchmark's name=
	Code string
	What string // for docs/benchmarks.md
}

// All are the kernels, in the order make bench reports them.
var All = []Kernel{
	{"calls", "k_calls()", "a method and a builtin called from a function, 300,000 times"},
	{"add", "k_add()", "a two-line function called 300,000 times"},
	{"loop", "k_loop()", "a 500,000-iteration `for` loop in a function"},
	{"objs", "k_objs()", "100,000 objects made and read"},
	{"strs", "k_strs()", "`str.upper` and `+` in a function, 200,000 times"},
	{"gen", "k_gen()", "a generator of 300,000 values summed"},
	{"comp", "k_comp()", "dict and list comprehensions, 30 times 3,000 items"},
}
