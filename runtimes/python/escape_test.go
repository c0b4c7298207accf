package python_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestEscapes tries to leave the sandbox from Python. Each cell prints
// "BLOCKED <reason>" when the attempt fails as it must; anything else is an
// escape.
func TestEscapes(t *testing.T) {
	r := runtimeForTest(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Links planted on the host before the session starts.
	if err := os.Symlink(secret, filepath.Join(root, "abs-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret.txt", filepath.Join(root, "rel-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "passwd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WASMEVAL_TEST_API_KEY", "sk-must-not-leak")

	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: root,
		Env:  map[string]string{"LANG": "C.UTF-8", "HOME": root},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())

	const try = `
def attempt(reason, f):
    try:
        v = f()
    except Exception as e:
        print("BLOCKED", reason, type(e).__name__)
    else:
        print("ESCAPED", reason, repr(v)[:200])
`
	if _, o := run(t, inst, try); o.Failed {
		t.Fatal("setup cell failed")
	}
	cases := []struct{ name, code string }{
		{"etc passwd", `attempt("etc", lambda: open("/etc/passwd").read())`},
		{"proc environ", `attempt("proc", lambda: open("/proc/self/environ").read())`},
		{"dotdot", `attempt("dotdot", lambda: open("../outside/secret.txt").read())`},
		{"deep dotdot", `attempt("deep", lambda: open("../../../../../../` + strings.TrimPrefix(secret, "/") + `").read())`},
		{"absolute outside", `attempt("abs", lambda: open(` + "'" + secret + "'" + `).read())`},
		{"planted absolute symlink", `attempt("abs-link", lambda: open("abs-link").read())`},
		{"planted relative symlink", `attempt("rel-link", lambda: open("rel-link").read())`},
		{"planted dir symlink", `attempt("dir-link", lambda: open("dir-link/secret.txt").read())`},
		{"planted passwd symlink", `attempt("passwd", lambda: open("passwd").read())`},
		{"guest symlink absolute", `import os
attempt("mk-abs", lambda: (os.symlink(` + "'" + secret + "'" + `, "evil"), open("evil").read()))`},
		{"guest symlink relative", `import os
attempt("mk-rel", lambda: (os.symlink("../../../../../../etc/passwd", "evil2"), open("evil2").read()))`},
		{"listdir parent", `import os
attempt("listdir", lambda: [n for n in os.listdir("..") if n == "outside"][0])`},
		{"write outside", `attempt("write", lambda: open(` + "'" + filepath.Join(outside, "x") + "'" + `, "w").write("x"))`},
		{"write stdlib", `attempt("stdlib", lambda: open("/usr/local/lib/python311.zip", "w").write("x"))`},
		{"rename out", `import os
open("mine.txt", "w").write("m")
attempt("rename", lambda: os.rename("mine.txt", "../outside/mine.txt"))`},
		{"hard link out", `import os
attempt("link", lambda: (os.link(` + "'" + secret + "'" + `, "hard"), open("hard").read()))`},
		{"env secret", `import os
attempt("env", lambda: os.environ["WASMEVAL_TEST_API_KEY"])`},
		{"socket", `import socket
attempt("socket", lambda: socket.create_connection(("127.0.0.1", 22), timeout=1))`},
		{"subprocess", `import subprocess
attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", "id"]))`},
		{"os.system", `import os
attempt("system", lambda: os.system("id") == 0 or 1/0)`},
		{"fork", `import os
attempt("fork", lambda: os.fork())`},
		{"ctypes", `attempt("ctypes", lambda: __import__("ctypes"))`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := run(t, inst, tc.code)
			out := rec.out.String()
			if !strings.Contains(out, "BLOCKED") || strings.Contains(out, "ESCAPED") || strings.Contains(out, "TOP SECRET") || strings.Contains(out, "sk-must-not-leak") || strings.Contains(out, "root:x:") {
				t.Fatalf("escape not blocked:\n%s", out)
			}
		})
	}
	// Nothing was written outside the root.
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside dir changed: %v", entries)
	}
}
