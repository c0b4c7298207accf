package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// journalHost answers tool calls with a number that changes at each call,
// and counts them: a rebuilt session must not call again.
type journalHost struct {
	calls atomic.Int64
}

func (h *journalHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	n := h.calls.Add(1)
	b, _ := json.Marshal(map[string]any{"tool": req.Name, "n": n * 1000})
	return hostcalls.ToolResponse{Result: b}, nil
}

func (h *journalHost) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, nil
}

func (h *journalHost) Agent(ctx context.Context, req hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	return hostcalls.AgentResponse{}, nil
}

// journalManager is a manager over workspace ws keeping its sessions in st
// with the JavaScript journal capped at limit (0: the default), on a
// sandbox of its own whose host is h (as a restarted process, or another
// node, has).
func journalManager(t *testing.T, ws string, st store.Store, h hostcalls.Host, limit int64, deterministic bool) *sandbox.Manager {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Host: h})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: ws, Store: st, IdleTimeout: -1, JSJournalBytes: limit,
		Session: sandbox.SessionOptions{Deterministic: deterministic}})
	if err != nil {
		sb.Close(ctx)
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { m.Close(ctx); sb.Close(ctx) }) })
	return m
}

// jsCells are the cells of a session whose state only a faithful replay
// rebuilds: variables, a closure, a Map, random numbers, clock reads, a
// tool call whose answer differs at each call, a timer, files read
// directly (the fs module) and through a helper, and a file a later Python
// cell changes.
var jsCells = []struct{ lang, code string }{
	{"js", "var answer = 41; const counter = (() => { let n = 0; return () => ++n })(); counter(); print('one')"},
	{"ts", "const m: Map<string, number> = new Map([['a', 1]]); m.set('b', Math.random()); var t0: number = Date.now(); print(m.size)"},
	{"py", "open('data.txt', 'w').write('before')"},
	{"js", "const fs = require('fs'); var seen = fs.readFileSync('data.txt', 'utf8'); var helped = await read('data.txt'); var got = await tool.lookup({q: seen}); print(got.n)"},
	{"js", "var order = []; await new Promise((res) => { setTimeout(() => { order.push('t20'); res() }, 20); setTimeout(() => order.push('t5'), 5) }); counter(); print(order.join(','))"},
	{"py", "open('data.txt', 'w').write('after')"},
}

// jsProbe prints what the cells above left, for a session that never
// moved and one rebuilt after a restart to print alike.
const jsProbe = "print(answer + 1, counter(), [...m.keys()].join(''), typeof m.get('b'), m.get('b') > 0 && m.get('b') < 1, t0 > 0, seen, helped.trim(), got.n, order.join(','))"

func runJSCells(t *testing.T, m *sandbox.Manager, id string) {
	t.Helper()
	for _, c := range jsCells {
		if res := evalText(t, m, "alice", id, c.lang, c.code); res.Details.IsError {
			t.Fatalf("cell %q: %+v", c.code, res.Details.Cells)
		}
	}
}

// TestJSStateMovesWithJournal: a session with JavaScript state, saved to a
// dir store, is found by a new manager (a restart; and another node, over a
// workspace of its own) with its JavaScript globals as they were: the
// journal's cells are replayed on a new VM with the clock, random bytes and
// tool answers they had (the tool is not called again), each on the files
// as it found them (data.txt says "before" to the replay, though a later
// Python cell changed it; the root is put back afterwards), and no reset
// is noted. The random value and clock reading are the ones the session
// had, not new ones.
func TestJSStateMovesWithJournal(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	for _, det := range []bool{false, true} {
		name := "live"
		if det {
			name = "deterministic"
		}
		t.Run(name, func(t *testing.T) {
			st := dirStore(t)
			ws := t.TempDir()
			h1 := &journalHost{}
			m1 := journalManager(t, ws, st, h1, 0, det)
			id, err := m1.Create(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			runJSCells(t, m1, id)
			if h1.calls.Load() != 1 {
				t.Fatalf("the tool was called %d times, want 1", h1.calls.Load())
			}
			values := evalText(t, m1, "alice", id, "js", "print(m.get('b'), t0)").Content[0].Text
			m1.Close(ctx)

			h2 := &journalHost{}
			m2 := journalManager(t, ws, st, h2, 0, det)
			res := evalText(t, m2, "alice", id, "js", "print(m.get('b'), t0)")
			if got := res.Content[0].Text; got != values {
				t.Fatalf("after a restart: %q, want %q (the values the session had)", got, values)
			}
			if len(res.Details.StatusEvents) != 0 {
				t.Fatalf("a rebuilt session noted %+v", res.Details.StatusEvents)
			}
			want := "42 3 ab number true true before before 1000 t5,t20"
			if got := evalText(t, m2, "alice", id, "js", jsProbe).Content[0].Text; got != want {
				t.Fatalf("after a restart: %q, want %q", got, want)
			}
			if n := h2.calls.Load(); n != 0 {
				t.Fatalf("the rebuild called the tool %d times; its answer is in the journal", n)
			}
			if got := evalText(t, m2, "alice", id, "py", "print(open('data.txt').read())").Content[0].Text; got != "after" {
				t.Fatalf("the root after the rebuild holds %q, want the file as the last cell left it", got)
			}
			// The rebuilt session goes on journaling: another move finds
			// the state of cells run before and after the first.
			evalText(t, m2, "alice", id, "js", "var later = counter() * 10")
			m2.Close(ctx)
			m3 := journalManager(t, t.TempDir(), st, &journalHost{}, 0, det) // another node
			if got := evalText(t, m3, "alice", id, "js", "print(later, counter(), m.size, got.n)").Content[0].Text; got != "40 5 2 1000" {
				t.Fatalf("on another node after two moves: %q", got)
			}
		})
	}
}

// TestJSJournalCapMove: past its cap the journal is dropped, and the moved
// session's next JavaScript cell starts afresh, saying that the journal
// passed its cap; a cell that resets JavaScript starts a journal anew.
func TestJSJournalCapMove(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	m1 := journalManager(t, ws, st, nil, 64<<10, false)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "js", "var small = 1")
	evalText(t, m1, "alice", id, "js", "var big = []; for (let i = 0; i < 20000; i++) big.push(Math.random())") // 160 KB of random bytes
	m1.Close(ctx)
	m2 := journalManager(t, ws, st, nil, 64<<10, false)
	res := evalText(t, m2, "alice", id, "js", "typeof small")
	if res.Content[0].Text != "'undefined'" || len(res.Details.StatusEvents) == 0 || res.Details.StatusEvents[0].Kind != "state_reset" ||
		!strings.Contains(res.Details.StatusEvents[0].Message, "passed its cap of 65536 bytes") {
		t.Fatalf("after a move past the cap: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
	}
	// The new VM is journaled again.
	evalText(t, m2, "alice", id, "js", "var again = 7")
	m2.Close(ctx)
	m3 := journalManager(t, ws, st, nil, 64<<10, false)
	if res := evalText(t, m3, "alice", id, "js", "print(again)"); res.Content[0].Text != "7" || len(res.Details.StatusEvents) != 0 {
		t.Fatalf("the journal after the reset: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
	}
}

// TestJSJournalDivergenceMove: a replay whose cell prints other output
// than it did (here the journal's random bytes of cell 2 were changed in
// the store, so its Math.random() prints another number) stops, and
// JavaScript starts afresh with a note naming the cell that diverged; the
// session's files are as they were.
func TestJSJournalDivergenceMove(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	m1 := journalManager(t, ws, st, nil, 0, false)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "js", "var kept = 1; require('fs').writeFileSync('f.txt', 'js')")
	evalText(t, m1, "alice", id, "js", "var r = Math.random(); print(r)")
	evalText(t, m1, "alice", id, "py", "open('f.txt', 'w').write('py')")
	key, err := m1.StateKeyForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m1.Close(ctx)

	rec, err := st.Load(ctx, id, key)
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct{ Frames int }
	if err := json.Unmarshal(rec.JS, &manifest); err != nil || manifest.Frames < 1 {
		t.Fatalf("the record's JavaScript manifest: %s (%v)", rec.JS, err)
	}
	// The journal's frames (zstd frames of JSON entries) follow Python's.
	first := len(rec.PythonFrames) - manifest.Frames
	dec, _ := zstd.NewReader(nil)
	var entries []map[string]any
	for _, f := range rec.PythonFrames[first:] {
		data, err := dec.DecodeAll(f.Data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for d := json.NewDecoder(bytes.NewReader(data)); d.More(); {
			var e map[string]any
			if err := d.Decode(&e); err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
		}
	}
	if len(entries) != 2 {
		t.Fatalf("the journal holds %d entries, want 2", len(entries))
	}
	changed := false
	for _, ev := range entries[1]["events"].([]any) {
		if e := ev.(map[string]any); e["t"] == "rand" {
			e["data"] = "AAAAAAAAAAE=" // 8 other random bytes
			changed = true
		}
	}
	if !changed {
		t.Fatalf("cell 2's entry holds no random bytes: %v", entries[1])
	}
	enc, _ := zstd.NewWriter(nil)
	var z []byte
	for _, e := range entries {
		data, _ := json.Marshal(e)
		z = enc.EncodeAll(data, z)
	}
	rec.PythonFrames = append(rec.PythonFrames[:first], store.Frame{Sum: sha256.Sum256(z), Data: z})
	rec.JS = []byte(`{"v":1,"had":true,"frames":1}`)
	rec.FullFiles = true
	if err := st.Save(ctx, rec, rec.Epoch); err != nil {
		t.Fatal(err)
	}

	m2 := journalManager(t, ws, st, nil, 0, false)
	res := evalText(t, m2, "alice", id, "js", "typeof kept")
	if res.Content[0].Text != "'undefined'" || len(res.Details.StatusEvents) == 0 || res.Details.StatusEvents[0].Kind != "state_reset" {
		t.Fatalf("after a divergent replay: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
	}
	msg := res.Details.StatusEvents[0].Message
	if !strings.Contains(msg, "cell 2 of its journal") || !strings.Contains(msg, "diverged") || !strings.Contains(msg, "Math.random") {
		t.Fatalf("the note does not name the cell that diverged: %s", msg)
	}
	if got := evalText(t, m2, "alice", id, "py", "print(open('f.txt').read())").Content[0].Text; got != "py" {
		t.Fatalf("the root after a divergent replay holds %q, want the file as the last cell left it", got)
	}
}

// TestJSJournalStoppedCellMove: a JavaScript cell stopped by its timeout
// cannot be replayed (where it stopped is not known), so the journal is
// dropped, and the moved session's next JavaScript cell says so.
func TestJSJournalStoppedCellMove(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	m1 := journalManager(t, ws, st, nil, 0, false)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "js", "var before = 1")
	res, err := m1.Eval(ctx, "alice", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "for (;;) {}", TimeoutSeconds: 1}}})
	if err != nil || !res.Details.IsError {
		t.Fatalf("the endless cell: %v %+v", err, res)
	}
	m1.Close(ctx)
	m2 := journalManager(t, ws, st, nil, 0, false)
	res = evalText(t, m2, "alice", id, "js", "typeof before")
	if res.Content[0].Text != "'undefined'" || len(res.Details.StatusEvents) == 0 || !strings.Contains(res.Details.StatusEvents[0].Message, "was stopped") {
		t.Fatalf("after a move past a stopped cell: %q, events %+v", res.Content[0].Text, res.Details.StatusEvents)
	}
}
