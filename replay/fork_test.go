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

// TestForkTapeRefused: a fork's tape does not hold the state the fork
// started from, so replay refuses it saying so; the source's tape replays.
func TestForkTapeRefused(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var src, cp bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &src})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x = 41"}}}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &cp})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := f.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(x + 1)"}}}); err != nil || res.Details.Cells[0].Output != "42\n" {
		t.Fatalf("the fork: %v %+v", err, res)
	}
	f.Close(ctx)
	s.Close(ctx)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{{"source", src.Bytes(), ""}, {"fork", cp.Bytes(), "the tape is of a forked session"}} {
		tp, err := tape.Read(bytes.NewReader(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replay.Run(ctx, tp, replay.Options{})
		if tc.want == "" {
			if err != nil || !rep.Identical {
				t.Errorf("%s: %v %+v", tc.name, err, rep)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error containing %q", tc.name, err, tc.want)
		}
	}
}
