package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestNestedEvalsReplay records a cell whose agent() call makes its host
// run evals in the same session (as a sub-agent that shares it does),
// and replays it: the nested evals run again inside the waiting cell, at
// the same point, before the recorded answer.
func TestNestedEvalsReplay(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := hostcalls.HostFuncs{AgentFunc: func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
			{Language: "py", Code: "import random\nfound = random.randint(1, 10**6)\nprint('sub-agent found', found)"},
			{Language: "js", Code: "console.log('js sub-agent', Math.random() < 2)"},
		}})
		if err != nil {
			return hostcalls.AgentResponse{}, err
		}
		return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
	}}
	sb, err := sandbox.New(ctx, sandbox.Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	if sess, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf}); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "answer = agent('find a number')\nprint(answer.strip(), found)"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Details.Cells[0].Output; !strings.HasPrefix(out, "sub-agent found ") {
		t.Fatalf("the recorded cell: %q", out)
	}
	sess.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	nested := 0
	for _, r := range tp.Events {
		if r.Nested {
			nested++
		}
	}
	if nested != 2 { // its request and its result
		t.Errorf("%d nested records; want 2", nested)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != 1 {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the nested session did not replay: %d requests", rep.Requests)
	}
}
