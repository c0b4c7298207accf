package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// raceCell races a tool call against a timer of ms milliseconds, as
// node runs it: whichever settles first wins, and the loser is let go
// (the timer cleared; the call's answer taken when it comes).
func raceCell(ms time.Duration) sandbox.Request {
	return sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: fmt.Sprintf(`let t;
const timeout = new Promise((r) => { t = setTimeout(() => r("timer"), %d); });
const winner = await Promise.race([tool.lookup({}).then((a) => "tool " + a), timeout]);
clearTimeout(t);
console.log(winner, "at", performance.now() > 0, Math.random() < 2);`, ms.Milliseconds())}}}
}

// recordRace records raceCell(timer) in a session (deterministic or not)
// whose tool answers after delay; it returns the cell's output and the
// tape.
func recordRace(t *testing.T, deterministic bool, timer, delay time.Duration) (string, *tape.Tape) {
	t.Helper()
	ctx := context.Background()
	host := hostcalls.HostFuncs{ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
		time.Sleep(delay)
		return hostcalls.ToolResponse{Result: json.RawMessage(`"answer"`)}, nil
	}}
	sb, err := sandbox.New(ctx, sandbox.Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf, Deterministic: deterministic})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Eval(ctx, raceCell(timer))
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	c := res.Details.Cells[0]
	if c.Status != sandbox.StatusComplete {
		t.Fatalf("the recorded cell: %s: %s", c.Status, c.Output)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return c.Output, tp
}

// wakeRecords are the tape's wake records.
func wakeRecords(tp *tape.Tape) []tape.Record {
	var out []tape.Record
	for _, r := range tp.Events {
		if r.Type == tape.TypeWake {
			out = append(out, r)
		}
	}
	return out
}

// TestRecordedRaceReplays: a recorded session (not deterministic) runs
// JavaScript timers on the wall clock, as node does, so a 50 ms timer
// beats a tool that takes a second, and a quick tool beats a long timer;
// the tape records what woke the cell's loop at each wait (format 6) and
// the replay, which has the tool's answer at once, takes the same wakes:
// the same branch wins, byte for byte. Before, a recorded session's
// timers waited for the calls in flight, and the tool always won.
func TestRecordedRaceReplays(t *testing.T) {
	for _, tc := range []struct {
		name         string
		timer, delay time.Duration
		want         string
		first        string // the first wake
	}{
		{"timer wins", 50 * time.Millisecond, testenv.Stretch(time.Second), "timer at true true\n", "timer"},
		{"tool wins", testenv.Stretch(3 * time.Second), 0, "tool answer at true true\n", "call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, tp := recordRace(t, false, tc.timer, tc.delay)
			if out != tc.want {
				t.Fatalf("recorded %q; want %q", out, tc.want)
			}
			ws := wakeRecords(tp)
			if len(ws) == 0 || (ws[0].Timer != 0) != (tc.first == "timer") {
				t.Fatalf("the tape's wakes %+v; want the %s's first", ws, tc.first)
			}
			replaysIdentically(t, tp, 3)
		})
	}
}

// TestDeterministicRaceStaysVirtual: with deterministic the timers stay
// on the session's virtual clock, where a call takes no time: the tool
// wins however long it takes, and the tape holds no wakes.
func TestDeterministicRaceStaysVirtual(t *testing.T) {
	out, tp := recordRace(t, true, 50*time.Millisecond, 200*time.Millisecond)
	if out != "tool answer at true true\n" {
		t.Fatalf("recorded %q; want the tool to win", out)
	}
	if ws := wakeRecords(tp); len(ws) != 0 {
		t.Fatalf("a deterministic tape holds wakes: %+v", ws)
	}
	replaysIdentically(t, tp, 1)
}

// TestTamperedWakeOrderDiverges: a tape whose wakes are swapped (the
// tool's answer first, where the timer won) diverges: the replayed loop
// takes the answer, the tool wins and the cell ends with the timer's wake
// not taken; the report names the cell and the wake it did not reach,
// besides the output's diff. And a tape whose timer wake names another
// timer diverges at that wait, naming both.
func TestTamperedWakeOrderDiverges(t *testing.T) {
	out, tp := recordRace(t, false, 50*time.Millisecond, testenv.Stretch(time.Second))
	if out != "timer at true true\n" {
		t.Fatalf("recorded %q; want the timer to win", out)
	}
	var at []int
	for i, r := range tp.Events {
		if r.Type == tape.TypeWake {
			at = append(at, i)
		}
	}
	if len(at) != 2 {
		t.Fatalf("%d wakes; want 2 (the timer, the tool's answer)", len(at))
	}
	timerWake := tp.Events[at[0]]
	for _, tc := range []struct {
		name string
		edit func(ev []tape.Record)
		want string
	}{
		{"swapped", func(ev []tape.Record) { ev[at[0]], ev[at[1]] = ev[at[1]], ev[at[0]] },
			fmt.Sprintf("the cell's event loop woke once; the tape recorded 2 wakes: the cell ended before the next, timer %d (due at %d ns)", timerWake.Timer, *timerWake.NS)},
		{"another timer", func(ev []tape.Record) { ev[at[0]].Timer = 7 },
			fmt.Sprintf("its event loop had timer %d (due at %d ns) first when the tape says timer 7 (due at %d ns) fired", timerWake.Timer, *timerWake.NS, *timerWake.NS)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := *tp
			tt.Events = slices.Clone(tp.Events)
			tc.edit(tt.Events)
			rep, err := replay.Run(context.Background(), &tt, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range rep.Divergences {
				if d.What == "wake" && d.Request == 1 && d.Cell == 0 && strings.Contains(d.Message, tc.want) {
					return
				}
			}
			t.Fatalf("no divergence of the cell's wakes says %q:\n%s", tc.want, strings.Join(divergences(rep), "\n"))
		})
	}
}
