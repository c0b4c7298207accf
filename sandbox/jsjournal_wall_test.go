package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/store"
)

// slowHost answers the tool "slow" after a delay (or when the call is
// cancelled), any other tool at once, and counts the calls: a rebuilt
// session must not call again.
type slowHost struct {
	journalHost
	delay time.Duration
	slow  atomic.Int64
}

func (h *slowHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	if req.Name == "slow" {
		h.slow.Add(1)
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
		}
		return hostcalls.ToolResponse{Result: json.RawMessage(`{"tool":"slow"}`)}, nil
	}
	return h.journalHost.Tool(ctx, req)
}

// raceCell races a slow tool against a 100 ms timer, as node runs it: the
// timer wins while the call is in flight. ticks counts an interval's
// firings while a slow call is awaited, a number the wall clock decides
// and a rebuild must reproduce.
const raceCell = `var winners = globalThis.winners || [];
var winner = await Promise.race([tool.slow({}).then(() => 'tool'), new Promise(r => setTimeout(() => r('timer'), 100))]);
winners.push(winner);
var ticks = 0; const iv = setInterval(() => ticks++, 40);
var fast = await tool.fast({}); await tool.slow({}); clearInterval(iv);
print(winner, ticks > 3, fast.n > 0)`

// wallProbe prints what raceCell left.
const wallProbe = "print(winner, winners.join(','), ticks, fast.n)"

// TestJSJournalWallTimersMove: in a store-backed session a JavaScript
// timer runs on the wall clock, as node's do: it fires while a host call
// is in flight, so Promise.race of a slow tool and a 100 ms timer is won
// by the timer (on the session's clock the timer waited for the tool).
// The journal keeps the order of the loop's wakes, so the session moved
// (a restart, another node), several times, comes back with the same
// state: the rebuild makes no tool call, takes no wall-clock time for the
// timers, and reproduces even the number of interval ticks the wall clock
// decided while the tool was slow.
func TestJSJournalWallTimersMove(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	const delay = 700 * time.Millisecond
	h := &slowHost{delay: delay}
	m := journalManager(t, ws, st, h, 0, false)
	id, err := m.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for move := 0; move < 3; move++ {
		start := time.Now()
		res := evalText(t, m, "alice", id, "js", raceCell)
		if got := res.Content[0].Text; got != "timer true true" || res.Details.IsError {
			t.Fatalf("move %d: the race printed %q (%+v); want the timer to win while the tool is slow", move, got, res.Details.Cells)
		}
		if took := time.Since(start); took < delay {
			t.Fatalf("move %d: the cell took %v; it awaits a slow call of %v", move, took, delay)
		}
		want = evalText(t, m, "alice", id, "js", wallProbe).Content[0].Text
		if !strings.HasPrefix(want, "timer ") {
			t.Fatalf("move %d: the probe printed %q", move, want)
		}
		m.Close(ctx)

		h = &slowHost{delay: delay}
		m = journalManager(t, t.TempDir(), st, h, 0, false) // another node
		start = time.Now()
		res = evalText(t, m, "alice", id, "js", wallProbe)
		if got := res.Content[0].Text; got != want || len(res.Details.StatusEvents) != 0 {
			t.Fatalf("move %d: after the move the probe printed %q with events %+v; want %q", move, got, res.Details.StatusEvents, want)
		}
		if n := h.calls.Load() + h.slow.Load(); n != 0 {
			t.Fatalf("move %d: the rebuild called a tool %d times; the answers are in the journal", move, n)
		}
		// Waiting would take at least delay a replayed cell (the tool's
		// two slow calls, or the interval's ticks meanwhile); the bound
		// stretches by the machine's load, as the suite's hang guards do
		// (at load 9 the rebuild's own work took 2 s in a CI-like run).
		if took := time.Since(start); took > testenv.Stretch(time.Duration(move+1)*delay) {
			t.Fatalf("move %d: the rebuild took %v; it waits neither for timers nor for tools", move, took)
		}
	}
}

// TestJSJournalWallWakesTampered: a journal whose loop wakes were
// tampered with does not rebuild: JavaScript starts afresh, with a note
// naming the cell that diverged and its event loop. Reordered (the host
// call's answer taken before the timer fired, as the session's clock
// would have run it), the replay follows the journal, the race resolves
// with the tool, and the timer, due by the next recorded clock read,
// fires without the wait the journal recorded. A wake left out, one too
// many, or a timer's due time changed are found likewise.
func TestJSJournalWallWakesTampered(t *testing.T) {
	testenv.RequirePython(t)
	for _, tc := range []struct {
		name, note string
		tamper     func([]map[string]int64) []map[string]int64
	}{
		// As a build that knows no wakes replays it: on the session's
		// clock, where the tool wins the race without printing otherwise;
		// the entry's salted output sum tells.
		{"no wakes", "replaying cell 2 of its journal (\"var winner = await Promise.race([tool.sl...\") diverged: its output is not what it was", nil},
		{"reordered", "its event loop waited once; the journal recorded 2 waits", func(w []map[string]int64) []map[string]int64 { return []map[string]int64{w[1], w[0]} }},
		{"left out", "its event loop waited once more than the journal recorded", func(w []map[string]int64) []map[string]int64 { return w[:1] }},
		{"one more", "its event loop waited 2 times; the journal recorded 3 waits", func(w []map[string]int64) []map[string]int64 { return append(w, w[1]) }},
		{"due changed", "its event loop had timer 1 (due at", func(w []map[string]int64) []map[string]int64 {
			w[0]["due"]++
			return w
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := dirStore(t)
			ws := t.TempDir()
			m1 := journalManager(t, ws, st, &slowHost{delay: 300 * time.Millisecond}, 0, false)
			id, _ := m1.Create(ctx, "alice")
			evalText(t, m1, "alice", id, "js", "var kept = 1")
			evalText(t, m1, "alice", id, "js", "var winner = await Promise.race([tool.slow({}).then(() => 'tool'), new Promise(r => setTimeout(() => r('timer'), 50))])")
			res := evalText(t, m1, "alice", id, "js", "print(winner)")
			if res.Content[0].Text != "timer" {
				t.Fatalf("the race printed %q", res.Content[0].Text)
			}
			key, err := m1.StateKeyForTest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m1.Close(ctx)

			rec, err := st.Load(ctx, id, key)
			if err != nil {
				t.Fatal(err)
			}
			var manifest struct {
				V      int
				Frames int
			}
			if err := json.Unmarshal(rec.JS, &manifest); err != nil || manifest.Frames < 1 || manifest.V != 1 {
				t.Fatalf("the record's JavaScript manifest: %s (%v)", rec.JS, err)
			}
			first := len(rec.PythonFrames) - manifest.Frames
			dec, _ := zstd.NewReader(nil)
			// Raw values: the other fields go back byte for byte.
			var entries []map[string]json.RawMessage
			for _, f := range rec.PythonFrames[first:] {
				data, err := dec.DecodeAll(f.Data, nil)
				if err != nil {
					t.Fatal(err)
				}
				for d := json.NewDecoder(bytes.NewReader(data)); d.More(); {
					var e map[string]json.RawMessage
					if err := d.Decode(&e); err != nil {
						t.Fatal(err)
					}
					entries = append(entries, e)
				}
			}
			if len(entries) != 3 || string(entries[1]["clock"]) != `"wall"` {
				t.Fatalf("the journal's entries: %v", entries)
			}
			var wakes []map[string]int64
			json.Unmarshal(entries[1]["wakes"], &wakes)
			if len(wakes) != 2 || wakes[0]["timer"] != 1 || wakes[0]["due"] == 0 || wakes[1]["call"] != 1 {
				t.Fatalf("cell 2's wakes are %s; want the timer's, then the call's", entries[1]["wakes"])
			}
			if tc.tamper == nil {
				delete(entries[1], "clock")
				delete(entries[1], "wakes")
			} else {
				entries[1]["wakes"], _ = json.Marshal(tc.tamper(wakes))
			}
			enc, _ := zstd.NewWriter(nil)
			var z []byte
			for _, e := range entries {
				data, _ := json.Marshal(e)
				z = enc.EncodeAll(data, z)
			}
			rec.PythonFrames = append(rec.PythonFrames[:first], store.Frame{Sum: sha256.Sum256(z), Data: z})
			rec.JS = []byte(`{"v":1,"had":true,"frames":1}`)
			if err := st.Save(ctx, rec, rec.Epoch); err != nil {
				t.Fatal(err)
			}

			h := &slowHost{delay: time.Millisecond}
			m2 := journalManager(t, ws, st, h, 0, false)
			res = evalText(t, m2, "alice", id, "js", "typeof kept")
			if res.Content[0].Text != "'undefined'" || len(res.Details.StatusEvents) == 0 || res.Details.StatusEvents[0].Kind != "state_reset" {
				t.Fatalf("after a tampered replay: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
			}
			msg := res.Details.StatusEvents[0].Message
			if !strings.Contains(msg, "cell 2 of its journal") || !strings.Contains(msg, "diverged") || !strings.Contains(msg, tc.note) {
				t.Fatalf("the note does not name the cell and %q: %s", tc.note, msg)
			}
			if n := h.slow.Load(); n != 0 {
				t.Fatalf("the replay called the slow tool %d times", n)
			}
		})
	}
}

// TestJSJournalWallDeterministicSessionClock: a deterministic session
// keeps its timers on its own clock (a host call takes no time on it, so
// the slow tool wins the race), journals no wakes, and still moves.
func TestJSJournalWallDeterministicSessionClock(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	m1 := journalManager(t, ws, st, &slowHost{delay: 200 * time.Millisecond}, 0, true)
	id, _ := m1.Create(ctx, "alice")
	res := evalText(t, m1, "alice", id, "js", "var winner = await Promise.race([tool.slow({}).then(() => 'tool'), new Promise(r => setTimeout(() => r('timer'), 50))]); print(winner)")
	if res.Content[0].Text != "tool" {
		t.Fatalf("on the session's clock the race printed %q, want the tool (a call takes no time on it)", res.Content[0].Text)
	}
	m1.Close(ctx)
	m2 := journalManager(t, ws, st, &slowHost{delay: time.Millisecond}, 0, true)
	if res := evalText(t, m2, "alice", id, "js", "print(winner)"); res.Content[0].Text != "tool" || len(res.Details.StatusEvents) != 0 {
		t.Fatalf("after a move: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
	}
}
