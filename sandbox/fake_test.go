package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/sandbox"
)

// fakeRuntime runs a tiny script language, one command a line:
//
//	out TEXT         stdout TEXT and a newline
//	err TEXT         stderr TEXT and a newline
//	write QUOTED     stdout the Go-quoted string exactly
//	ewrite QUOTED    stderr the Go-quoted string exactly
//	display JSON     a display bundle
//	result JSON      the last expression's bundle
//	status KIND MSG  a status event
//	spam N TEXT      stdout TEXT and a newline, N times
//	big N            N bytes of 'x' on stdout, no newline
//	set K V / get K  session state
//	fail MSG         stderr "Error: MSG" and fail
//	hang             wait until interrupted
//	panic / hosterr  misbehave as a runtime
//	hold N           hold N bytes (ResidentBytes; Trim keeps them)
//	garbage N        hold N more bytes that Trim gives back
type fakeRuntime struct {
	lang string

	mu        sync.Mutex
	instances int
	resets    int
	closed    int
	opts      []runtimes.InstanceOptions
}

func (r *fakeRuntime) Language() string                { return r.lang }
func (r *fakeRuntime) Close(ctx context.Context) error { return nil }

func (r *fakeRuntime) NewInstance(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.instances++
	r.opts = append(r.opts, opts)
	return &fakeInstance{rt: r, vars: map[string]string{}}, nil
}

func (r *fakeRuntime) counts() (instances, resets, closed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.instances, r.resets, r.closed
}

type fakeInstance struct {
	rt   *fakeRuntime
	vars map[string]string

	// Memory, for runtimes.Sizer: held stays, garbage goes with Trim.
	held, garbage int64
	trims         int
}

var _ runtimes.Sizer = (*fakeInstance)(nil)

func (in *fakeInstance) ResidentBytes() int64 { return in.held + in.garbage }

func (in *fakeInstance) Trim(ctx context.Context) int64 {
	in.garbage = 0
	in.trims++
	return in.ResidentBytes()
}

func (in *fakeInstance) Reset(ctx context.Context) error {
	in.rt.mu.Lock()
	in.rt.resets++
	in.rt.mu.Unlock()
	in.vars = map[string]string{}
	return nil
}

func (in *fakeInstance) Close(ctx context.Context) error {
	in.rt.mu.Lock()
	in.rt.closed++
	in.rt.mu.Unlock()
	return nil
}

func (in *fakeInstance) Run(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	for _, line := range strings.Split(code, "\n") {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch cmd {
		case "", "#":
		case "out":
			sink.Stdout(arg + "\n")
		case "err":
			sink.Stderr(arg + "\n")
		case "write", "ewrite":
			s, err := strconv.Unquote(arg)
			if err != nil {
				return runtimes.Outcome{}, fmt.Errorf("fake: bad quoted string %s", arg)
			}
			if cmd == "write" {
				sink.Stdout(s)
			} else {
				sink.Stderr(s)
			}
		case "display", "result":
			var b runtimes.Bundle
			if err := json.Unmarshal([]byte(arg), &b); err != nil {
				return runtimes.Outcome{}, fmt.Errorf("fake: bad bundle: %v", err)
			}
			sink.Display(b, cmd == "result")
		case "status":
			kind, msg, _ := strings.Cut(arg, " ")
			sink.Status(kind, msg)
		case "spam":
			ns, text, _ := strings.Cut(arg, " ")
			n, _ := strconv.Atoi(ns)
			for range n {
				sink.Stdout(text + "\n")
			}
		case "big":
			n, _ := strconv.Atoi(arg)
			chunk := strings.Repeat("x", 64<<10)
			for n > 0 {
				k := min(n, len(chunk))
				sink.Stdout(chunk[:k])
				n -= k
			}
		case "set":
			k, v, _ := strings.Cut(arg, " ")
			in.vars[k] = v
		case "get":
			v, ok := in.vars[arg]
			if !ok {
				v = "undefined"
			}
			sink.Stdout(v + "\n")
		case "fail":
			sink.Stderr("Error: " + arg + "\n")
			return runtimes.Outcome{Failed: true}, nil
		case "hang":
			<-ctx.Done()
			sink.Stderr("KeyboardInterrupt\n")
			return runtimes.Outcome{Failed: true, Interrupted: true}, nil
		case "hold", "garbage":
			n, err := strconv.ParseInt(arg, 10, 64)
			if err != nil {
				return runtimes.Outcome{}, fmt.Errorf("fake: bad size %q", arg)
			}
			if cmd == "hold" {
				in.held = n
			} else {
				in.garbage = n
			}
		case "panic":
			panic("fake runtime panic")
		case "hosterr":
			return runtimes.Outcome{}, errors.New("fake host failure")
		default:
			return runtimes.Outcome{}, fmt.Errorf("fake: unknown command %q", cmd)
		}
	}
	return runtimes.Outcome{}, nil
}

// fakes installs fake runtimes for py and js and returns them.
func fakes(t testing.TB) (py, js *fakeRuntime) {
	t.Helper()
	py, js = &fakeRuntime{lang: "py"}, &fakeRuntime{lang: "js"}
	sandbox.SetRuntimeForTest(t, "py", func(context.Context) (runtimes.Runtime, error) { return py, nil })
	sandbox.SetRuntimeForTest(t, "js", func(context.Context) (runtimes.Runtime, error) { return js, nil })
	return py, js
}

// newFakeSession returns a session on fake runtimes, closed at the test's end.
func newFakeSession(t *testing.T) (*sandbox.Session, *fakeRuntime, *fakeRuntime) {
	t.Helper()
	py, js := fakes(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, py, js
}
