package replay_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// jsTimerCells race timers of several delays against each other and
// against a tool call, reading the clocks and Math.random in the
// callbacks: recorded on the real clock, their order and values must come
// back from the tape.
var jsTimerCells = []sandbox.Request{
	{Cells: []sandbox.Cell{{Language: "js", Code: `const log = [];
const t0 = Date.now(), p0 = performance.now();
const at = (what) => log.push(what + " " + (Date.now() - t0) + " " + (performance.now() - p0).toFixed(3) + " " + Math.random());
setTimeout(() => at("t30"), 30);
setTimeout(() => { at("t3"); setTimeout(() => at("t3+1"), 1); }, 3);
setTimeout(() => at("t3b"), 3);
setImmediate(() => at("immediate"));
let n = 0;
const iv = setInterval(() => { at("iv" + n); if (++n === 4) clearInterval(iv); }, 7);
const w = tool.weather({city: "Oslo"}).then((r) => at("tool " + r.call));
await new Promise((resolve) => setTimeout(resolve, 50));
await w;
console.log(log.join("\n"));
console.log(new Date().toISOString(), crypto.randomUUID());`}}},
	{Cells: []sandbox.Cell{{Language: "js", Code: `const seen = [];
for (const d of [20, 5, 12, 1, 5]) setTimeout(() => seen.push(d + ":" + (Date.now() % 1000)), d);
await new Promise((r) => setTimeout(r, 25));
seen.join(" ")`}}},
}

// TestJSTimersReplay records JavaScript cells whose timers run on the
// real clock (and race a tool call), and replays them byte for byte.
func TestJSTimersReplay(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Host: &liveHost{}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range jsTimerCells {
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete {
			t.Fatalf("request %d: %s: %s", i+1, c.Status, c.Output)
		} else {
			t.Logf("request %d:\n%s", i+1, c.Output)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a replay does not depend on the replaying machine's timing
		rep, err := replay.Run(ctx, tp, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != len(jsTimerCells) {
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
			t.Fatal("the timers did not replay identically")
		}
		if len(rep.NotExact) > 0 {
			t.Errorf("not exact: %v", rep.NotExact)
		}
	}
}
