package replay_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// stopAfter runs req in s and stops its cell after d, by stop.
func stopAfter(t *testing.T, s *sandbox.Session, req sandbox.Request, d time.Duration, stop func(cancel context.CancelFunc)) *sandbox.Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(d)
		stop(cancel)
	}()
	res, err := s.Eval(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestInterruptsReplayExactly records Python cells stopped by
// Session.Interrupt (serve's POST .../interrupt) and by a cancelled
// context, and a JavaScript cell interrupted, and replays them: the
// Python interrupts come at the recorded fuel checks, so the counts and
// the tracebacks are the same; the JavaScript cell is stopped once it has
// written its recorded output and named as not replayed exactly.
func TestInterruptsReplayExactly(t *testing.T) {
	testenv.RequirePython(t)
	replayExactly(t, "the interrupts", interruptsReplay)
}

// interruptsReplay is one recording and replay of
// TestInterruptsReplayExactly; it returns the replay's divergences.
func interruptsReplay(t *testing.T) []string {
	ctx := context.Background()
	s, buf := recordingSession(t, sandbox.Options{})
	for _, lang := range []string{"py", "js"} { // the runtimes' start is not in the stops' way
		if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: "1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	interrupt := func(context.CancelFunc) {
		for s.Interrupt() != nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel := func(c context.CancelFunc) { c() }
	loop := `i = 0
def step(n):
    return n + 1
print("counting")
try:
    while True:
        i = step(i)
except KeyboardInterrupt:
    print("stopped at", i)
    raise`
	var outs []string
	for _, st := range []func(context.CancelFunc){interrupt, cancel} {
		res := stopAfter(t, s, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: loop}, {Language: "py", Code: "print('not run')"}}}, 400*time.Millisecond, st)
		c := res.Details.Cells[0]
		if c.Status != sandbox.StatusCancelled || !strings.Contains(c.Output, "stopped at ") || res.Details.Cells[1].Status != sandbox.StatusPending {
			t.Fatalf("the stopped cell: %s %q", c.Status, c.Output)
		}
		outs = append(outs, c.Output)
	}
	res := stopAfter(t, s, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "let k = 0; console.log('spinning'); while (true) { k++ }"}}}, 300*time.Millisecond, interrupt)
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusCancelled {
		t.Fatalf("the JavaScript cell: %s %q", c.Status, c.Output)
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(i)"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	t.Logf("recorded %q, then %q", outs, res.Details.Cells[0].Output)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var causes []string
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			causes = append(causes, r.Cause)
		}
	}
	if got := strings.Join(causes, ","); got != "interrupt,cancel,interrupt" {
		t.Errorf("stop records %s; want interrupt,cancel,interrupt", got)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.NotExact) != 1 || !strings.Contains(rep.NotExact[0], "request 5, cell 0: stopped by an interrupt") {
		t.Errorf("not exact: %q; want the JavaScript cell", rep.NotExact)
	}
	// The JavaScript cell is stopped once it has written its recorded
	// output, by goja's interrupt, which a goroutine delivers: where the
	// error's position says it stopped (in console.log or in the loop
	// after it) depends on the scheduler. It is not exact by design
	// (NotExact, checked above); its output up to the stop is compared.
	var divs []string
	for _, d := range rep.Divergences {
		if d.Request == 5 && d.Cell == 0 && onlyStackPosition(d.Diff) {
			continue
		}
		divs = append(divs, d.String())
	}
	return divs
}

// onlyStackPosition says whether a unified diff of a cell's output changes
// only the "at <cell-N>:line:col" lines of a JavaScript error's stack.
func onlyStackPosition(diff string) bool {
	changed := 0
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "+") {
			continue
		}
		if !stackLine.MatchString(l[1:]) {
			return false
		}
		changed++
	}
	return changed > 0
}

var stackLine = regexp.MustCompile(`^    at <cell-\d+>:\d+:\d+$`)
