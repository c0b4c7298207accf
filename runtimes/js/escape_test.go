package js_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
)

// escapeFixture is a session whose root has a sibling directory with a
// secret, and symbolic links from the root to it.
func escapeFixture(t *testing.T) (s *session, outside string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside = filepath.Join(dir, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret.txt"): "outside-secret-31337",
		filepath.Join(outside, "secret.js"):  "module.exports = 'outside-secret-31337'",
		filepath.Join(root, "inside.js"):     "module.exports = 'inside'",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "link.txt"):    filepath.Join(outside, "secret.txt"),
		filepath.Join(root, "link.js"):     filepath.Join(outside, "secret.js"),
		filepath.Join(root, "rel.js"):      "../outside/secret.js",
		filepath.Join(root, "dirlink"):     outside,
		filepath.Join(root, "good.js"):     "inside.js",
		filepath.Join(root, "passwd.json"): "/etc/passwd",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("WASMEVAL_HOST_SECRET", "host-secret-31337")
	calls, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	return newSession(t, runtimes.InstanceOptions{Root: root, Env: map[string]string{"PATH": "/usr/bin"}, Call: calls.Call}), outside
}

func TestNoEscape(t *testing.T) {
	s, outside := escapeFixture(t)
	tests := []struct {
		name, code string
		want       []string // in stderr
	}{
		{"fs module", "require('fs').readFileSync('/etc/passwd', 'utf8')", []string{"EACCES: permission denied, open '/etc/passwd'", "outside the session root"}},
		{"node: scheme", "require('node:child_process').execSync('id')", []string{"Cannot find module 'node:child_process'"}},
		{"package", "require('lodash')", []string{"Cannot find module 'lodash'", "no node_modules/lodash"}},
		{"import of a missing built-in", "import net from 'node:net'", []string{"Cannot find module 'node:net'", "the sandbox has no net module"}},
		{"dynamic import", "await import('http')", []string{"Cannot find module 'http'"}},
		{"dot dot", "require('../outside/secret.js')", []string{"outside the session root"}},
		{"dot dot deeper", "require('./sub/../../outside/secret.js')", []string{"outside the session root"}},
		{"absolute outside", "require('" + outside + "/secret.js')", []string{"outside the session root"}},
		{"etc passwd", "require('/etc/passwd')", []string{"outside the session root"}},
		{"symlink to a file outside", "require('./link.js')", []string{"Cannot find module './link.js'"}},
		{"relative symlink outside", "require('./rel.js')", []string{"Cannot find module './rel.js'"}},
		{"symlink to a directory outside", "require('./dirlink/secret.js')", []string{"Cannot find module './dirlink/secret.js'"}},
		{"symlink to /etc/passwd", "require('./passwd.json')", []string{"Cannot find module './passwd.json'"}},
		{"read dot dot", "await read('../outside/secret.txt')", []string{"outside the session root"}},
		{"read absolute", "await read('/etc/passwd')", []string{"outside the session root"}},
		{"read symlink", "await read('link.txt')", []string{"read('link.txt'): the path leads outside the session root"}},
		{"read through a directory symlink", "await read('dirlink/secret.txt')", []string{"read('dirlink/secret.txt'): the path leads outside the session root"}},
		{"write outside", "await write('../outside/new.txt', 'x')", []string{"outside the session root"}},
		{"write through a symlink", "await write('dirlink/new.txt', 'x')", []string{"write('dirlink/new.txt'): the path leads outside the session root"}},
		{"process.binding", "process.binding('fs')", []string{"TypeError"}},
		{"process.chdir", "process.chdir('/')", []string{"not available in the sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, rec := s.run(tt.code)
			all := rec.All()
			if strings.Contains(all, "31337") || strings.Contains(all, "root:x:0:0") {
				t.Fatalf("escaped: %q", all)
			}
			if !out.Failed {
				t.Fatalf("succeeded: %q", all)
			}
			want(t, "stderr", rec.StderrText(), tt.want...)
		})
	}
	for _, name := range []string{"new.txt"} {
		if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
			t.Errorf("the guest created %s outside its root", name)
		}
	}

	// What is inside the root works, symbolic links inside it included.
	if got, _ := s.ok("[require('./inside.js'), require('./good.js'), require(process.cwd() + '/inside')]"); got != "[ 'inside', 'inside', 'inside' ]" {
		t.Errorf("inside the root: %s", got)
	}
	s.ok("await write('sub/dir/new.txt', 'a'); await append('sub/dir/new.txt', 'b')")
	if got, _ := s.ok("await read('sub/dir/new.txt')"); got != "'ab'" {
		t.Errorf("read back = %s", got)
	}
}

func TestNoHostAPIs(t *testing.T) {
	s, _ := escapeFixture(t)
	got, _ := s.ok(`[typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof Deno, typeof Bun,
  typeof host, typeof internal, typeof process.binding, typeof process.dlopen, typeof require('./inside.js').constructor]`)
	// fetch exists, and rejects (TestFetchHasNoNetwork); Bun exists, its
	// files confined to the root and without processes (TestBunGlobal).
	if got != "[\n  'function',  'undefined',\n  'undefined', 'undefined',\n  'object',    'undefined',\n  'undefined', 'undefined',\n  'undefined', 'function'\n]" {
		t.Errorf("host APIs: %s", got)
	}
	if got, _ := s.ok("JSON.stringify(process.env)"); got != `'{"PATH":"/usr/bin"}'` {
		t.Errorf("process.env = %s, want the session's own environment only", got)
	}
	if got, _ := s.ok("Object.keys(globalThis)"); got != "[]" {
		t.Errorf("enumerable globals = %s, want none", got)
	}
}
