package attack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestHuntJSModules: the module resolution of JavaScript cells, which
// reads files the guest wrote (package.json, node_modules) on the host's
// side of the sandbox: "main", "exports" and "imports" that point out of
// the root, an operator's link in node_modules that leads out, file: URLs,
// a require from another folder (createRequire, require.resolve's paths,
// module.paths, NODE_PATH), data: URLs (one of 50 MB). None reads a file
// outside the root; each fails with an error that names the problem.
func TestHuntJSModules(t *testing.T) {
	w := newWorld(t)
	files := map[string]string{
		"node_modules/evilmain/package.json":    `{"main": "../../../outside/secret.txt"}`,
		"node_modules/absmain/package.json":     `{"main": "` + w.secret + `"}`,
		"node_modules/evilexp/package.json":     `{"exports": "../../../outside/secret.txt"}`,
		"node_modules/absexp/package.json":      `{"exports": {"./x": "/etc/passwd", ".": "./../../../outside/secret.txt"}}`,
		"node_modules/condexp/package.json":     `{"exports": {".": {"node": ["../../../outside/secret.txt", "/etc/passwd"]}}}`,
		"node_modules/starexp/package.json":     `{"exports": {"./*": "./*"}}`,
		"node_modules/starexp/index.js":         `module.exports = 1`,
		"package.json":                          `{"imports": {"#s": "./../outside/secret.txt", "#p": "/etc/passwd", "#n": "../outside/secret.txt"}}`,
		"node_modules/dotdir/package.json":      `{"main": "./lib/../../../../outside/secret.txt"}`,
		"node_modules/okpkg/package.json":       `{"main": "main.js"}`,
		"node_modules/okpkg/main.js":            `module.exports = 'ok-package'`,
		w.outside[len(w.base)+1:] + "/index.js": `print('` + canaryFile + `'); module.exports = '` + canaryFile + `'`,
	}
	for rel, data := range files {
		p := filepath.Join(w.root, rel)
		if strings.HasPrefix(rel, "outside") {
			p = filepath.Join(w.base, rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An operator's link in node_modules that leads out.
	if err := os.Symlink(w.outside, filepath.Join(w.root, "node_modules", "hostpkg")); err != nil {
		t.Fatal(err)
	}
	s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, c := range []attack{
		js("a package that works", `print(require('okpkg'))`, ok, "ok-package"),
		js("main that climbs out", `require('evilmain')`, fail, "Cannot find module"),
		js("main that is absolute", `require('absmain')`, fail, "Cannot find module"),
		js("main through a folder that climbs", `require('dotdir')`, fail, "Cannot find module"),
		js("exports that climb out", `require('evilexp')`, fail, "does not stay inside"),
		js("an exported subpath that is absolute", `require('absexp/x')`, fail, "does not stay inside"),
		js("an exported . that climbs", `require('absexp')`, fail, "does not stay inside"),
		js("conditions that climb", `require('condexp')`, fail, "Cannot find module"),
		js("a * export that climbs", `require('starexp/../../../outside/secret.txt')`, fail, "Cannot find module"),
		js("an import map that climbs", `require('#s')`, fail, "does not stay inside"),
		js("an import map that is absolute", `require('#p')`, fail, "Cannot find module"),
		js("an import map to a bare ..", `require('#n')`, fail, "Cannot find module"),
		js("import() of a package that climbs", `await import('evilmain')`, fail, "Cannot find module"),
		js("an operator's link in node_modules", `require('hostpkg')`, fail, "Cannot find module"),
		js("import() of an operator's link", `await import('hostpkg')`, fail, "Cannot find module"),
		js("import() of a file: URL", `await import('file://{{SECRET}}')`, fail, "Cannot find module"),
		js("import() of file:///etc/passwd", `await import('file:///etc/passwd')`, fail, "Cannot find module"),
		js("import() of an absolute path outside", `await import('{{SECRET}}')`, fail, "outside the session root"),
		js("createRequire outside the root", `require('module').createRequire('{{OUTSIDE}}/x.js')('./secret.txt')`, fail, "outside the session root"),
		js("require.resolve with outside paths", `require.resolve('secret.txt', {paths: ['{{OUTSIDE}}']})`, fail, "Cannot find module"),
		js("module.paths pointed outside", `if (typeof module === 'object' && module && module.paths) module.paths.unshift('{{OUTSIDE}}'); require('index.js')`, fail, "Cannot find module"),
		js("NODE_PATH pointed outside", `process.env.NODE_PATH = '{{OUTSIDE}}'; require('index')`, fail, "Cannot find module"),
		{name: "import() of a 50 MB data: URL", lang: "js", code: `await import('data:text/javascript,' + '/'.repeat(2) + ' '.repeat(50 << 20))`, timeout: 20, within: 60 * time.Second},
		{name: "import() of a data: URL that reads a file", lang: "js", code: `const m = await import('data:text/javascript,export default require("fs").readFileSync("{{SECRET}}", "utf8")'); print(m.default)`, status: fail},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, w, s) })
	}
}

// TestHuntPythonPackageLinks: a package layer (--packages) is the
// operator's, but a link in it that leads out of it (absolute, climbing,
// to a file or a folder, a module that is a link) must not let a guest
// read the host's files through the layer's mount.
func TestHuntPythonPackageLinks(t *testing.T) {
	testenv.RequirePython(t)
	w := newWorld(t)
	layer := filepath.Join(w.base, "layer")
	if err := os.MkdirAll(filepath.Join(layer, "okpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, "okpkg", "__init__.py"), []byte("VALUE = 'ok-layer'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"leakdir":     w.outside,
		"leakfile":    w.secret,
		"up":          "../outside",
		"leakmod.py":  w.secret,
		"okpkg/deep":  "../../outside",
		"passwd_link": "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(layer, name)); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := sandbox.New(context.Background(), sandbox.Options{Packages: layer, Languages: []string{"py"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	s, err := sb.NewSession(context.Background(), sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	const read = `import os
L = '/usr/local/lib/wasmeval/site-packages/'
for p in ['leakdir/secret.txt', 'leakfile', 'up/secret.txt', 'okpkg/deep/secret.txt', 'passwd_link', 'leakmod.py']:
    try:
        print(p, repr(open(L + p).read()))
    except OSError as e:
        print(p, type(e).__name__)
print(sorted(os.listdir(L)))`
	for _, c := range []attack{
		py("the layer's own package imports", `import okpkg; print(okpkg.VALUE)`, ok, "ok-layer"),
		py("links in the layer that lead out", read, ok, "leakdir/secret.txt", "passwd_link", "okpkg"),
		py("a module that is a link out", `import leakmod`, fail, "Error"),
		py("a write into the layer", `open('/usr/local/lib/wasmeval/site-packages/okpkg/planted.py', 'w').write('x')`, fail, "Error"),
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, w, s) })
	}
	if _, err := os.Lstat(filepath.Join(layer, "okpkg", "planted.py")); err == nil {
		t.Error("a guest wrote into the package layer")
	}
}
