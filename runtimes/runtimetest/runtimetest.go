// Package runtimetest is the conformance suite of wasmeval's language
// runtimes, in the manner of testing/slogtest: every runtimes.Runtime passes
// Run with snippets of code in its own language. It also has Recorder, a
// runtimes.Sink that keeps what a cell produced, for the runtimes' own tests.
package runtimetest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
)

// Snippets hold one language's code for each behaviour that Run checks.
// Each field says what its code must do; an empty field skips its test.
// Code runs as one cell, in the session root as working directory.
type Snippets struct {
	// PrintHello writes the line "hello" to standard output, and nothing
	// else, with no result.
	PrintHello string
	// WriteStderr writes the line "oops" to standard error and succeeds.
	WriteStderr string
	// DefineState sets the variable x to 41, with no output and no result.
	DefineState string
	// ReadState evaluates to x + 1 as the cell's result, with no output.
	ReadState string
	// LastExpression computes 6 * 7 as its last expression: its result is
	// 42 and it prints nothing.
	LastExpression string
	// NoResult is a statement without a value (an assignment in Python, a
	// declaration in JavaScript): the cell has no result.
	NoResult string
	// Raise raises or throws an error whose message is "boom".
	Raise string
	// SyntaxError does not parse.
	SyntaxError string
	// InfiniteLoop runs forever (a busy loop).
	InfiniteLoop string
	// ReadFile prints the content of the file data.txt, named by that
	// relative path.
	ReadFile string
	// ReadPasswd tries to read /etc/passwd and print it. It must fail or
	// print something else: the host's file is not visible.
	ReadPasswd string
	// ReadOutside tries to read the file at the absolute path that replaces
	// {{outside}} in it, a file next to the session root, and print it.
	ReadOutside string
	// EscapeSymlink creates a symbolic link named link.txt in the working
	// directory that points at the path replacing {{outside}}, then reads
	// link.txt and prints it (or fails trying). A language that cannot make
	// links leaves it empty and gives ReadLink.
	EscapeSymlink string
	// ReadLink reads the file link.txt in the working directory and prints
	// it (or fails trying). Before it runs, the suite makes link.txt a
	// symbolic link that leads outside the root (as a cell of another
	// language, or the host, could have made it), in several ways.
	ReadLink string
	// PrintEnv prints the value of the environment variable
	// WASMEVAL_TEST_VAR.
	PrintEnv string
	// PrintHostSecret prints the value of the environment variable
	// WASMEVAL_HOST_SECRET, or nothing when it is not set.
	PrintHostSecret string
	// DisplayJSON displays the mapping {"a": 1, "b": [1, 2]} with the
	// language's display helper.
	DisplayJSON string
	// DisplayMarkdown displays the markdown text "# Title".
	DisplayMarkdown string
	// PrintTime prints the current Unix time in whole seconds.
	PrintTime string
	// PrintRandom prints a random number.
	PrintRandom string
}

// Run runs the conformance suite against rt, one subtest per behaviour,
// each with instances of its own. It sets a host environment variable (the
// secret the guest must not see), so t must not be a parallel test.
func Run(t *testing.T, rt runtimes.Runtime, s Snippets) {
	t.Helper()
	if l := rt.Language(); l != "py" && l != "js" {
		t.Errorf("Language() = %q, want py or js", l)
	}
	tests := []struct {
		name  string
		needs []string
		run   func(t *testing.T, h *harness)
	}{
		{"Stdout", []string{s.PrintHello}, func(t *testing.T, h *harness) {
			rec := h.ok(s.PrintHello)
			if got := rec.StdoutText(); got != "hello\n" {
				t.Errorf("stdout = %q, want %q", got, "hello\n")
			}
			if got := rec.StderrText(); got != "" {
				t.Errorf("stderr = %q, want nothing", got)
			}
			if r := rec.Results(); len(r) != 0 {
				t.Errorf("results = %v, want none", r)
			}
		}},
		{"Stderr", []string{s.WriteStderr}, func(t *testing.T, h *harness) {
			rec := h.ok(s.WriteStderr)
			if got := rec.StderrText(); got != "oops\n" {
				t.Errorf("stderr = %q, want %q", got, "oops\n")
			}
			if got := rec.StdoutText(); got != "" {
				t.Errorf("stdout = %q, want nothing", got)
			}
		}},
		{"StatePersists", []string{s.DefineState, s.ReadState}, func(t *testing.T, h *harness) {
			h.ok(s.DefineState)
			h.wantResult(h.ok(s.ReadState), "42")
		}},
		{"LastExpression", []string{s.LastExpression}, func(t *testing.T, h *harness) {
			rec := h.ok(s.LastExpression)
			h.wantResult(rec, "42")
			if got := rec.StdoutText() + rec.StderrText(); got != "" {
				t.Errorf("output = %q, want nothing", got)
			}
		}},
		{"NoResult", []string{s.NoResult}, func(t *testing.T, h *harness) {
			rec := h.ok(s.NoResult)
			if r := rec.Results(); len(r) != 0 {
				t.Errorf("results = %v, want none", r)
			}
		}},
		{"ErrorFailsCellAndKeepsState", []string{s.Raise, s.DefineState, s.ReadState}, func(t *testing.T, h *harness) {
			h.ok(s.DefineState)
			out, rec := h.run(context.Background(), s.Raise)
			if !out.Failed || out.Interrupted {
				t.Errorf("outcome = %+v, want Failed only", out)
			}
			if !strings.Contains(rec.StderrText(), "boom") {
				t.Errorf("stderr = %q, want the error's message boom", rec.StderrText())
			}
			h.wantResult(h.ok(s.ReadState), "42")
		}},
		{"SyntaxError", []string{s.SyntaxError, s.LastExpression}, func(t *testing.T, h *harness) {
			out, rec := h.run(context.Background(), s.SyntaxError)
			if !out.Failed || out.Interrupted {
				t.Errorf("outcome = %+v, want Failed only", out)
			}
			if rec.StderrText() == "" {
				t.Error("stderr is empty, want the syntax error")
			}
			h.wantResult(h.ok(s.LastExpression), "42")
		}},
		{"TimeoutKeepsState", []string{s.InfiniteLoop, s.DefineState, s.ReadState}, func(t *testing.T, h *harness) {
			h.ok(s.DefineState)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			out, rec := h.run(ctx, s.InfiniteLoop)
			if !out.Failed || !out.Interrupted {
				t.Errorf("outcome = %+v, want Failed and Interrupted", out)
			}
			if rec.StderrText() == "" {
				t.Error("stderr is empty, want a message about the timeout")
			}
			h.wantResult(h.ok(s.ReadState), "42")
		}},
		{"Cancel", []string{s.InfiniteLoop, s.LastExpression}, func(t *testing.T, h *harness) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			out, _ := h.run(ctx, s.InfiniteLoop)
			if !out.Failed || !out.Interrupted {
				t.Errorf("outcome = %+v, want Failed and Interrupted", out)
			}
			h.wantResult(h.ok(s.LastExpression), "42")
		}},
		{"ContextDoneBeforeRun", []string{s.LastExpression}, func(t *testing.T, h *harness) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			out, _ := h.run(ctx, s.LastExpression)
			if !out.Failed || !out.Interrupted {
				t.Errorf("outcome = %+v, want Failed and Interrupted", out)
			}
			h.wantResult(h.ok(s.LastExpression), "42")
		}},
		{"ResetLosesState", []string{s.DefineState, s.ReadState}, func(t *testing.T, h *harness) {
			h.ok(s.DefineState)
			if err := h.inst.Reset(context.Background()); err != nil {
				t.Fatalf("Reset: %v", err)
			}
			out, rec := h.run(context.Background(), s.ReadState)
			if !out.Failed {
				t.Errorf("after Reset, reading x succeeded with %v; want an error", rec.Results())
			}
			h.ok(s.DefineState)
			h.wantResult(h.ok(s.ReadState), "42")
		}},
		{"ReadFileInRoot", []string{s.ReadFile}, func(t *testing.T, h *harness) {
			const content = "wasmeval-root-file-7f3a"
			if err := os.WriteFile(filepath.Join(h.root, "data.txt"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := h.ok(s.ReadFile)
			if !strings.Contains(rec.StdoutText(), content) {
				t.Errorf("stdout = %q, want the file's content %q", rec.StdoutText(), content)
			}
		}},
		{"NoEtcPasswd", []string{s.ReadPasswd}, func(t *testing.T, h *harness) {
			_, rec := h.run(context.Background(), s.ReadPasswd)
			if strings.Contains(rec.All(), "root:") {
				t.Errorf("the guest read the host's /etc/passwd: %q", rec.All())
			}
		}},
		{"NoFileOutsideRoot", []string{s.ReadOutside}, func(t *testing.T, h *harness) {
			_, rec := h.run(context.Background(), strings.ReplaceAll(s.ReadOutside, "{{outside}}", h.outside))
			if strings.Contains(rec.All(), outsideSecret) {
				t.Errorf("the guest read a file outside its root: %q", rec.All())
			}
		}},
		{"NoSymlinkEscape", nil, func(t *testing.T, h *harness) {
			if s.EscapeSymlink == "" && s.ReadLink == "" {
				t.Skip("no snippet for this behaviour")
			}
			if s.EscapeSymlink != "" {
				_, rec := h.run(context.Background(), strings.ReplaceAll(s.EscapeSymlink, "{{outside}}", h.outside))
				if strings.Contains(rec.All(), outsideSecret) {
					t.Errorf("the guest read a file outside its root through a symlink it made: %q", rec.All())
				}
			}
			if s.ReadLink == "" {
				return
			}
			link := filepath.Join(h.root, "link.txt")
			up := filepath.Join(h.root, "up")
			if err := os.Symlink("..", up); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(h.root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{
				h.outside,                        // absolute
				"../" + filepath.Base(h.outside), // relative
				"sub/../../" + filepath.Base(h.outside),
				"up/" + filepath.Base(h.outside), // through a link to the parent
			} {
				if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				_, rec := h.run(context.Background(), s.ReadLink)
				if strings.Contains(rec.All(), outsideSecret) {
					t.Errorf("the guest read a file outside its root through link.txt -> %s: %q", target, rec.All())
				}
			}
			// The same read works for a link that stays inside.
			if err := os.WriteFile(filepath.Join(h.root, "inside.txt"), []byte("inside-ok-7f3a"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("inside.txt", link); err != nil {
				t.Fatal(err)
			}
			if rec := h.ok(s.ReadLink); !strings.Contains(rec.StdoutText(), "inside-ok-7f3a") {
				t.Errorf("reading link.txt -> inside.txt printed %q, want the file's text", rec.StdoutText())
			}
		}},
		{"Env", []string{s.PrintEnv}, func(t *testing.T, h *harness) {
			rec := h.ok(s.PrintEnv)
			if !strings.Contains(rec.StdoutText(), "visible-4b1d") {
				t.Errorf("stdout = %q, want the session's WASMEVAL_TEST_VAR visible-4b1d", rec.StdoutText())
			}
		}},
		{"NoHostEnv", []string{s.PrintHostSecret}, func(t *testing.T, h *harness) {
			_, rec := h.run(context.Background(), s.PrintHostSecret)
			if strings.Contains(rec.All(), hostSecret) {
				t.Errorf("the guest read the host's environment: %q", rec.All())
			}
		}},
		{"DisplayJSON", []string{s.DisplayJSON}, func(t *testing.T, h *harness) {
			rec := h.ok(s.DisplayJSON)
			d := rec.Displays()
			if len(d) != 1 {
				t.Fatalf("displays = %v, want one", d)
			}
			var got any
			if err := json.Unmarshal([]byte(d[0]["application/json"]), &got); err != nil {
				t.Fatalf("application/json = %q: %v", d[0]["application/json"], err)
			}
			want := map[string]any{"a": 1.0, "b": []any{1.0, 2.0}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("application/json = %v, want %v", got, want)
			}
		}},
		{"DisplayMarkdown", []string{s.DisplayMarkdown}, func(t *testing.T, h *harness) {
			d := h.ok(s.DisplayMarkdown).Displays()
			if len(d) != 1 || d[0]["text/markdown"] != "# Title" {
				t.Errorf("displays = %v, want one text/markdown bundle of %q", d, "# Title")
			}
		}},
		{"Clock", []string{s.PrintTime}, func(t *testing.T, h *harness) {
			if got := h.ok(s.PrintTime).StdoutText(); !strings.Contains(got, "1700000000") {
				t.Errorf("stdout = %q, want the session clock's 1700000000", got)
			}
		}},
		{"RandomIsSeeded", []string{s.PrintRandom}, func(t *testing.T, h *harness) {
			a := h.ok(s.PrintRandom).StdoutText()
			h2 := newHarness(t, h.rt)
			b := h2.ok(s.PrintRandom).StdoutText()
			if a == "" || a != b {
				t.Errorf("two sessions with the same random source printed %q and %q, want the same", a, b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, code := range tt.needs {
				if code == "" {
					t.Skip("no snippet for this behaviour")
				}
			}
			tt.run(t, newHarness(t, rt))
		})
	}
}

const (
	outsideSecret = "outside-secret-9c2e"
	hostSecret    = "host-secret-hunter2-5e8a"
)

// harness is one instance with its root.
type harness struct {
	t       *testing.T
	rt      runtimes.Runtime
	inst    runtimes.Instance
	root    string
	outside string
}

func newHarness(t *testing.T, rt runtimes.Runtime) *harness {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside.txt")
	if err := os.WriteFile(outside, []byte(outsideSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WASMEVAL_HOST_SECRET", hostSecret)
	calls, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	inst, err := rt.NewInstance(context.Background(), runtimes.InstanceOptions{
		Call: calls.Call,
		Root: root,
		Env:  map[string]string{"WASMEVAL_TEST_VAR": "visible-4b1d", "HOME": root},
		Now:  func() time.Time { return time.Unix(1700000000, 0) },
		Rand: bytes.NewReader(bytes.Repeat([]byte{0x5a, 0x17, 0xc3, 0x88}, 1024)),
	})
	if err != nil {
		t.Fatalf("NewInstance: %v", err)
	}
	t.Cleanup(func() {
		if err := inst.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &harness{t: t, rt: rt, inst: inst, root: root, outside: outside}
}

// run runs a cell; a cell that does not return within a minute fails the
// test (the runtime hangs).
func (h *harness) run(ctx context.Context, code string) (runtimes.Outcome, *Recorder) {
	h.t.Helper()
	rec := &Recorder{}
	type result struct {
		out runtimes.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := h.inst.Run(ctx, code, rec)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			h.t.Fatalf("Run(%q): %v", code, r.err)
		}
		return r.out, rec
	case <-time.After(time.Minute):
		h.t.Fatalf("Run(%q) did not return within a minute", code)
	}
	return runtimes.Outcome{}, nil
}

// ok runs a cell that must succeed.
func (h *harness) ok(code string) *Recorder {
	h.t.Helper()
	out, rec := h.run(context.Background(), code)
	if out.Failed || out.Interrupted {
		h.t.Fatalf("Run(%q) = %+v, want success; stderr: %s", code, out, rec.StderrText())
	}
	return rec
}

func (h *harness) wantResult(rec *Recorder, want string) {
	h.t.Helper()
	r := rec.Results()
	if len(r) != 1 || r[0]["text/plain"] != want {
		h.t.Errorf("results = %v, want one text/plain %q", r, want)
	}
}

// Event is one call of a Sink's methods.
type Event struct {
	// Kind is "stdout", "stderr", "display", "result" or "status".
	Kind string
	// Text is the text of stdout and stderr, and the message of a status.
	Text string
	// StatusKind is the kind of a status event.
	StatusKind string
	// Bundle is a display's or result's bundle.
	Bundle runtimes.Bundle
}

// Recorder is a runtimes.Sink that records what a cell produces, in order.
// It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

var _ runtimes.Sink = (*Recorder)(nil)

func (r *Recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Stdout records output text.
func (r *Recorder) Stdout(text string) { r.add(Event{Kind: "stdout", Text: text}) }

// Stderr records error text.
func (r *Recorder) Stderr(text string) { r.add(Event{Kind: "stderr", Text: text}) }

// Display records a display bundle or, with result set, a cell's result.
func (r *Recorder) Display(b runtimes.Bundle, result bool) {
	kind := "display"
	if result {
		kind = "result"
	}
	r.add(Event{Kind: kind, Bundle: b})
}

// Status records a status event.
func (r *Recorder) Status(kind, message string) {
	r.add(Event{Kind: "status", StatusKind: kind, Text: message})
}

// Events returns a copy of the recorded events.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func (r *Recorder) text(kind string) string {
	var b strings.Builder
	for _, e := range r.Events() {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// StdoutText returns all the output text.
func (r *Recorder) StdoutText() string { return r.text("stdout") }

// StderrText returns all the error text.
func (r *Recorder) StderrText() string { return r.text("stderr") }

func (r *Recorder) bundles(kind string) []runtimes.Bundle {
	var out []runtimes.Bundle
	for _, e := range r.Events() {
		if e.Kind == kind {
			out = append(out, e.Bundle)
		}
	}
	return out
}

// Displays returns the bundles of display calls.
func (r *Recorder) Displays() []runtimes.Bundle { return r.bundles("display") }

// Results returns the bundles of cell results.
func (r *Recorder) Results() []runtimes.Bundle { return r.bundles("result") }

// All returns everything recorded as text: output, errors, and the values of
// bundles.
func (r *Recorder) All() string {
	var b strings.Builder
	for _, e := range r.Events() {
		b.WriteString(e.Text)
		for _, v := range e.Bundle {
			b.WriteString(v)
		}
	}
	return b.String()
}
