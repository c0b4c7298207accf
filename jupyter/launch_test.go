package jupyter_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/jupyter"
)

func TestKernelEnv(t *testing.T) {
	host := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/op", "USER=op", "LANG=C.UTF-8", "LC_TIME=de_DE", "TZ=Europe/Paris",
		"XDG_CACHE_HOME=/home/op/.cache", "VIRTUAL_ENV=/opt/venv", "PYTHONPATH=/opt/lib", "TERM=xterm",
		"LD_LIBRARY_PATH=/opt/lib", "CONDA_PREFIX=/opt/conda",
		// The seed's denylist and the secret-looking names.
		"OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "PERPLEXITY_COOKIES=c", "GITHUB_TOKEN=ghp",
		"AWS_SECRET_ACCESS_KEY=a", "AWS_REGION=eu", "SSH_AUTH_SOCK=/tmp/agent", "WASMEVAL_JUPYTER_TOKEN=t",
		"DB_PASSWORD=p", "XDG_SESSION_TOKEN=x",
		// Neither allowed nor secret: not inherited either.
		"EDITOR=vi", "PI_PY=1", "GOPATH=/go",
	}
	got := jupyter.KernelEnv(host)
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": "/home/op", "USER": "op", "LANG": "C.UTF-8", "LC_TIME": "de_DE",
		"TZ": "Europe/Paris", "XDG_CACHE_HOME": "/home/op/.cache", "VIRTUAL_ENV": "/opt/venv",
		"PYTHONPATH": "/opt/lib", "TERM": "xterm", "LD_LIBRARY_PATH": "/opt/lib", "CONDA_PREFIX": "/opt/conda",
	}
	if len(got) != len(want) {
		t.Errorf("KernelEnv = %v\nwant %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("KernelEnv[%s] = %q, want %q", k, got[k], v)
		}
	}
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestChoosePython(t *testing.T) {
	dir := t.TempDir()
	venv := filepath.Join(dir, "envs", "active")
	writeScript(t, filepath.Join(venv, "bin", "python"), "exit 0")
	rootDot := filepath.Join(dir, "root-dot")
	writeScript(t, filepath.Join(rootDot, ".venv", "bin", "python"), "exit 0")
	writeScript(t, filepath.Join(rootDot, "venv", "bin", "python"), "exit 0")
	rootPlain := filepath.Join(dir, "root-plain")
	writeScript(t, filepath.Join(rootPlain, "venv", "bin", "python3"), "exit 0")
	empty := filepath.Join(dir, "root-empty")
	os.MkdirAll(empty, 0o755)
	bin1, bin2 := filepath.Join(dir, "bin1"), filepath.Join(dir, "bin2")
	writeScript(t, filepath.Join(bin1, "python3"), "exit 0")
	writeScript(t, filepath.Join(bin2, "python3"), "exit 0")
	explicitVenv := filepath.Join(dir, "envs", "explicit")
	writeScript(t, filepath.Join(explicitVenv, "bin", "python"), "exit 0")
	os.WriteFile(filepath.Join(explicitVenv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	path := bin1 + ":" + bin2

	for _, tc := range []struct {
		name, explicit, root string
		env                  map[string]string
		want, venv, from     string
		others               []string
		err                  string
	}{
		{name: "VIRTUAL_ENV first", root: rootDot, env: map[string]string{"VIRTUAL_ENV": venv, "PATH": path},
			want: filepath.Join(venv, "bin", "python"), venv: venv, from: "VIRTUAL_ENV"},
		{name: "root .venv before venv", root: rootDot, env: map[string]string{"PATH": path},
			want: filepath.Join(rootDot, ".venv", "bin", "python"), venv: filepath.Join(rootDot, ".venv"), from: "<root>/.venv"},
		{name: "root venv with python3 only", root: rootPlain, env: map[string]string{"PATH": path},
			want: filepath.Join(rootPlain, "venv", "bin", "python3"), venv: filepath.Join(rootPlain, "venv"), from: "<root>/venv"},
		{name: "VIRTUAL_ENV without a python falls through", root: empty, env: map[string]string{"VIRTUAL_ENV": empty, "PATH": path},
			want: filepath.Join(bin1, "python3"), from: "python3 on PATH", others: []string{filepath.Join(bin2, "python3")}},
		{name: "python3 on PATH", root: empty, env: map[string]string{"PATH": path},
			want: filepath.Join(bin1, "python3"), from: "python3 on PATH", others: []string{filepath.Join(bin2, "python3")}},
		{name: "explicit by name", explicit: "python3", root: rootDot, env: map[string]string{"PATH": bin2},
			want: filepath.Join(bin2, "python3"), from: "LaunchConfig.Python"},
		{name: "explicit in a venv", explicit: filepath.Join(explicitVenv, "bin", "python"), root: empty, env: map[string]string{"PATH": path},
			want: filepath.Join(explicitVenv, "bin", "python"), venv: explicitVenv, from: "LaunchConfig.Python"},
		{name: "explicit missing", explicit: filepath.Join(dir, "nope"), root: empty, env: map[string]string{"PATH": path},
			err: "is not an executable file"},
		{name: "nothing", root: empty, env: map[string]string{"PATH": empty},
			err: "no python3 on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := jupyter.ChoosePython(tc.explicit, tc.root, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ChoosePython error = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.Path != tc.want || in.Venv != tc.venv || in.From != tc.from || !slices.Equal(in.Others, tc.others) {
				t.Errorf("ChoosePython = %+v, want path %s venv %q from %q others %v", in, tc.want, tc.venv, tc.from, tc.others)
			}
		})
	}
}

// launchDirs makes a session root, a temporary folder and a connection
// file as the runtime does.
func launchDirs(t *testing.T) (root, tmp, conn string) {
	t.Helper()
	base := t.TempDir()
	root, tmp = filepath.Join(base, "root"), filepath.Join(base, "kernel-tmp")
	for _, d := range []string{root, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	conn = filepath.Join(tmp, "kernel.json")
	if err := os.WriteFile(conn, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, tmp, conn
}

func TestKernelCommandNoIPyKernel(t *testing.T) {
	py := kernelPython(t)
	root, tmp, conn := launchDirs(t)
	// Real interpreters that cannot import ipykernel: Debian's python3
	// without its site packages (-S), as a venv of the root and as python3
	// on PATH.
	noSite := "exec " + py + ` -S "$@"`
	binDir := filepath.Join(filepath.Dir(root), "bin")
	writeScript(t, filepath.Join(binDir, "python3"), noSite)

	ctx := context.Background()
	_, err := jupyter.KernelCommand(ctx, jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn, Env: map[string]string{"PATH": binDir}})
	if err == nil || !strings.Contains(err.Error(), "ipykernel is not importable by "+filepath.Join(binDir, "python3")) ||
		!strings.Contains(err.Error(), "apt install python3-ipykernel") {
		t.Errorf("python3 on PATH without ipykernel: error = %v, want one naming it and apt install python3-ipykernel", err)
	}

	venv := filepath.Join(root, ".venv")
	writeScript(t, filepath.Join(venv, "bin", "python"), noSite)
	_, err = jupyter.KernelCommand(ctx, jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn, Env: map[string]string{"PATH": binDir}})
	if err == nil || !strings.Contains(err.Error(), "<root>/.venv") ||
		!strings.Contains(err.Error(), filepath.Join(venv, "bin", "python")+" -m pip install ipykernel") {
		t.Errorf("root venv without ipykernel: error = %v, want one naming the venv and pip install ipykernel in it", err)
	}
}

func TestKernelCommandBadConfig(t *testing.T) {
	root, tmp, conn := launchDirs(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  jupyter.LaunchConfig
		want string
	}{
		{"no root", jupyter.LaunchConfig{TempDir: tmp, ConnectionFile: conn}, "LaunchConfig.Root is empty"},
		{"missing root", jupyter.LaunchConfig{Root: filepath.Join(root, "nope"), TempDir: tmp, ConnectionFile: conn}, "give an existing folder"},
		{"no temp", jupyter.LaunchConfig{Root: root, ConnectionFile: conn}, "LaunchConfig.TempDir is empty"},
		{"no conn", jupyter.LaunchConfig{Root: root, TempDir: tmp}, "ConnectionFile is empty"},
		{"conn not written", jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: filepath.Join(tmp, "later.json")}, "write it before starting the kernel"},
		{"bad env", jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn, Env: map[string]string{"A-B": "1"}}, `"A-B"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jupyter.KernelCommand(ctx, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("KernelCommand error = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// cellOutput collects a cell's stream text.
type cellOutput struct {
	mu  sync.Mutex
	out strings.Builder
}

func (c *cellOutput) IOPub(msgType string, m *jupyter.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch msgType {
	case "stream":
		var s jupyter.StreamContent
		m.Decode(&s)
		c.out.WriteString(s.Text)
	case "error":
		c.out.WriteString("ERROR " + string(m.Content))
	}
}

func (c *cellOutput) Input(string, bool) string { return "" }

func run(t *testing.T, k *jupyter.LocalKernel, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := &cellOutput{}
	if _, err := k.Client().Execute(ctx, code, jupyter.ExecuteOptions{}, out); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return strings.TrimSpace(out.out.String())
}

// TestKernelConfined starts a real kernel with KernelCommand and checks
// its walls from inside: its user, where it may write, what it inherits.
func TestKernelConfined(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("confinement is Linux's")
	}
	py := kernelPython(t)
	t.Setenv("OPENAI_API_KEY", "sk-host-secret")
	t.Setenv("MY_SERVICE_TOKEN", "host-token")
	t.Setenv("LC_WASMEVAL_TEST", "kept")
	// A folder anyone may write: only Landlock keeps the kernel out.
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.Mkdir(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(outside, 0o777)
	os.Chmod(filepath.Dir(outside), 0o755)

	root := t.TempDir()
	k, err := jupyter.StartLocal(context.Background(), jupyter.LocalOptions{
		StartOptions: jupyter.StartOptions{Root: root, Env: map[string]string{"PATH": "/usr/bin:/bin", "EXPLICIT_API_KEY": "given"}},
		Command:      jupyter.LaunchCommand(py, nil),
	})
	if err != nil {
		t.Fatalf("StartLocal with KernelCommand: %v", err)
	}
	t.Cleanup(func() { k.Close(context.Background()) })

	if got := run(t, k, "import os; print(os.getcwd())"); got != root {
		t.Errorf("kernel cwd = %q, want the root %q", got, root)
	}
	uid := run(t, k, "import os; print(os.getuid(), os.getgid(), os.getgroups())")
	if os.Geteuid() == 0 && strings.HasPrefix(uid, "0 ") {
		t.Errorf("the kernel runs as root (uid gid groups: %s); want an unprivileged user", uid)
	}
	if os.Geteuid() == 0 && !strings.HasSuffix(uid, "[]") {
		t.Errorf("the kernel keeps supplementary groups: %s", uid)
	}
	env := run(t, k, "import os; print(sorted(os.environ))")
	for _, secret := range []string{"OPENAI_API_KEY", "MY_SERVICE_TOKEN"} {
		if strings.Contains(env, "'"+secret+"'") {
			t.Errorf("the kernel inherited the host's %s: %s", secret, env)
		}
	}
	for _, kept := range []string{"LC_WASMEVAL_TEST", "EXPLICIT_API_KEY", "PATH", "TMPDIR"} {
		if !strings.Contains(env, "'"+kept+"'") {
			t.Errorf("the kernel lacks %s: %s", kept, env)
		}
	}

	// Writes: the root and the temporary folder, not elsewhere.
	got := run(t, k, `
import os, tempfile
open('made-by-kernel.txt', 'w').write('hello from the kernel')
os.makedirs('a/b', exist_ok=True); open('a/x', 'w').write('x'); os.rename('a/x', 'a/b/x')
with tempfile.NamedTemporaryFile(dir=None, delete=False) as f: f.write(b'tmp')
print('tmp', os.path.dirname(f.name) == os.environ['TMPDIR'])
for p in [`+pyQuote(filepath.Join(outside, "escaped.txt"))+`, '/tmp/wasmeval-escaped.txt', '/var/tmp/wasmeval-escaped.txt']:
    try:
        open(p, 'w').write('escaped')
        print('WROTE', p)
    except OSError as e:
        print('denied', e.errno)
`)
	if !strings.Contains(got, "tmp True") || strings.Contains(got, "WROTE") || strings.Count(got, "denied") != 3 {
		t.Errorf("writes: %s\nwant the temporary folder written, and three denials", got)
	}
	for _, p := range []string{filepath.Join(outside, "escaped.txt"), "/tmp/wasmeval-escaped.txt", "/var/tmp/wasmeval-escaped.txt"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the kernel wrote %s", p)
		}
	}
	// multiprocessing's semaphores live in /dev/shm, which stays writable.
	if got := run(t, k, "import multiprocessing as mp\nwith mp.Pool(2) as p: print(p.map(abs, [1, -2]))"); got != "[1, 2]" {
		t.Errorf("a multiprocessing pool: %s", got)
	}
	// The host reads what the kernel wrote.
	if b, err := os.ReadFile(filepath.Join(root, "made-by-kernel.txt")); err != nil || string(b) != "hello from the kernel" {
		t.Errorf("host reading the kernel's file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "b", "x")); err != nil {
		t.Errorf("rename between folders of the root: %v", err)
	}
	if abi, _ := jupyter.LandlockABI(); abi > 0 {
		if got := run(t, k, "print([l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0].split()[1])"); got != "1" {
			t.Errorf("NoNewPrivs = %q, want 1 (Landlock applied)", got)
		}
	}
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func envOf(cmdEnv []string, name string) string {
	for _, kv := range cmdEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// The root's venv is the kernel's interpreter, its bin first on PATH; on
// PATH, the first python3 that imports ipykernel wins.
func TestKernelCommandInterpreter(t *testing.T) {
	py := kernelPython(t)
	ctx := context.Background()

	root, tmp, conn := launchDirs(t)
	binDir := filepath.Join(filepath.Dir(root), "bin")
	writeScript(t, filepath.Join(binDir, "python3"), "exec "+py+` -S "$@"`) // no ipykernel
	var logged strings.Builder
	cmd, err := jupyter.KernelCommand(ctx, jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn,
		Env:    map[string]string{"PATH": binDir + ":" + filepath.Dir(py)},
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "python="+py+` from="python3 on PATH"`) {
		t.Errorf("debug log = %q, want the interpreter and where it came from", logged.String())
	}
	if !slices.Contains(cmd.Args, py) {
		t.Errorf("python3 on PATH: command %q, want %s (the first python3 on PATH that imports ipykernel)", cmd.Args, py)
	}

	venv := filepath.Join(root, ".venv")
	writeScript(t, filepath.Join(venv, "bin", "python"), "exec "+py+` "$@"`)
	cmd, err = jupyter.KernelCommand(ctx, jupyter.LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn,
		Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(venv, "bin", "python"); !slices.Contains(cmd.Args, want) {
		t.Errorf("root venv: command %q, want %s", cmd.Args, want)
	}
	if got := envOf(cmd.Env, "PATH"); got != filepath.Join(venv, "bin")+":/usr/bin:/bin" {
		t.Errorf("root venv: PATH = %q, want its bin first", got)
	}
	if got := envOf(cmd.Env, "VIRTUAL_ENV"); got != venv {
		t.Errorf("root venv: VIRTUAL_ENV = %q, want %s", got, venv)
	}
	for _, k := range []string{"TMPDIR", "TEMP", "TMP"} {
		if got := envOf(cmd.Env, k); got != tmp {
			t.Errorf("%s = %q, want the kernel's temporary folder %s", k, got, tmp)
		}
	}
	if cmd.Dir != root {
		t.Errorf("the kernel's folder = %q, want the root %s", cmd.Dir, root)
	}
}
