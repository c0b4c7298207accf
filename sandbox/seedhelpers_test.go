package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
)

// seedHost answers llm() with "" when the prompt is "empty", and agent()
// with a text that names the prompt; it records the agent requests.
type seedHost struct {
	mu     sync.Mutex
	agents []hostcalls.AgentRequest
}

func (h *seedHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, nil
}

func (h *seedHost) LLM(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	if r.Prompt == "empty" {
		return hostcalls.LLMResponse{Text: ""}, nil
	}
	return hostcalls.LLMResponse{Text: "ok"}, nil
}

func (h *seedHost) Agent(_ context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	h.mu.Lock()
	h.agents = append(h.agents, r)
	h.mu.Unlock()
	return hostcalls.AgentResponse{Text: "report on " + r.Prompt + "\nfound: 3 bugs\nend\n"}, nil
}

// TestSeedHelpers checks the helpers as the seed's eval tool defines them,
// in both languages: diff of two files, output()'s raw format and agent://
// ids, budget, agent types, llm()'s empty completions, tree's hidden.
func TestSeedHelpers(t *testing.T) {
	tests := []struct {
		name   string
		py, js string
		want   string // "py§js" when they differ
	}{
		{"diff of two files", `print(diff('old.txt', 'new.txt'), end='')`, `void process.stdout.write(await diff('old.txt', 'new.txt'))`,
			"--- a/old.txt\n+++ b/new.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{"diff of equal files", `print(repr(diff('old.txt', 'old.txt')))`, `print(JSON.stringify(await diff('old.txt', 'old.txt')))`, `''§""`},
		{"diff of texts", `print(diff('a\nb\n', 'a\nc\n', text=True), end='')`, `void process.stdout.write(await diff('a\nb\n', 'a\nc\n', {text: true}))`,
			"--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"diff of a missing file", `try:
    diff('old.txt', 'gone.txt')
except HostCallError as e:
    print(e)`, `try { await diff('old.txt', 'gone.txt') } catch (e) { print(e.message) }`,
			"diff('gone.txt'): no such file or directory (diff(a, b) compares two files; diff(text_a, text_b, text=True), or {text: true} in JavaScript, compares two texts)"},
		{"tree hides dot files", `print(tree('t'), end='')`, `void process.stdout.write(await tree('t'))`, "t/\n└── shown\n"},
		{"tree hidden", `print(tree('t', hidden=True), end='')`, `void process.stdout.write(await tree('t', {hidden: true}))`, "t/\n├── .dot\n└── shown\n"},
		{"tree show_hidden", `print(tree('t', show_hidden=True), end='')`, `void process.stdout.write(await tree('t', {showHidden: true}))`, "t/\n├── .dot\n└── shown\n"},
		{"agent answers are kept for output", `r = agent('scan', label='Scan')
print(output('agent://Scan-1'), end='')
print(output('agent://Scan-1', format='raw', query='found'), end='')
print(output('agent://Scan-1', format='json')['lines'])`, `const r = await agent('scan', {label: 'Scan'});
void process.stdout.write(await output('agent://Scan-1'));
void process.stdout.write(await output('agent://Scan-1', {format: 'raw', query: 'found'}));
print((await output('agent://Scan-1', {format: 'json'})).lines)`, "report on scan\nfound: 3 bugs\nend\nfound: 3 bugs\n3"},
		{"agent type", `agent('x', agentType='reviewer'); agent('y'); agent('z', agent_type='coder'); print(output('agent://task-3'), end='')`,
			`await agent('x', {agentType: 'reviewer'}); await agent('y'); await agent('z', {agent_type: 'coder'}); void process.stdout.write(await output('agent://task-3'))`,
			"report on y\nfound: 3 bugs\nend\n"},
		{"llm empty completion raises", `try:
    llm('empty')
except HostCallError as e:
    print(e)`, `try { await llm('empty') } catch (e) { print(e.message) }`, "llm: the model returned an empty completion; ask again, or reword the prompt"},
		{"budget", `import math
t, s, r = budget.total, budget.spent(), budget.remaining()
print(t['seconds'], t['fuel'], t['agent_depth'], s['agent_depth'], r['agent_depth'], r['fuel'] == math.inf, 0 < r['seconds'] <= t['seconds'], 0 <= s['seconds'] < 5, budget.hard)`,
			`const t = await budget.total(), s = await budget.spent(), r = await budget.remaining();
print(t.seconds, t.fuel, t.agent_depth, s.agent_depth, r.agent_depth, r.fuel === Infinity, 0 < r.seconds && r.seconds <= t.seconds, 0 <= s.seconds && s.seconds < 5, await budget.hard())`,
			"300 None 3 0 3 True True True True§300 null 3 0 3 true true true true"},
	}
	host := &seedHost{}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, root := helperSession(t, host)
			for name, text := range map[string]string{"old.txt": "one\ntwo\nthree\n", "new.txt": "one\nTWO\nthree\n", "t/shown": "", "t/.dot": ""} {
				os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
				if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					code, want := tt.py, tt.want
					if lang == "js" {
						code = tt.js
					}
					if a, b, ok := strings.Cut(want, "§"); ok {
						want = map[bool]string{true: a, false: b}[lang == "py"]
					}
					got, res := evalLang(t, s, lang, code)
					if strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
						t.Errorf("output %q\nwant %q (status %s)", got, want, res.Details.Cells[0].Status)
					}
				})
			}
		})
	}
	var types []string
	for _, r := range host.agents {
		types = append(types, r.AgentType)
	}
	want := "task reviewer task coder"
	if got := strings.Join(types, " "); got != want+" "+want {
		t.Errorf("agent types %q, want %q in each language", got, want)
	}
}

// TestAgentDoneNamesOutput: the "done" status event of agent() names the
// id under which output() reads the answer back.
func TestAgentDoneNamesOutput(t *testing.T) {
	code := map[string]string{
		"py": `agent('a', label='Find'); agent('b')`,
		"js": `await agent('a', {label: 'Find'}); await agent('b')`,
	}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := helperSession(t, &seedHost{})
			_, res := evalLang(t, s, lang, code[lang])
			var msgs []string
			for _, e := range res.Details.StatusEvents {
				msgs = append(msgs, e.Kind+" "+e.Message)
			}
			want := "agent Find: started|agent agent://Find-1: done|agent task: started|agent agent://task-2: done"
			if got := strings.Join(msgs, "|"); got != want {
				t.Errorf("status events %q\nwant %q", got, want)
			}
		})
	}
}

// TestStatusMIME: a display bundle of the status MIME type (wasmeval's or
// the seed's) is a status event, streamed as one, and no output.
func TestStatusMIME(t *testing.T) {
	code := map[string]string{
		"py": `display({'application/x-omp-status': {'op': 'glob', 'count': 12, 'pattern': 'foo'}}, raw=True)
display({'application/x-wasmeval-status': {'kind': 'phase', 'message': 'loading'}}, raw=True)
display({'application/x-wasmeval-status': 'plain words'}, raw=True)
class P:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {'application/x-omp-status': {'op': 'repr'}}
display(P())
print('out')`,
		"js": `display({'application/x-omp-status': {op: 'glob', count: 12, pattern: 'foo'}});
display({'application/x-wasmeval-status': {kind: 'phase', message: 'loading'}});
display({'application/x-wasmeval-status': 'plain words'});
display({'application/x-omp-status': JSON.stringify({op: 'repr'})});
print('out')`,
	}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := helperSession(t, nil)
			var streamed []string
			ctx := sandbox.WithEventFunc(context.Background(), func(e sandbox.Event) {
				if e.Kind == sandbox.EventStatus {
					streamed = append(streamed, e.Status)
				}
			})
			if lang == "py" {
				evalLang(t, s, "py", "1")
			}
			res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code[lang]}}})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Details.Cells[0]
			if c.Output != "out\n" || len(res.Details.JSONOutputs) != 0 {
				t.Errorf("output %q, json %s; want only the print", c.Output, res.Details.JSONOutputs)
			}
			var got []string
			for _, e := range res.Details.StatusEvents {
				got = append(got, e.Kind+" "+e.Message)
			}
			want := []string{`glob {"op":"glob","count":12,"pattern":"foo"}`, "phase loading", "status plain words", `repr {"op":"repr"}`}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("status events\n%q\nwant\n%q", got, want)
			}
			if strings.Join(streamed, " ") != "glob phase status repr" {
				t.Errorf("streamed status events %q", streamed)
			}
		})
	}
}
