package attack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// deep nests its cell under a recursion limit raised as far as the session
// allows (the prelude caps it at memory cap / 2 KiB), and prints what
// native CPython 3.11 would raise, or "ok".
func deep(name, code, want string) attack {
	var b strings.Builder
	b.WriteString("import sys\nsys.setrecursionlimit(10**6)\ntry:\n")
	for _, line := range strings.Split(code, "\n") {
		b.WriteString("    " + line + "\n")
	}
	b.WriteString("    print('ok')\nexcept BaseException as e:\n    print(type(e).__name__ + ':', e)\n")
	return attack{name: name, lang: "py", code: b.String(), timeout: 30, status: ok, within: 25 * time.Second,
		want: []string{want}, never: []string{"crashed", "rolled back", "restarted", "timed out"}}
}

// TestDeepCRecursion: recursion through C code (repr, comparisons, json,
// pickle, copy, the parser and the compiler, re, dunder methods, chained
// generators) under a raised recursion limit ends as native CPython 3.11
// ends it at its default limit: RecursionError (or MemoryError, or the
// parser's SyntaxError), with the session's state intact, never as a wasm
// stack overflow that rolls the session back. Where native CPython has no
// check and crashes (a chain of generators), the cell gets RecursionError
// too; deallocating a chain of a million objects that own one another
// does not overflow either (native CPython crashes on the last three). The suite runs on both engines (make test).
func TestDeepCRecursion(t *testing.T) {
	const nested = "a = []\nfor i in range(100000): a = [a]\n"
	run(t, []attack{
		py("state before", `kept = 'still here'`, ok),
		deep("repr of a deep list", nested+"repr(a)", "RecursionError: maximum recursion depth exceeded while getting the repr of an object"),
		deep("str of a deep tuple", "a = ()\nfor i in range(100000): a = (a,)\nstr(a)", "RecursionError"),
		deep("repr of a deep dict", "a = {}\nfor i in range(100000): a = {1: a}\nrepr(a)", "RecursionError"),
		deep("json.dumps", "import json\n"+nested+"json.dumps(a)", "RecursionError: maximum recursion depth exceeded while encoding a JSON object"),
		deep("json.dumps with indent", "import json\n"+nested+"json.dumps(a, indent=1)", "RecursionError"),
		deep("json.loads of deep arrays", "import json\njson.loads('[' * 100000 + ']' * 100000)", "RecursionError: maximum recursion depth exceeded while decoding a JSON array"),
		deep("json.loads of deep objects", `import json
json.loads('{"a":' * 100000 + '1' + '}' * 100000)`, "RecursionError"),
		deep("pickle.dumps", "import pickle\n"+nested+"pickle.dumps(a)", "RecursionError: maximum recursion depth exceeded while pickling an object"),
		deep("copy.deepcopy", "import copy\n"+nested+"copy.deepcopy(a)", "RecursionError"),
		deep("marshal.dumps", "import marshal\n"+nested+"marshal.dumps(a)", "ValueError: object too deeply nested to marshal"),
		deep("comparison of deep lists", "a = []; b = []\nfor i in range(100000): a = [a]; b = [b]\na == b", "RecursionError: maximum recursion depth exceeded in comparison"),
		deep("eval of deep parentheses", "eval('(' * 50000 + ')' * 50000)", "SyntaxError: too many nested parentheses"),
		deep("eval of deep brackets", "eval('[' * 50000 + ']' * 50000)", "SyntaxError: too many nested parentheses"),
		deep("ast.literal_eval", "import ast\nast.literal_eval('[' * 50000 + ']' * 50000)", "SyntaxError: too many nested parentheses"),
		deep("eval of deep unary minus", "eval('-' * 100000 + '1')", "MemoryError"),
		deep("compile of a long sum", "compile('1' + '+1' * 100000, 'x', 'eval')", "RecursionError: maximum recursion depth exceeded during compilation"),
		deep("ast.parse of a long sum", "import ast\nast.parse('1' + '+1' * 100000)", "RecursionError: maximum recursion depth exceeded during ast construction"),
		deep("eval of a long attribute chain", "eval('a' + '.b' * 100000)", "RecursionError: maximum recursion depth exceeded during compilation"),
		deep("re.compile of nested groups", "import re\nre.compile('(' * 50000 + ')' * 50000)", "RecursionError"),
		deep("a deep __repr__ chain", `class C:
    def __init__(s, n): s.n = n
    def __repr__(s): return 'C(%r)' % (s.n,)
x = 0
for i in range(100000): x = C(x)
repr(x)`, "RecursionError"),
		deep("a deep __eq__ chain", `class C:
    def __init__(s, n): s.n = n
    def __eq__(s, o): return s.n == o.n
x = y = 0
for i in range(100000): x = C(x); y = C(y)
x == y`, "RecursionError"),
		deep("recursion through map", "def f(n): return 0 if n == 0 else list(map(f, [n - 1]))[0]\nf(60000)", "RecursionError"),
		deep("recursion through __getattr__", "class C:\n    def __getattr__(s, n): return getattr(s, n + 'x')\nC().a", "RecursionError"),
		deep("recursion through sorted's key", "def k(x): return sorted([x], key=k)\nsorted([1], key=k)", "RecursionError"),
		deep("isinstance of a deep tuple", "t = int\nfor i in range(100000): t = (t,)\nisinstance(1, t)", "RecursionError: maximum recursion depth exceeded in __instancecheck__"),
		deep("functools.reduce over nested partials", `import functools
f = functools.reduce(lambda f, _: functools.partial(f), range(100000), lambda: 1)
f()`, "ok"),
		deep("a deep chain of generators", "x = iter([1])\nfor i in range(10000): x = (y for y in x)\nlist(x)", "RecursionError"),
		deep("freeing 150,000 nested generators", "x = iter([1])\nfor i in range(150000): x = (y for y in x)\ndel x", "ok"),
		deep("freeing 500,000 nested maps", "x = [1]\nfor i in range(500000): x = map(abs, x)\ndel x", "ok"),
		deep("python recursion stays deep", "def g(n): return n if n == 50000 else g(n + 1)\nprint(g(0))", "50000"),
		py("the state survives", `print(kept)`, ok, "still here"),
	})
}

// TestUncheckedCRecursionRollsBack: recursion through C code that CPython
// never checks (hash of a tuple nested a million deep) overflows the wasm
// stack. That ends the instance only: the cell fails saying the runtime
// crashed and the state was rolled back, the session keeps what earlier
// cells made (and not what the crashing cell made before it crashed), the
// host process lives on, and another session keeps its state. make test
// runs it on both engines.
func TestUncheckedCRecursionRollsBack(t *testing.T) {
	testenv.RequirePython(t)
	_, bystander := setUpSession(t, "py", "mine = 'bystander state'")
	_, s := setUpSession(t, "py", "kept = 'still here'")
	for _, code := range []string{
		"lost = 1\nt = ()\nfor i in range(1000000): t = (t,)\nprint(hash(t))",
		"import sys\nsys.setrecursionlimit(10**6)\nlost = 1\nt = ()\nfor i in range(1000000): t = (t,)\nprint(hash(t))",
	} {
		start := time.Now()
		out, status := eval(t, s, "py", code, 60)
		if status != fail || !strings.Contains(out, "the Python runtime crashed") || !strings.Contains(out, "rolled back to before this cell") {
			t.Errorf("%q: status %s, want an error that says the runtime crashed and was rolled back:\n%s", code, status, clip(out))
		}
		if took := time.Since(start); took > testenv.Stretch(30*time.Second) {
			t.Errorf("%q took %s", code, took)
		}
		if out, status := eval(t, s, "py", "print(kept, 'lost' in globals())", 10); status != ok || strings.TrimSpace(out) != "still here False" {
			t.Errorf("after %q the session holds: %s %q", code, status, out)
		}
	}
	if out, status := eval(t, bystander, "py", "print(mine)", 10); status != ok || strings.TrimSpace(out) != "bystander state" {
		t.Errorf("the bystander session lost its state: %s %q", status, out)
	}
}
