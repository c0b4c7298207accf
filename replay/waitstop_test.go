package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// slowHost's tool "slow" answers only when its call is cancelled (it tells
// waiting when it has begun); its other tools answer at once.
type slowHost struct {
	waiting chan struct{}
	calls   atomic.Int64
}

func (h *slowHost) Tool(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	n := h.calls.Add(1)
	if r.Name == "slow" {
		h.waiting <- struct{}{}
		<-ctx.Done()
		return hostcalls.ToolResponse{}, ctx.Err()
	}
	return hostcalls.ToolResponse{Result: json.RawMessage(fmt.Sprintf(`{"call":%d}`, n))}, nil
}

func (h *slowHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, nil
}

func (h *slowHost) Agent(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	return hostcalls.AgentResponse{}, nil
}

// TestStopInHostCallWaitReplays: Python cells stopped (by an interrupt,
// by a cancelled context) while they waited for a slow tool's answer are
// recorded as stopped in that wait (the cell's second: waits 2), and
// replayed, where the tape answers at once, stopped in the same wait: the
// same output and KeyboardInterrupt, the same stop (checked against the
// recorded one) and the state after it, and the report says the replay
// is exact (no NotExact line).
func TestStopInHostCallWaitReplays(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	host := &slowHost{waiting: make(chan struct{})}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	code := `r = tool.fast()
print("fast:", r)
k = 0
try:
    for k in range(3):
        tool.slow()
finally:
    print("left the wait at", k)`
	cell := sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}, {Language: "py", Code: "print('not run')"}}}
	stops := []func(cancel context.CancelFunc){
		func(context.CancelFunc) {
			if err := s.Interrupt(); err != nil {
				t.Error(err)
			}
		},
		func(cancel context.CancelFunc) { cancel() },
	}
	for _, stop := range stops {
		rctx, cancel := context.WithCancel(ctx)
		go func() {
			<-host.waiting
			stop(cancel)
		}()
		res, err := s.Eval(rctx, cell)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c := res.Details.Cells[0]
		if c.Status != sandbox.StatusCancelled || !strings.Contains(c.Output, "fast: {'call': ") || !strings.Contains(c.Output, "left the wait at 0\n") || !strings.Contains(c.Output, "KeyboardInterrupt") {
			t.Fatalf("the stopped cell: %s %q", c.Status, c.Output)
		}
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(r, k)"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	t.Logf("after the stops: %q", res.Details.Cells[0].Output)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			got = append(got, fmt.Sprintf("%s waits %d checks %d sleeps %d", r.Cause, r.Waits, r.Checks, r.Sleeps))
		}
	}
	if strings.Join(got, ", ") != "interrupt waits 2 checks 0 sleeps 0, cancel waits 2 checks 0 sleeps 0" {
		t.Fatalf("stop records: %q; want the interrupt and the cancel in the cell's second wait", got)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != 3 {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the stops in a host call's wait did not replay (%d requests)", rep.Requests)
	}
	if len(rep.NotExact) != 0 {
		t.Errorf("not exact: %q; a stop in a host call's wait replays exactly", rep.NotExact)
	}
}
