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

// TestForkReplays: a fork's tape starts with its source's tape up to the
// fork, so it replays on its own: the source's requests, the fork (Python
// state and files copied, JavaScript afresh), then the fork's requests,
// whose results depend on the state it was forked with.
func TestForkReplays(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Host: &liveHost{}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var src, cp, cp2 bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &src})
	if err != nil {
		t.Fatal(err)
	}
	evalOK := func(s *sandbox.Session, lang, code string) string {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete {
			t.Fatalf("%s: %s", c.Status, c.Output)
		}
		return res.Details.Cells[0].Output
	}
	evalOK(s, "py", "import random, os, time\nx = random.random()\nopen('a.txt', 'w').write(str(x))\nw = tool.weather(city='Lima')")
	evalOK(s, "js", "globalThis.j = Math.random()")
	f, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &cp})
	if err != nil {
		t.Fatal(err)
	}
	evalOK(s, "py", "print('source goes on', random.random())") // not on the fork's tape
	out := evalOK(f, "py", "print(x == float(open('a.txt').read()), w['call'], random.random(), time.time() > 0, os.getcwd() != '')")
	if !strings.HasPrefix(out, "True 1 ") {
		t.Fatalf("the fork: %q", out)
	}
	evalOK(f, "js", "console.log(typeof globalThis.j, Date.now() > 0)")
	// A fork of the fork carries both histories.
	g, err := f.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &cp2})
	if err != nil {
		t.Fatal(err)
	}
	evalOK(g, "py", "print(x, tool.weather(city='Quito')['call'])")
	g.Close(ctx)
	f.Close(ctx)
	s.Close(ctx)
	for _, tc := range []struct {
		name     string
		data     []byte
		requests int
	}{{"source", src.Bytes(), 3}, {"fork", cp.Bytes(), 4}, {"fork of the fork", cp2.Bytes(), 5}} {
		tp, err := tape.Read(bytes.NewReader(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replay.Run(ctx, tp, replay.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !rep.Identical || rep.Requests != tc.requests {
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
			t.Errorf("%s: %d requests replayed, identical %v; want %d", tc.name, rep.Requests, rep.Identical, tc.requests)
		}
	}
}

// TestForkTapeWithoutSourceRefused: a fork record that does not carry
// the source's history (tape format 1, or a source tape too long to keep)
// is refused with an error that says why.
func TestForkTapeWithoutSourceRefused(t *testing.T) {
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tape.Header{Format: 1, Wasmeval: "old", Root: "/r", Env: map[string]string{}}})
	w.Write(tape.Record{Type: tape.TypeFork})
	w.Close()
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = replay.Run(context.Background(), tp, replay.Options{})
	if err == nil || !strings.Contains(err.Error(), "the tape is of a forked session and does not hold the session it was forked from") {
		t.Errorf("%v; want the refusal", err)
	}
}
