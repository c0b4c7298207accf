package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// reorderHost answers out of the order of the calls: tool "after_agent"
// once agent() has answered, and a while later; tool "slow" once
// tool "fast" has answered, and a while later (the guest takes fast's
// answer meanwhile); the first llm call once the second has answered, and
// a while later, with "answer 1" and "answer 2" by their arrival, as a
// live model answers one prompt differently each time; tool "ping" once
// the first llm call has arrived (so the guest makes its second llm call
// after the first reached the host).
type reorderHost struct {
	mu                          sync.Mutex
	llms                        int
	fast, second, llmIn1, agent chan struct{}
}

func newReorderHost() *reorderHost {
	return &reorderHost{fast: make(chan struct{}), second: make(chan struct{}), llmIn1: make(chan struct{}), agent: make(chan struct{})}
}

func (h *reorderHost) Tool(_ context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	switch r.Name {
	case "slow":
		<-h.fast
		time.Sleep(50 * time.Millisecond)
	case "fast":
		defer close(h.fast)
	case "ping":
		<-h.llmIn1
	case "after_agent":
		<-h.agent
		time.Sleep(50 * time.Millisecond)
	}
	return hostcalls.ToolResponse{Result: json.RawMessage(fmt.Sprintf(`{"tool":%q}`, r.Name))}, nil
}

func (h *reorderHost) LLM(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	h.mu.Lock()
	h.llms++
	n := h.llms
	h.mu.Unlock()
	if n == 1 {
		close(h.llmIn1)
		<-h.second
		time.Sleep(50 * time.Millisecond)
	} else {
		defer close(h.second)
	}
	return hostcalls.LLMResponse{Text: fmt.Sprintf("answer %d", n)}, nil
}

func (h *reorderHost) Agent(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	defer close(h.agent)
	return hostcalls.AgentResponse{Text: "agent done"}, nil
}

// TestConcurrentCallsReplayInOrder: a JavaScript cell's concurrent host
// calls whose answers came out of order (the first made answered last) are
// recorded in the order the guest took their answers, and replayed, where
// the tape has every answer at once, in that order: the callbacks that
// print as each answer comes run in the recorded order (tool, llm and
// agent calls), Promise.all gives the same array, and two calls of one request (an llm prompt asked
// twice, answered differently) get the answers they got when recorded.
func TestConcurrentCallsReplayInOrder(t *testing.T) {
	ctx := context.Background()
	s, buf := recordingSession(t, sandbox.Options{Host: newReorderHost()})
	code := `const seen = []
const a = tool.slow({}).then(r => { seen.push("a"); console.log("a:", JSON.stringify(r)); return r })
const b = tool.fast({}).then(r => { seen.push("b"); console.log("b:", JSON.stringify(r)); return r })
console.log("all:", JSON.stringify(await Promise.all([a, b])))
const x = llm("same prompt").then(t => { seen.push("x"); return t })
await tool.ping({})
const y = llm("same prompt").then(t => { seen.push("y"); return t })
console.log("answers:", JSON.stringify(await Promise.all([x, y])))
const late = tool.after_agent({}).then(() => seen.push("late"))
const g = agent("a task").then(r => { seen.push("g"); console.log("agent:", JSON.stringify(r)) })
await Promise.all([late, g])
console.log("order:", seen.join(","))`
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	c := res.Details.Cells[0]
	want := `b: {"tool":"fast"}
a: {"tool":"slow"}
all: [{"tool":"slow"},{"tool":"fast"}]
answers: ["answer 1","answer 2"]
agent: "agent done"
order: b,a,y,x,g,late
`
	if c.Status != sandbox.StatusComplete || c.Output != want {
		t.Fatalf("recorded %s %q; want %q", c.Status, c.Output, want)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for _, r := range tp.Events {
		if r.Type == tape.TypeCall {
			made = append(made, fmt.Sprint(r.Made))
		}
	}
	if got := strings.Join(made, ","); got != "2,1,4,5,3,7,6" {
		t.Fatalf("the calls are recorded as made %s; want 2,1,4,5,3,7,6 (the order the guest took their answers)", got)
	}
	replaysIdentically(t, tp, 3) // the replay's own goroutines must not decide the order
}
