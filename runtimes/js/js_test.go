package js_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

var snippets = runtimetest.Snippets{
	PrintHello:      `console.log("hello")`,
	WriteStderr:     `console.error("oops")`,
	DefineState:     `let x = 41`,
	ReadState:       `x + 1`,
	LastExpression:  `6 * 7`,
	NoResult:        `const y = 5`,
	Raise:           `throw new Error("boom")`,
	SyntaxError:     `let = ;`,
	InfiniteLoop:    `while (true) {}`,
	ReadFile:        `print(await read("data.txt"))`,
	ReadPasswd:      `print(read("/etc/passwd"))`,
	ReadOutside:     `print(read("{{outside}}"))`,
	ReadLink:        `print(await read("link.txt"))`,
	PrintEnv:        `print(process.env.WASMEVAL_TEST_VAR)`,
	PrintHostSecret: `print(process.env.WASMEVAL_HOST_SECRET)`,
	DisplayJSON:     `display({a: 1, b: [1, 2]})`,
	DisplayMarkdown: `display({type: "markdown", text: "# Title"})`,
	PrintTime:       `print(Math.floor(Date.now() / 1000))`,
	PrintRandom:     `print(Math.random())`,
}

func TestConformance(t *testing.T) {
	runtimetest.Run(t, js.New(), snippets)
}

// session is an instance for one test, with its root.
type session struct {
	t    *testing.T
	inst runtimes.Instance
	root string
}

func newSession(t *testing.T, opts runtimes.InstanceOptions) *session {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	inst, err := js.New().NewInstance(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return &session{t: t, inst: inst, root: opts.Root}
}

func (s *session) runCtx(ctx context.Context, code string) (runtimes.Outcome, *runtimetest.Recorder) {
	s.t.Helper()
	rec := &runtimetest.Recorder{}
	out, err := s.inst.Run(ctx, code, rec)
	if err != nil {
		s.t.Fatalf("Run(%q): %v", code, err)
	}
	return out, rec
}

func (s *session) run(code string) (runtimes.Outcome, *runtimetest.Recorder) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.runCtx(ctx, code)
}

// ok runs a cell that must succeed and returns its result text ("" for
// none) and stdout.
func (s *session) ok(code string) (result, stdout string) {
	s.t.Helper()
	out, rec := s.run(code)
	if out.Failed {
		s.t.Fatalf("Run(%q) failed: %s", code, rec.StderrText())
	}
	if r := rec.Results(); len(r) > 0 {
		result = r[0]["text/plain"]
	}
	return result, rec.StdoutText()
}

// fails runs a cell that must fail and returns its stderr.
func (s *session) fails(code string) string {
	s.t.Helper()
	out, rec := s.run(code)
	if !out.Failed {
		s.t.Fatalf("Run(%q) succeeded (stdout %q, results %v), want failure", code, rec.StdoutText(), rec.Results())
	}
	return rec.StderrText()
}

// want fails the test unless got contains every one of subs.
func want(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(got, sub) {
			t.Errorf("%s = %q, want it to contain %q", what, got, sub)
		}
	}
}

func TestDeclarationsPersist(t *testing.T) {
	tests := []struct {
		name  string
		cells []string
		want  string
	}{
		{"let const var function class", []string{
			"let a = 1; const b = 2; var c = 3; function f() { return a + b + c } class K { get v() { return 4 } }",
			"[a, b, c, f(), new K().v]",
		}, "[ 1, 2, 3, 6, 4 ]"},
		{"with top-level await", []string{
			"let a = await Promise.resolve(1); const b = 2; var c = 3; function f() { return a + b + c } class K { get v() { return 4 } }",
			"[a, b, c, f(), new K().v]",
		}, "[ 1, 2, 3, 6, 4 ]"},
		{"with a bare return", []string{
			"let a = 1; const { b, c: [d] } = { b: 2, c: [3] }; class K {}\nif (a) return 'early'\nlet never = 1",
			"[a, b, d, typeof K, never]",
		}, "[ 1, 2, 3, 'function', undefined ]"},
		{"function hoisted in an await cell", []string{
			"const r = early(); await null; function early() { return 'hoisted' }",
			"[r, early()]",
		}, "[ 'hoisted', 'hoisted' ]"},
		{"var in nested blocks of an await cell", []string{
			"for (var i = 0; i < 3; i++) { await null } if (true) { var inner = 'yes' }",
			"[i, inner]",
		}, "[ 3, 'yes' ]"},
		{"redeclare in a later cell", []string{
			"const k = 1; let l = 1; class M {}",
			"const k = 2; let l = 2; class M { static x = 3 }",
			"await null; const k = 3; let l = 3",
			"[k, l, M.x]",
		}, "[ 3, 3, 3 ]"},
		{"let without initializer resets", []string{
			"let u = 5",
			"let u",
			"u",
		}, "undefined"},
		{"closures see later assignments", []string{
			"let n = 1; const get = () => n",
			"n = 2; await null; n = 3",
			"get()",
		}, "3"},
		{"block scoped stay local", []string{
			"{ let hidden = 1 } await null; { const hidden2 = 2 }",
			"[typeof hidden, typeof hidden2]",
		}, "[ 'undefined', 'undefined' ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, runtimes.InstanceOptions{})
			last := len(tt.cells) - 1
			for _, c := range tt.cells[:last] {
				s.ok(c)
			}
			if got, _ := s.ok(tt.cells[last]); got != tt.want && !(tt.want == "undefined" && got == "") {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResult(t *testing.T) {
	tests := []struct{ code, want string }{
		{"1 + 1", "2"},
		{"'it\\'s'", `"it's"`},
		{"'a\\nb'", `'a\nb'`},
		{"({ a: 1, b: 'x', c: [1, 2, 3], d: { e: { f: { g: 1 } } } })", "{ a: 1, b: 'x', c: [ 1, 2, 3 ], d: { e: { f: [Object] } } }"},
		{"new Map([['a', 1]])", "Map(1) { 'a' => 1 }"},
		{"new Set([1, 'x'])", "Set(2) { 1, 'x' }"},
		{"new Error('boom')", "Error: boom\n    at <cell>:1:1"},
		{"[undefined, null, -0, 10n, Symbol('s')]", "[ undefined, null, -0, 10n, Symbol(s) ]"},
		{"let o = { x: 1 }; o.self = o; o", "<ref *1> { x: 1, self: [Circular *1] }"},
		{"undefined", ""},
		{"let z = 3", ""},
		{"await null; return { r: 1 }", "{ r: 1 }"},
		{"await null; return Promise.resolve(2)", "2"},
		{"await null; Promise.resolve(2)", "Promise { 2 }"},
		{"await null; ({ s: 'last' })", "{ s: 'last' }"},
		{"await null; undefined", ""},
		{"if (true) { 'completion' }", "'completion'"},
		{"Object.create(null)", "[Object: null prototype] {}"},
		{"(function named() {})", "[Function: named]"},
		{"class Q extends Array {}; Q", "[class Q extends Array]"},
		{"new Date(0)", "1970-01-01T00:00:00.000Z"},
		{"/re/g", "/re/g"},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for i, tt := range tests {
		// Cell i+1 of the session: stacks name it <cell-N>.
		tt.want = strings.ReplaceAll(tt.want, "<cell>", fmt.Sprintf("<cell-%d>", i+1))
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %q\nwant %q", tt.code, got, tt.want)
		}
	}
}

func TestErrorStacksPointIntoTheCell(t *testing.T) {
	tests := []struct {
		code string
		want []string
	}{
		{"throw new Error('boom')", []string{"Uncaught Error: boom\n    at <cell>:1:7\n"}},
		{"\n\n  throw new TypeError('t')", []string{"Uncaught TypeError: t\n    at <cell>:3:9"}},
		{"function inner() {\n  throw new Error('deep')\n}\nfunction outer() { inner() }\nouter()",
			[]string{"Error: deep", "at inner (<cell>:2:9)", "at outer (<cell>:4:", "at <cell>:5:"}},
		{"await null\nthrow new RangeError('after await')", []string{"Uncaught RangeError: after await\n    at <cell>:2:7"}},
		{"await null\nfunction f() {\n  throw new Error('in f')\n}\nf()", []string{"at f (<cell>:3:9)", "at <cell>:5:"}},
		{"const p = new Promise((_, reject) => setTimeout(() => reject(new Error('later')), 5))\nawait p",
			[]string{"Uncaught Error: later", "at <cell>:1:"}},
		{"Promise.reject(new Error('unhandled'))", []string{"Uncaught Error: unhandled", "<cell>:1:16"}},
		{"setTimeout(() => {\n  throw new Error('in a timer')\n}, 1)", []string{"Uncaught Error: in a timer", "<cell>:2:9"}},
		{"throw 'a string'", []string{"Uncaught 'a string'\n    at <cell>:1:1"}},
		{"await null\n  let x = ;", []string{"<cell>:2\n  let x = ;\n          ^\n", "SyntaxError: ", "at <cell>:2:11"}},
		{"null.x", []string{"TypeError: Cannot read property 'x' of", "at <cell>:1:"}},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for i, tt := range tests {
		// Cell i+1 of the session: stacks name it <cell-N>.
		for j := range tt.want {
			tt.want[j] = strings.ReplaceAll(tt.want[j], "<cell>", fmt.Sprintf("<cell-%d>", i+1))
		}
		want(t, tt.code, s.fails(tt.code), tt.want...)
	}
	// The session still works.
	if got, _ := s.ok("1"); got != "1" {
		t.Errorf("after errors: result = %q, want 1", got)
	}
}

func TestEventLoop(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	tests := []struct {
		code, stdout, result string
	}{
		{"setTimeout(() => print('b'), 20); setTimeout(() => print('a'), 10); print('sync')", "sync\na\nb\n", ""},
		{"await new Promise(r => setTimeout(r, 10)); 'waited'", "", "'waited'"},
		{"let n = 0; const id = setInterval(() => { print(++n); if (n === 3) clearInterval(id) }, 1)", "1\n2\n3\n", ""},
		{"queueMicrotask(() => print('micro')); Promise.resolve().then(() => print('then')); setTimeout(() => print('macro'), 0); print('sync')",
			"sync\nmicro\nthen\nmacro\n", ""},
		{"const t = setTimeout(() => print('never'), 5); clearTimeout(t)", "", ""},
		{"setTimeout(() => print('unref never runs'), 50).unref(); 'done'", "", "'done'"},
		{"setImmediate((a, b) => print(a + b), 1, 2); void 0", "3\n", ""},
		{"process.nextTick(() => print('tick'))", "tick\n", ""},
		{"const p = Promise.reject(new Error('x')); await null; await p.catch(e => 'caught ' + e.message)", "", "'caught x'"},
	}
	for _, tt := range tests {
		result, stdout := s.ok(tt.code)
		if stdout != tt.stdout || result != tt.result {
			t.Errorf("%s\n got stdout %q result %q\nwant stdout %q result %q", tt.code, stdout, result, tt.stdout, tt.result)
		}
	}
	// A promise nothing can settle fails the cell instead of hanging it.
	want(t, "pending forever", s.fails("await new Promise(() => {})"), "never settles")
}

func TestTimeoutCancelsTimersAndKeepsState(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("let kept = 'state'")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, rec := s.runCtx(ctx, "setInterval(() => print('tick'), 1); let spins = 0; await null; while (true) { spins++ }")
	if !out.Failed || !out.Interrupted {
		t.Fatalf("outcome = %+v, want Failed and Interrupted", out)
	}
	if d := time.Since(start); d > testenv.Stretch(10*time.Second) {
		t.Errorf("the interrupted cell returned after %v", d)
	}
	want(t, "stderr", rec.StderrText(), "Interrupted: the cell was stopped", "at <cell-2>:1:")
	result, stdout := s.ok("await new Promise(r => setTimeout(r, 20)); [kept, spins > 0]")
	if result != "[ 'state', true ]" || stdout != "" {
		t.Errorf("after the timeout: result %q stdout %q, want [ 'state', true ] and no ticks", result, stdout)
	}
	// A timeout while the cell waits for a timer.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	out, rec = s.runCtx(ctx2, "await new Promise(r => setTimeout(r, 60000))")
	if !out.Interrupted {
		t.Errorf("waiting cell: outcome = %+v, want Interrupted", out)
	}
	want(t, "stderr", rec.StderrText(), "Interrupted")
	if got, _ := s.ok("kept"); got != "'state'" {
		t.Errorf("kept = %q", got)
	}
}

func TestConsoleAndDisplay(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	_, rec := s.run(`console.log("%s is %d years", "Bob", 42, {extra: true})
console.info([1, 2]); console.debug(null)
console.warn("careful"); console.error(new Error("bad").message)
print("p", 1)
display(42, "text", [1, 2], {type: "image", data: "aGk=", mimeType: "image/png"}, new Map([[1, 2]]))`)
	want(t, "stdout", rec.StdoutText(), "Bob is 42 years { extra: true }\n[ 1, 2 ]\nnull\np 1\n")
	if got := rec.StderrText(); got != "careful\nbad\n" {
		t.Errorf("stderr = %q", got)
	}
	d := rec.Displays()
	wantBundles := []runtimes.Bundle{
		{"text/plain": "42"}, {"text/plain": "text"}, {"application/json": "[1,2]"},
		{"image/png": "aGk="}, {"text/plain": "Map(1) { 1 => 2 }"},
	}
	if len(d) != len(wantBundles) {
		t.Fatalf("displays = %v, want %v", d, wantBundles)
	}
	for i := range d {
		if len(d[i]) != len(wantBundles[i]) {
			t.Errorf("display %d = %v, want %v", i, d[i], wantBundles[i])
		}
		for k, v := range wantBundles[i] {
			if d[i][k] != v {
				t.Errorf("display %d = %v, want %v", i, d[i], wantBundles[i])
			}
		}
	}
}

func TestProcess(t *testing.T) {
	root := t.TempDir()
	s := newSession(t, runtimes.InstanceOptions{Root: root, Env: map[string]string{"LANG": "C.UTF-8"}})
	if got, _ := s.ok("[process.cwd(), process.argv, Object.keys(process.env)]"); got != "[ '"+root+"', [], [ 'LANG' ] ]" {
		t.Errorf("process = %s", got)
	}
	want(t, "exit(3)", s.fails("print('before'); process.exit(3); print('after')"), "process.exit(3)")
	out, rec := s.run("print('before'); process.exit(0); print('after')")
	if out.Failed || rec.StdoutText() != "before\n" {
		t.Errorf("exit(0): outcome %+v stdout %q, want success and only 'before'", out, rec.StdoutText())
	}
	if got, _ := s.ok("1"); got != "1" {
		t.Errorf("after exit the session is gone: %q", got)
	}
}

func TestClockAndRandom(t *testing.T) {
	at := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	opts := func() runtimes.InstanceOptions {
		return runtimes.InstanceOptions{
			Now:  func() time.Time { return at },
			Rand: strings.NewReader(strings.Repeat("deterministic seed bytes ", 100)),
		}
	}
	a := newSession(t, opts())
	b := newSession(t, opts())
	code := "[new Date().toISOString(), Date.now(), Math.random(), Math.random()]"
	ra, _ := a.ok(code)
	rb, _ := b.ok(code)
	want(t, "result", ra, "'2024-02-29T12:00:00.000Z'", "1709208000000")
	if ra != rb {
		t.Errorf("same clock and seed, different results:\n%s\n%s", ra, rb)
	}
}

func TestReset(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("let gone = 1; globalThis.also = 2; String.prototype.shout = function () { return this + '!' }")
	if err := s.inst.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ok("[typeof gone, typeof also, typeof ''.shout, typeof console.log, typeof setTimeout]"); got != "[ 'undefined', 'undefined', 'undefined', 'function', 'function' ]" {
		t.Errorf("after Reset: %s", got)
	}
}

func Example() {
	ctx := context.Background()
	inst, err := js.New().NewInstance(ctx, runtimes.InstanceOptions{})
	if err != nil {
		panic(err)
	}
	defer inst.Close(ctx)
	rec := &runtimetest.Recorder{}
	inst.Run(ctx, "const n = await Promise.resolve(20)", rec)
	inst.Run(ctx, "console.log('n is', n); ({ double: n * 2, list: [1, 'two'] })", rec)
	fmt.Print(rec.StdoutText())
	fmt.Println(rec.Results()[0]["text/plain"])
	// Output:
	// n is 20
	// { double: 40, list: [ 1, 'two' ] }
}
