package js_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestHostErrorsIgnoreReplacedGlobals: a cell that replaces the global
// error constructors, JSON, RegExp and DOMException with junk or with
// Proxies that throw does not change the errors the host makes (a memory
// refusal, a module that is not found or does not parse, a zlib, fs or
// eval error, btoa's DOMException) and makes no host path panic: each is
// the realm's own built-in type, with its message. Before, the host took
// the globals by name: JSON = 1 made a host path panic, and a replaced
// RangeError made the memory guard's error whatever the cell liked.
func TestHostErrorsIgnoreReplacedGlobals(t *testing.T) {
	session := func(t *testing.T, junk string) *session {
		s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 64 << 20})
		if err := os.WriteFile(filepath.Join(s.root, "bad.js"), []byte("module.exports = )("), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.root, "data.json"), []byte(`{"a": [1, 2]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		s.ok(`globalThis.real = { Error, RangeError, SyntaxError, TypeError, DOMException, JSON, RegExp };
globalThis.kind = (f) => {
  try { f(); return 'no error' } catch (e) {
    for (const name of ['RangeError', 'SyntaxError', 'TypeError', 'DOMException', 'Error']) {
      if (e instanceof real[name]) return name + (e.code ? ' ' + e.code : '') + ': ' + e.message.split('\n')[0];
    }
    return 'not an error: ' + typeof e;
  }
};
const trap = new Proxy(function () {}, {
  get() { throw new real.Error('trap get') }, construct() { throw new real.Error('trap construct') }, apply() { throw new real.Error('trap apply') },
});
for (const name of ['Error', 'RangeError', 'SyntaxError', 'TypeError', 'DOMException', 'RegExp', 'JSON']) globalThis[name] = ` + junk + `;
void 0`)
		return s
	}
	cases := []struct{ name, code, want string }{
		{"memory refusal", "Object.keys(new Uint8Array(8e6))", "RangeError: memory limit: this needs"},
		{"module not found", "require('./nope')", "Error MODULE_NOT_FOUND: Cannot find module './nope'"},
		{"module that does not parse", "require('./bad.js')", "SyntaxError: "},
		{"JSON module", "(() => { if (require('./data.json').a[1] !== 2) throw 0 })()", "no error"},
		{"zlib", "require('zlib').inflateSync(Buffer.from('not deflated'))", "Error Z_DATA_ERROR: zlib inflate"},
		{"fs", "require('fs').readFileSync('nope.txt')", "Error ENOENT: ENOENT: no such file or directory, open 'nope.txt'"},
		{"eval", "eval('(')", "SyntaxError: "},
		{"Function", "Function('(')", "SyntaxError: "},
		{"btoa", "btoa('\\u1234')", "DOMException 5: Invalid character: btoa() takes Latin-1 text only"},
		{"atob", "atob('%%%')", "DOMException 5: The string to be decoded is not correctly encoded."},
		{"structuredClone", "structuredClone(() => 1)", "DOMException 25: "},
		{"AbortSignal", "(() => { throw AbortSignal.abort().reason })()", "DOMException 20: "},
		{"console", "(() => { console.log({ a: [1, 'x'] }, new Map([[1, 2]])); process.stdout.write('ok\\n') })()", "no error"},
		{"regexp exec", "(() => { if (/(a)(?=b)/.exec('ab')[1] !== 'a') throw 0 })()", "no error"},
		{"regexp literal", "(() => { if (!/a+/.test('caab') || 'aa'.replace(/a/g, 'b') !== 'bb') throw 0 })()", "no error"},
	}
	for _, junk := range []string{"trap", "1", "undefined"} {
		t.Run(junk, func(t *testing.T) {
			s := session(t, junk)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					got := result(s, "kind(() => "+c.code+")")
					if !strings.HasPrefix(strings.TrimLeft(got, `'"`), c.want) {
						t.Errorf("%s: %s, want %q", c.code, got, c.want)
					}
				})
			}
			if got := result(s, "real.JSON.stringify({ ok: 1 })"); got != `'{"ok":1}'` {
				t.Errorf("after: %s", got)
			}
		})
	}
}
