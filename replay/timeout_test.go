package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestTimeoutsReplayExactly records Python cells stopped by their timeout
// (the interrupt caught and counted, uncaught in a loop, and during a
// sleep) and replays them: the interrupt comes at the recorded fuel, so
// the count and the tracebacks are the same.
func TestTimeoutsReplayExactly(t *testing.T) {
	testenv.RequirePython(t)
	replayExactly(t, "the timeouts", timeoutsReplay)
}

// timeoutsReplay is one recording and replay of TestTimeoutsReplayExactly;
// it returns the replay's divergences.
func timeoutsReplay(t *testing.T) []string {
	ctx := context.Background()
	s, buf := recordingSession(t, sandbox.Options{})
	reqs := []sandbox.Request{
		{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 1, Code: `i = 0
def step(n):
    return n + 1
try:
    while True:
        i = step(i)
except KeyboardInterrupt:
    print("stopped at", i)`}}},
		{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 1, Code: "while True:\n    i = step(i)"}}},
		{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 1, Code: "import time\ntime.sleep(30)"}}},
		{Cells: []sandbox.Cell{{Language: "py", Code: "print(i > 0)"}}},
	}
	var outs []string
	for _, req := range reqs {
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, res.Details.Cells[0].Output)
	}
	s.Close(ctx)
	if !strings.HasPrefix(outs[0], "stopped at ") || !strings.Contains(outs[1], "KeyboardInterrupt") || !strings.Contains(outs[1], "timed out after 1 second") ||
		!strings.Contains(outs[2], "time.sleep(30)") || outs[3] != "True\n" {
		t.Fatalf("the recorded session: %q", outs)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			stops++
			if r.Cause != tape.CauseTimeout || r.Fuel <= 0 {
				t.Errorf("stop record %+v", r)
			}
		}
	}
	if stops != 3 {
		t.Errorf("%d stop records; want 3", stops)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %q", outs[0])
	return divergences(rep)
}

// divergences are rep's divergences as text; none when it is identical.
func divergences(rep *replay.Report) []string {
	if rep.Identical {
		return nil
	}
	var out []string
	for _, d := range rep.Divergences {
		out = append(out, d.String())
	}
	return append(out, "(the report says it is not identical)")
}

// replayExactly runs a record-and-replay scenario and fails the test with
// each divergence of its replay.
func replayExactly(t *testing.T, what string, scenario func(t *testing.T) []string) {
	t.Helper()
	if divs := scenario(t); len(divs) > 0 {
		for _, d := range divs {
			t.Error(d)
		}
		t.Fatalf("%s did not replay exactly", what)
	}
}

// TestFuelStopReplays: a cell stopped by its fuel budget stops at the
// same point on replay, by construction.
func TestFuelStopReplays(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf, FuelBudget: 400_000_000})
	if err != nil {
		t.Fatal(err)
	}
	req := sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Fuel: 50_000_000, Code: "i = 0\nwhile True:\n    i += 1"}, {Language: "py", Code: "print(i)"}}}
	res, err := s.Eval(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Details.Cells[0].Output, "fuel exhausted") {
		t.Fatalf("the cell was not stopped by its fuel: %q", res.Details.Cells[0].Output)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(i)"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Header.Options.FuelBudget != 400_000_000 {
		t.Errorf("the header's fuel budget: %d", tp.Header.Options.FuelBudget)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
	}
	t.Logf("the loop counted to %s", res.Details.Cells[0].Output)
}

// replaysIdentically replays tp n times and fails the test at the first
// replay that is not byte for byte identical or has a cell flagged not
// exact: several replays, so that no goroutine of the replay's own decides
// an order by chance.
func replaysIdentically(t *testing.T, tp *tape.Tape, n int) {
	t.Helper()
	for i := range n {
		rep, err := replay.Run(context.Background(), tp, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || len(rep.NotExact) != 0 {
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
			t.Fatalf("replay %d: identical %v, not exact %q", i, rep.Identical, rep.NotExact)
		}
	}
}
