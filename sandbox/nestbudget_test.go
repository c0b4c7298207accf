package sandbox_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestNestedEvalBudget: budget in a cell of a nested eval (a sub-agent's
// eval run inside a cell that waits in agent()) reports that cell's own
// agent depth, one deeper than its parent's, and no more time left than
// the parent has: the nested cell is cancelled when its parent ends. Both
// languages.
func TestNestedEvalBudget(t *testing.T) {
	testenv.RequirePython(t)
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := subAgentSession(t, false)
			var code string
			if lang == "py" {
				code = `import json
outer = budget()
inner = agent("py:import json\nprint(json.dumps(budget()), end='')")
print(json.dumps({"outer": outer, "inner": json.loads(inner)}), end='')`
			} else {
				code = `const outer = await budget();
const inner = await agent("js:print(JSON.stringify(await budget()))");
print(JSON.stringify({outer, inner: JSON.parse(inner)}))`
			}
			// The parent's hard limit is 10 * 3 s = 30 s; the sub-agent's
			// cell has the default timeout of 30 s, a hard limit of 300 s.
			out := evalOut(t, s, sandbox.Cell{Language: lang, Code: code, TimeoutSeconds: 3})[0]
			type dims struct {
				Seconds    *float64 `json:"seconds"`
				AgentDepth int      `json:"agent_depth"`
			}
			var got struct {
				Outer, Inner struct {
					Total, Spent, Remaining dims
					AgentDepth              int      `json:"agent_depth"`
					SecondsLeft             *float64 `json:"seconds_left"`
				}
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			o, in := got.Outer, got.Inner
			if o.AgentDepth != 0 || o.Spent.AgentDepth != 0 || o.Remaining.AgentDepth != 3 {
				t.Errorf("parent: agent_depth %d, spent %d, remaining %d; want 0, 0, 3", o.AgentDepth, o.Spent.AgentDepth, o.Remaining.AgentDepth)
			}
			if in.AgentDepth != 1 || in.Spent.AgentDepth != 1 || in.Remaining.AgentDepth != 2 || in.Total.AgentDepth != 3 {
				t.Errorf("nested: agent_depth %d, spent %d, remaining %d, total %d; want 1, 1, 2, 3",
					in.AgentDepth, in.Spent.AgentDepth, in.Remaining.AgentDepth, in.Total.AgentDepth)
			}
			if in.Total.Seconds == nil || *in.Total.Seconds != 300 {
				t.Errorf("nested: total seconds %s, want its own hard limit, 300", num(in.Total.Seconds))
			}
			if in.Remaining.Seconds == nil || *in.Remaining.Seconds > 30 || *in.Remaining.Seconds <= 0 {
				t.Errorf("nested: remaining seconds %s, want at most the parent's 30", num(in.Remaining.Seconds))
			}
			if in.SecondsLeft == nil || *in.SecondsLeft > 30 {
				t.Errorf("nested: seconds_left %s, want at most the parent's 30", num(in.SecondsLeft))
			}
		})
	}
}

// num shows a JSON number that may be null.
func num(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}
