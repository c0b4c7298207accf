package js_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// npmTestPackages are what `make npm-testdata` installs into
// npmTestDir (keep both in step with the Makefile).
var npmTestPackages = []string{"lodash", "nanoid", "uuid"}

const npmTestDir = "npm-testdata-1"

// npmTestModules returns the node_modules folder `make npm-testdata`
// filled. A missing install fails the test: it is part of `make test`.
func npmTestModules(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatalf("no home directory to find the npm test packages in: %v", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(cache, "wasmeval-build", npmTestDir, "node_modules")
	for _, p := range npmTestPackages {
		if _, err := os.Stat(filepath.Join(dir, p, "package.json")); err != nil {
			t.Fatalf("the npm package %s is not installed in %s: run `make npm-testdata` (make test does): %v", p, dir, err)
		}
	}
	return dir
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Real packages from npm, in the session root's node_modules: CommonJS
// (lodash), ESM only (nanoid, which imports node:crypto), and conditional
// exports with require and import (uuid).
func TestNpmPackages(t *testing.T) {
	modules := npmTestModules(t)
	root := t.TempDir()
	copyTree(t, modules, filepath.Join(root, "node_modules"))
	writeFiles(t, root, map[string]string{"src/deep/use.mjs": "import _ from 'lodash'\nexport const sum = _.sum([1, 2, 3])\n"})
	s := newSession(t, runtimes.InstanceOptions{Root: root, Rand: zeros{}})
	runChecks(t, s, []check{
		{"const _ = require('lodash'); [_.chunk([1, 2, 3, 4, 5], 2), _.kebabCase('Hello World'), _.VERSION]", "[ [ [ 1, 2 ], [ 3, 4 ], [ 5 ] ], 'hello-world', '4.17.21' ]"},
		{"require('lodash') === require('lodash') && require('lodash/chunk') === require('lodash').chunk", "false"},
		{"require('lodash/chunk')([1, 2, 3], 2)", "[ [ 1, 2 ], [ 3 ] ]"},
		{"import lodash, { uniq } from 'lodash'\n[lodash.uniq === uniq, uniq([1, 1, 2])]", "[ true, [ 1, 2 ] ]"},
		{"import { sum } from './src/deep/use.mjs'; sum", "6"},
		{"import { nanoid, customAlphabet } from 'nanoid'\n[nanoid(), nanoid(5), customAlphabet('ab', 4)()]", "[ 'uuuuuuuuuuuuuuuuuuuuu', 'uuuuu', 'aaaa' ]"},
		{"const { v4, v5, validate } = require('uuid'); [v4(), v5('hello', v5.DNS), validate(v4())]",
			"[\n  '00000000-0000-4000-8000-000000000000',\n  '9342d47a-1bab-5709-9869-c840b2eac501',\n  true\n]"},
		{"import { v4 as v4i, NIL } from 'uuid'; [v4i(), NIL]", "[\n  '00000000-0000-4000-8000-000000000000',\n  '00000000-0000-0000-0000-000000000000'\n]"},
		{"require.resolve('uuid').endsWith('/node_modules/uuid/dist/index.js')", "true"},
		{"const u = await import('uuid'); typeof u.v1", "'function'"},
	})
}

// Node's resolution rules, on packages made for the test.
func TestPackageResolution(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	writeFiles(t, dir, map[string]string{
		// Above the root: never looked at.
		"node_modules/ghost/index.js": "module.exports = 'outside'",
	})
	writeFiles(t, root, map[string]string{
		"node_modules/cond/package.json": `{"name": "cond", "exports": {
			".": {"import": "./esm.mjs", "require": "./cjs.js"},
			"./feature/*": "./lib/*.js",
			"./feature/secret": null,
			"./data.json": "./data.json",
			"./package.json": "./package.json"}}`,
		"node_modules/cond/cjs.js":                                 "module.exports = { kind: 'require' }",
		"node_modules/cond/esm.mjs":                                "export const kind = 'import'",
		"node_modules/cond/lib/x.js":                               "module.exports = 'feature x'",
		"node_modules/cond/lib/secret.js":                          "module.exports = 'secret'",
		"node_modules/cond/data.json":                              `{"n": 1}`,
		"node_modules/cond/internal.js":                            "module.exports = 'internal'",
		"node_modules/order/package.json":                          `{"exports": {"default": "./d.js", "require": "./r.js"}}`,
		"node_modules/order/d.js":                                  "module.exports = 'default first'",
		"node_modules/order/r.js":                                  "module.exports = 'require'",
		"node_modules/nested/package.json":                         `{"exports": {".": [{"worker": "./w.js"}, {"node": {"require": "./n.js"}}, "./d.js"]}}`,
		"node_modules/nested/n.js":                                 "module.exports = 'node require'",
		"node_modules/legacy/package.json":                         `{"name": "legacy", "main": "lib/main"}`,
		"node_modules/legacy/lib/main.js":                          "module.exports = { v: 1 }",
		"node_modules/legacy/extra.js":                             "module.exports = 'extra'",
		"node_modules/idx/index.js":                                "module.exports = 'index'",
		"node_modules/jsonly/index.json":                           `{"json": true}`,
		"node_modules/@scope/pkg/package.json":                     `{"exports": "./main.js"}`,
		"node_modules/@scope/pkg/main.js":                          "module.exports = require('legacy')",
		"node_modules/@scope/pkg/node_modules/legacy/package.json": `{"main": "own.js"}`,
		"node_modules/@scope/pkg/node_modules/legacy/own.js":       "module.exports = 'nested legacy'",
		"node_modules/babel/index.js":                              "Object.defineProperty(exports, '__esModule', { value: true }); exports.default = 'the default'; exports.named = 'named'",
		"esm/meta.mjs":                                             "import { fileURLToPath } from 'node:url'\nimport path from 'node:path'\nexport const dir = path.dirname(fileURLToPath(import.meta.url))\nexport const same = import.meta.dirname === dir && import.meta.filename === dir + '/meta.mjs'\nexport const res = import.meta.resolve('cond')\n",
		"sub/dir/use.js":                                           "module.exports = require('legacy').v",
		"sub/node_modules/only-sub/index.js":                       "module.exports = 'only under sub'",
		"imp/package.json":                                         `{"imports": {"#dep": "./src/dep.js", "#lodash-ish": "legacy"}}`,
		"imp/src/dep.js":                                           "module.exports = 'dep via imports'",
		"imp/main.js":                                              "module.exports = [require('#dep'), require('#lodash-ish').v]",
	})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	runChecks(t, s, []check{
		{"require('cond').kind", "'require'"},
		{"import { kind } from 'cond'; kind", "'import'"},
		{"(await import('cond')).kind", "'import'"},
		{"require('cond/feature/x')", "'feature x'"},
		{"require('cond/data.json').n", "1"},
		{"require('order')", "'default first'"},
		{"require('nested')", "'node require'"},
		{"[require('legacy').v, require('legacy/extra'), require('idx'), require('jsonly').json]", "[ 1, 'extra', 'index', true ]"},
		{"require('@scope/pkg')", "'nested legacy'"},
		{"require('./sub/dir/use.js')", "1"},
		{"require('./imp/main.js')", "[ 'dep via imports', 1 ]"},
		{"require('legacy') === require('legacy')", "true"},
		{"import { dir, same, res } from './esm/meta.mjs'; [dir === process.cwd() + '/esm', same, res === 'file://' + process.cwd() + '/node_modules/cond/esm.mjs']", "[ true, true, true ]"},
		{"import.meta.url === 'file://' + process.cwd() + '/%3Ccell%3E'", "true"},
		// As in Node: an ES import of CommonJS gets module.exports as its
		// default, __esModule or not.
		{"import b, { named } from 'babel'; [b.default, named]", "[ 'the default', 'named' ]"},
	})
	want(t, "not exported", s.fails("require('cond/internal.js')"), "ERR_PACKAGE_PATH_NOT_EXPORTED", "subpath './internal.js' is not defined by \"exports\"")
	want(t, "null target", s.fails("require('cond/feature/secret')"), "ERR_PACKAGE_PATH_NOT_EXPORTED")
	want(t, "above the root", s.fails("require('ghost')"), "Cannot find module 'ghost'", "up to the session root "+root)
	want(t, "not under the requirer", s.fails("require('only-sub')"), "Cannot find module 'only-sub'")
	want(t, "no imports", s.fails("require('#nothing')"), "ERR_PACKAGE_IMPORT_NOT_DEFINED")

	// A package file edited in the session is read again.
	writeFiles(t, root, map[string]string{"node_modules/legacy/lib/main.js": "module.exports = { v: 22 }"})
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(root, "node_modules/legacy/lib/main.js"), later, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ok("require('legacy').v"); got != "22" {
		t.Errorf("after the edit: %s", got)
	}
	// So is its package.json.
	writeFiles(t, root, map[string]string{"node_modules/legacy/package.json": `{"name": "legacy", "main": "extra.js"}`})
	if err := os.Chtimes(filepath.Join(root, "node_modules/legacy/package.json"), later, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ok("require('legacy')"); got != "'extra'" {
		t.Errorf("after package.json's edit: %s", got)
	}
	// A package's link that leads out of the root is not followed.
	if err := os.Symlink(filepath.Join(dir, "node_modules", "ghost"), filepath.Join(root, "node_modules", "ghost")); err != nil {
		t.Fatal(err)
	}
	stderr := s.fails("require('ghost')")
	if strings.Contains(stderr, "outside'") {
		t.Errorf("a link out of the root was followed: %s", stderr)
	}
	want(t, "link out", stderr, "Cannot find module 'ghost'")
}

// Imports in module files are live bindings, as in ES modules: modules that
// import each other see each other's exports once they are made.
func TestLiveImports(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		// A cycle: a reads b's function, b reads a's config when called.
		"a.mjs": "import { useConfig } from './b.mjs'\nexport const config = { on: true }\nexport const seen = useConfig()\n",
		"b.mjs": "import { config } from './a.mjs'\nexport function useConfig() { return config.on }\n",
		// Names with equal first and last letters, a default, a counter.
		"c.mjs": "export let count = 0\nexport function bump() { count++ }\nexport default function who() { return this === undefined ? 'no this' : 'this' }\nexport const xyzx = 'x'\n",
		"d.mjs": "import who, { count, bump, xyzx } from './c.mjs'\n" +
			"function shadow(count) { return count }\n" +
			"const arrow = (bump) => bump\n" +
			"export function state() { bump(); const obj = { count, xyzx }; try { throw 1 } catch (count) { obj.caught = count }\n" +
			"  { let count = 'block'; obj.block = count }\n" +
			"  return [count, obj.count, obj.xyzx, shadow(7), arrow(8), obj.caught, obj.block, who(), typeof count] }\n" +
			"export { count as again }\n",
	})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	runChecks(t, s, []check{
		{"import { seen } from './a.mjs'; seen", "true"},
		{"import { state, again } from './d.mjs'; state()", "[ 1, 1, 'x', 7, 8, 1, 'block', 'no this', 'number' ]"},
		{"import * as d from './d.mjs'; d.again", "1"},
	})
	want(t, "assignment", s.fails("require('./e.mjs')"), "Cannot find module")
	writeFiles(t, root, map[string]string{"e.mjs": "import { count } from './c.mjs'\ncount = 5\n"})
	want(t, "assignment to an import", s.fails("require('./e.mjs')"), "TypeError")
}
