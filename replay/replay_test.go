package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// liveHost answers differently on every call, as a real tool or model
// does: replay must answer from the tape, never from here.
type liveHost struct{ calls atomic.Int64 }

func (h *liveHost) Tool(_ context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	n := h.calls.Add(1)
	return hostcalls.ToolResponse{Result: json.RawMessage(fmt.Sprintf(`{"weather":"sunny","call":%d,"at":%d}`, n, time.Now().UnixNano()))}, nil
}

func (h *liveHost) LLM(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{Text: fmt.Sprintf("answer at %d", time.Now().UnixNano())}, nil
}

func (h *liveHost) Agent(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	return hostcalls.AgentResponse{Text: "done"}, nil
}

var sessionRequests = []sandbox.Request{
	{Cells: []sandbox.Cell{
		{Language: "py", Code: `import time, random, uuid, os
t0 = time.time()
print(t0, time.monotonic(), random.random(), uuid.uuid4(), os.urandom(3).hex())
print(sorted(os.listdir(".")), open("input.txt").read().strip())
print(list({"apple", "banana", "cherry", "date"}), {"x": 1, "y": 2})
w = tool.weather(city="Paris")
print("tool:", w)
print("llm:", llm("hello"))
open("out.txt", "w").write(f"{w['call']} {t0}\n")`},
		{Language: "js", Code: `console.log(Date.now(), performance.now(), Math.random(), crypto.randomUUID())
const w = await tool.weather({city: "Rome"})
console.log("tool:", JSON.stringify(w))`},
	}},
	{Cells: []sandbox.Cell{
		{Language: "py", Code: `print(read("out.txt"), time.time() > t0, random.randint(0, 10**9))`},
		{Language: "js", Code: `console.log(await read("out.txt"), new Date().toISOString())`},
	}},
}

// record runs sessionRequests in a recorded session and returns the
// tape, and the results as JSON.
func record(t *testing.T, deterministic bool) ([]byte, []string) {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Host: &liveHost{}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "input.txt"), []byte("from the root\n"), 0o644)
	os.Mkdir(filepath.Join(root, "data"), 0o755)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root, Record: &buf, Deterministic: deterministic})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for i, req := range sessionRequests {
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Details.Cells {
			if c.Status != sandbox.StatusComplete {
				t.Fatalf("request %d cell %d: %s: %s", i+1, c.Index, c.Status, c.Output)
			}
		}
		b, _ := sandbox.MarshalResult(res)
		results = append(results, string(b))
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), results
}

func TestRoundTrip(t *testing.T) {
	for _, det := range []bool{false, true} {
		t.Run(fmt.Sprintf("deterministic=%v", det), func(t *testing.T) {
			data, results := record(t, det)
			t.Logf("tape: %d bytes for %d requests", len(data), len(results))
			tp, err := tape.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replay.Run(context.Background(), tp, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Identical || rep.Requests != 2 {
				for _, d := range rep.Divergences {
					t.Error(d.String())
				}
				t.Fatalf("replay of %d requests not identical", rep.Requests)
			}
			if !strings.Contains(results[0], `tool: {'weather': 'sunny', 'call': 1`) || !strings.Contains(results[0], "from the root") {
				t.Errorf("the recorded session did not do what the test expects: %s", results)
			}
		})
	}
}

// tamper rewrites the tape's records with edit.
func tamper(t *testing.T, data []byte, edit func(*tape.Record)) []byte {
	t.Helper()
	tp, err := tape.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, _ := tape.NewWriter(&out)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tp.Header})
	for _, r := range append(tp.Root, tp.Events...) {
		edit(&r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return out.Bytes()
}

func TestTamperedToolAnswer(t *testing.T) {
	data, _ := record(t, false)
	data = tamper(t, data, func(r *tape.Record) {
		if r.Type == tape.TypeCall && bytes.Contains(r.Call, []byte(`"Paris"`)) {
			r.Answer = bytes.Replace(r.Answer, []byte("sunny"), []byte("rainy"), 1)
		}
	})
	tp, err := tape.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identical || len(rep.Divergences) == 0 {
		t.Fatal("a tampered tool answer replayed as identical")
	}
	d := rep.Divergences[0]
	if d.Request != 1 || d.Cell != 0 || d.What != "result" || !strings.Contains(d.Diff, "-tool: {'weather': 'sunny'") || !strings.Contains(d.Diff, "+tool: {'weather': 'rainy'") {
		t.Errorf("first divergence:\n%s", d)
	}
}

func TestTamperedOutput(t *testing.T) {
	data, _ := record(t, true)
	data = tamper(t, data, func(r *tape.Record) {
		if r.Type == tape.TypeResult && r.N == 2 {
			r.Result = bytes.ReplaceAll(r.Result, []byte("True"), []byte("False"))
		}
	})
	tp, _ := tape.Read(bytes.NewReader(data))
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Divergences) != 1 {
		t.Fatalf("divergences: %v", rep.Divergences)
	}
	if d := rep.Divergences[0]; d.Request != 2 || d.Cell != 0 || !strings.Contains(d.String(), "request 2, cell 0: result: the cell's output differs") {
		t.Errorf("divergence:\n%s", d)
	}
}

// A guest that reads the clock more often than the tape recorded (here
// because its code changed) is a divergence that names the clock.
func TestChangedCodeNamesTheRead(t *testing.T) {
	data, _ := record(t, true)
	data = tamper(t, data, func(r *tape.Record) {
		if r.Type == tape.TypeRequest && r.N == 2 {
			r.Request = bytes.Replace(r.Request, []byte(`time.time() \u003e t0`), []byte(`time.time() + time.time() \u003e t0`), 1)
			r.Request = bytes.Replace(r.Request, []byte(`time.time() > t0`), []byte(`time.time() + time.time() > t0`), 1)
		}
	})
	tp, _ := tape.Read(bytes.NewReader(data))
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var clock bool
	for _, d := range rep.Divergences {
		clock = clock || (d.What == "clock" && d.Request == 2 && strings.Contains(d.Message, "more often than the tape recorded"))
	}
	if !clock {
		t.Errorf("divergences %v; want one naming the extra clock read", rep.Divergences)
	}
}

// recordingSession is a session of a new sandbox made with opts, whose
// tape goes into the buffer returned; the sandbox closes when the test
// ends.
func recordingSession(t *testing.T, opts sandbox.Options) (*sandbox.Session, *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	return s, &buf
}
