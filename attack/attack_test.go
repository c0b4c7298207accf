package attack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// Canaries: text that lives on the host where no guest may read it.
const (
	canaryFile = "CANARY-OUTSIDE-FILE-6021"      // in a file beside the session root
	canaryEnv  = "CANARY-HOST-ENV-VALUE-7193"    // in the test process's environment
	canaryName = "WASMEVAL_ATTACK_CANARY"        // that variable's name
	canaryKey  = "sk-CANARY-LLM-KEY-8837"        // in the LLM key variable
	passwdLine = "root:x:0:0"                    // /etc/passwd's first line
	memoryCap  = 128 << 20                       // every session's guest memory cap
	diskCap    = 8 << 20                         // every session's disk quota
	diskFiles  = 2000                            // every session's entry quota
	insideText = "inside the root, readable: ok" // a file the guest may read
)

// never is what no case's output may hold.
// (The variable's name is not among them: a traceback may quote the code
// that asked for it.)
var never = []string{canaryFile, canaryEnv, canaryKey, passwdLine}

var (
	sbOnce sync.Once
	sb     *sandbox.Sandbox
	sbErr  error
)

func TestMain(m *testing.M) {
	// Host secrets that no guest may see: set before any session exists.
	os.Setenv(canaryName, canaryEnv)
	os.Setenv("WASMEVAL_LLM_API_KEY", canaryKey)
	code := m.Run()
	if sb != nil {
		sb.Close(context.Background())
	}
	os.Exit(code)
}

// sharedSandbox is one Sandbox for the suite: its runtimes compile once.
func sharedSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sbOnce.Do(func() { sb, sbErr = sandbox.New(context.Background(), sandbox.Options{}) })
	if sbErr != nil {
		t.Fatal(sbErr)
	}
	return sb
}

// world is a session root with things around it that no guest may reach:
// a secret file in a sibling folder, operator's symbolic links in the root
// that point at that folder (and one that stays inside), and a named pipe
// that would block whoever opens it.
type world struct {
	base, root, outside, secret string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	w.secret = filepath.Join(w.outside, "secret.txt")
	for _, d := range []string{w.root, w.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.secret, []byte(canaryFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.root, "inside.txt"), []byte(insideText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.outside, filepath.Join(w.root, "hostlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.txt", filepath.Join(w.root, "innerlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.outside, filepath.Join(w.root, "hostlink2")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(w.root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// expand fills a case's code with the world's host paths.
func (w *world) expand(code string) string {
	return strings.NewReplacer("{{ROOT}}", w.root, "{{OUTSIDE}}", w.outside, "{{SECRET}}", w.secret, "{{BASE}}", w.base).Replace(code)
}

// sessionOptions are the caps of every session of the suite.
func sessionOptions(root string) sandbox.SessionOptions {
	return sandbox.SessionOptions{Root: root, Checkpoints: true, MemoryLimitBytes: memoryCap,
		DiskQuotaBytes: diskCap, DiskQuotaFiles: diskFiles}
}

// attack is one case: a cell and what must come of it.
type attack struct {
	name    string
	lang    string // "py" or "js"
	code    string // {{ROOT}}, {{OUTSIDE}}, {{SECRET}}, {{BASE}} are filled in
	timeout int    // seconds; zero means 5
	// status is the cell's required status; empty means any.
	status sandbox.CellStatus
	// want are texts the output must hold (the error that names the
	// problem, or the proof that an attempt saw nothing).
	want []string
	// host, when set, checks the host side afterwards (a file that must
	// not exist).
	host func(t *testing.T, w *world)
	// maxOut, when positive, caps the output's length (a flood must come
	// back cut).
	maxOut int
	// within, when positive, caps the cell's wall-clock time.
	within time.Duration
	// heapBound, when positive, is TestJavaScriptBombs' bound on the
	// process heap's growth for this bomb, instead of its default.
	heapBound int64
	// never are texts the output must not hold, beyond the suite's
	// canaries.
	never []string
}

func py(name, code string, status sandbox.CellStatus, want ...string) attack {
	return attack{name: name, lang: "py", code: code, status: status, want: want}
}

func js(name, code string, status sandbox.CellStatus, want ...string) attack {
	return attack{name: name, lang: "js", code: code, status: status, want: want}
}

const (
	ok   = sandbox.StatusComplete
	fail = sandbox.StatusError
)

// run runs the cases of each language in order in one session of that
// language, rooted in a world of its own (the languages run in parallel),
// and checks each case's outcome, that no output holds a canary, and that
// the session evaluates 1+1 after each.
func run(t *testing.T, cases []attack, opts ...func(*sandbox.SessionOptions)) {
	t.Helper()
	for _, lang := range []string{"py", "js"} {
		var mine []attack
		for _, c := range cases {
			if c.lang == lang {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			continue
		}
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			if lang == "py" {
				testenv.RequirePython(t)
			}
			w := newWorld(t)
			o := sessionOptions(w.root)
			for _, f := range opts {
				f(&o)
			}
			s, err := sharedSandbox(t).NewSession(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			for _, c := range mine {
				t.Run(c.name, func(t *testing.T) { c.check(t, w, s) })
			}
		})
	}
}

// check runs the case in s and checks what came of it.
func (c attack) check(t *testing.T, w *world, s *sandbox.Session) {
	timeout := c.timeout
	if timeout == 0 {
		timeout = 5
	}
	start := time.Now()
	out, status := eval(t, s, c.lang, w.expand(c.code), timeout)
	if took := time.Since(start); c.within > 0 && took > testenv.Stretch(c.within) {
		t.Errorf("the cell took %s, more than %s", took.Round(time.Millisecond), c.within)
	}
	if c.maxOut > 0 && len(out) > c.maxOut {
		t.Errorf("the output is %d bytes, more than %d", len(out), c.maxOut)
	}
	if c.status != "" && status != c.status {
		t.Errorf("status %s, want %s; output:\n%s", status, c.status, clip(out))
	}
	for _, want := range c.want {
		if !strings.Contains(out, w.expand(want)) {
			t.Errorf("the output lacks %q:\n%s", w.expand(want), clip(out))
		}
	}
	for _, bad := range append(c.never, never...) {
		if strings.Contains(out, bad) {
			t.Errorf("the output holds the host's %q:\n%s", bad, clip(out))
		}
	}
	if c.host != nil {
		c.host(t, w)
	}
	alive(t, s, c.lang)
}

// eval runs one cell and returns its output and status.
func eval(t *testing.T, s *sandbox.Session, lang, code string, timeout int) (string, sandbox.CellStatus) {
	t.Helper()
	res, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: timeout}}})
	if err != nil {
		t.Fatalf("Eval: %v (a cell's failure must be data, not a Go error)", err)
	}
	c := res.Details.Cells[0]
	return c.Output, c.Status
}

// alive checks that the session still runs a cell.
func alive(t *testing.T, s *sandbox.Session, lang string) {
	t.Helper()
	out, status := eval(t, s, lang, "print(1 + 1)", 10)
	if status != ok || strings.TrimSpace(out) != "2" {
		t.Fatalf("the session no longer evaluates 1+1: %s %q", status, clip(out))
	}
}

// noFile fails t when the host has a file at path (relative to the base).
func noFile(rel string) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(w.base, rel)); err == nil {
			t.Errorf("the guest made %s outside its root", filepath.Join(w.base, rel))
		}
	}
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:700] + "\n...\n" + s[len(s)-700:]
	}
	return s
}

// setUpSession is a world and a session of the shared sandbox in it,
// closed when the test ends, that has run code in lang (nothing when code
// is empty); the test fails if code does not run.
func setUpSession(t *testing.T, lang, code string) (*world, *sandbox.Session) {
	t.Helper()
	ctx := context.Background()
	w := newWorld(t)
	s, err := sharedSandbox(t).NewSession(ctx, sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	if code != "" {
		if out, status := eval(t, s, lang, code, 10); status != ok {
			t.Fatalf("setting up the session: %s %s", status, out)
		}
	}
	return w, s
}
