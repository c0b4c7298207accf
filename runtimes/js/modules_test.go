package js_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModules(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"lib.js":         "exports.add = (a, b) => a + b\nmodule.exports.name = 'lib'\n",
		"fn.cjs":         "module.exports = function greet(n) { return 'hi ' + n }\n",
		"data.json":      `{"x": [1, 2], "ok": true}`,
		"esm.mjs":        "export const pi = 3.14\nexport function sq(x) { return x * x }\nexport default class Shape {}\nlet counter = 0\nexport function bump() { return ++counter }\nexport { counter as count, pi as PI }\n",
		"reexport.mjs":   "export * from './esm.mjs'\nexport { sq as square } from './esm.mjs'\nexport * as all from './esm.mjs'\nexport default 42\n",
		"sub/a.js":       "const b = require('./b')\nmodule.exports = { fromB: b.value, dir: __dirname.endsWith('/sub'), file: __filename.endsWith('/sub/a.js') }\n",
		"sub/b.js":       "exports.value = 'b in sub'\n",
		"sub/index.js":   "module.exports = 'index'\n",
		"cycle/a.js":     "exports.early = 'a early'\nconst b = require('./b')\nexports.late = 'a late'\nexports.sawB = b.sawA\n",
		"cycle/b.js":     "const a = require('./a')\nexports.sawA = a.early + ' / ' + a.late\n",
		"throws.js":      "function boom() {\n  throw new Error('module boom')\n}\nboom()\n",
		"bad.js":         "const x = ;\n",
		"uses-import.js": "import { add } from './lib.js'\nimport data from './data.json' with { type: 'json' }\nexport const three = add(1, 2) + data.x.length - 2\n",
	})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	tests := []struct{ code, want string }{
		{"const lib = require('./lib'); [lib.add(2, 3), lib.name]", "[ 5, 'lib' ]"},
		{"require('./fn.cjs')('you')", "'hi you'"},
		{"require('./data.json')", "{ x: [ 1, 2 ], ok: true }"},
		{"require('./data')", "{ x: [ 1, 2 ], ok: true }"},
		{"require('./sub/a')", "{ fromB: 'b in sub', dir: true, file: true }"},
		{"require('./sub')", "'index'"},
		{"require('./cycle/a')", "{ early: 'a early', late: 'a late', sawB: 'a early / undefined' }"},
		{"import Shape, { pi, sq, PI, bump, count } from './esm.mjs'\n[pi, sq(3), PI, typeof Shape, bump(), bump(), count]", "[ 3.14, 9, 3.14, 'function', 1, 2, 0 ]"}, // imports are copies, not live bindings,
		{"[pi, Shape.name]", "[ 3.14, 'Shape' ]"},
		{"import * as ns from './esm.mjs'; Object.keys(ns).sort()", "[ 'PI', 'bump', 'count', 'default', 'pi', 'sq' ]"},
		{"ns.count", "2"}, // the namespace's getters are live
		{"import greet from './fn.cjs'; import { add } from './lib.js'; [greet('x'), add(1, 1)]", "[ 'hi x', 2 ]"},
		{"import data from './data.json'; data.ok", "true"},
		{"import * as re from './reexport.mjs'; [re.default, re.pi, re.square(4), re.all.PI]", "[ 42, 3.14, 16, 3.14 ]"},
		{"import { three } from './uses-import.js'; three", "3"},
		{"const m = await import('./esm.mjs'); m.sq(5)", "25"},
		{"import './lib.js'; 'side effects only'", "'side effects only'"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
	want(t, "throws.js", s.fails("require('./throws.js')"), "Uncaught Error: module boom", "at boom ("+root+"/throws.js:2:9)", "at "+root+"/throws.js:4:")
	want(t, "bad.js", s.fails("require('./bad.js')"), "SyntaxError: Unexpected token ; ("+root+"/bad.js:1:11)")
	want(t, "missing", s.fails("require('./missing')"), "Cannot find module './missing'", "code: 'MODULE_NOT_FOUND'")
}

func TestModulesAreReadAgainWhenTheyChange(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"v.js": "module.exports = { v: 1, loaded: Date.now() }"})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	if got, _ := s.ok("require('./v').v"); got != "1" {
		t.Fatalf("v = %s", got)
	}
	if got, _ := s.ok("require('./v') === require('./v.js')"); got != "true" {
		t.Errorf("an unchanged module was loaded again: %s", got)
	}
	writeFiles(t, root, map[string]string{"v.js": "module.exports = { v: 2 }"})
	// A rewrite within the file system's time resolution is still seen when
	// the size changed; make the time differ too.
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(root, "v.js"), later, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ok("require('./v').v"); got != "2" {
		t.Errorf("after the change: v = %s, want 2", got)
	}
	if got, _ := s.ok("import { v } from './v.js'; v"); got != "2" {
		t.Errorf("import after the change: v = %s, want 2", got)
	}
}

// TestModulesLowerForAwait: required and imported modules may use for
// await loops and async generators, which goja does not parse: they are
// lowered as a cell's are (lower.go), their exports (async generators
// included) and live bindings work, esbuild's helpers stay the module's
// own, and a throw in a lowered module shows the module's own line.
func TestModulesLowerForAwait(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"gen.js": "async function* count(n) {\n  for (let i = 0; i < n; i++) yield i\n}\n" +
			"async function sum(n) {\n  let s = 0\n  for await (const v of count(n)) s += v\n  return s\n}\nmodule.exports = { count, sum }\n",
		"pages.mjs": "export let seen = 0\nexport async function* pages() {\n  yield [1, 2]\n  yield [3]\n}\n" +
			"export async function all() {\n  const out = []\n  for await (const p of pages()) { out.push(...p); seen++ }\n  return out\n}\n" +
			"export const label = 'pages', other = 'x'\nexport default class Reader { async *[Symbol.asyncIterator]() { yield 'r' } }\nconst hidden = 1\n",
		"uses.mjs": "import { all, seen } from './pages.mjs'\nexport async function twice() { const a = await all(); const b = await all(); return [a.length + b.length, seen] }\n",
		"throws.mjs": "export async function* bad() {\n  yield 1\n  throw new Error('from the generator')\n}\n" +
			"export async function drain() {\n  for await (const v of bad()) {}\n}\n",
		"fake.js": "// mentions for await and async function* only in a comment\nmodule.exports = 'plain'\n",
	})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	tests := []struct{ code, want string }{
		{"const g = require('./gen.js'); await g.sum(5)", "10"},
		{"const out = []; for await (const v of require('./gen.js').count(3)) out.push(v); out", "[ 0, 1, 2 ]"},
		{"import { all, pages, label, other } from './pages.mjs'; [await all(), typeof pages().next, label, other]", "[ [ 1, 2, 3 ], 'function', 'pages', 'x' ]"},
		{"import Reader from './pages.mjs'; const r = []; for await (const v of new Reader()) r.push(v); r", "[ 'r' ]"},
		{"const m = await import('./pages.mjs'); [Object.keys(m).sort(), m.seen]", "[ [ 'all', 'default', 'label', 'other', 'pages', 'seen' ], 2 ]"},
		{"import { twice } from './uses.mjs'; await twice()", "[ 6, 6 ]"},
		{"require('./fake.js')", "'plain'"},
		{"typeof __forAwait === 'undefined' || !Object.keys(globalThis).includes('__forAwait')", "true"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
	stderr := s.fails("import { drain } from './throws.mjs'; await drain()")
	want(t, "a throw in a lowered module", stderr, "Error: from the generator", "throws.mjs:3:")
}
