package hostcalls_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// fixture makes a session root with a few files, and outside it a secret
// that symbolic links in the root point at.
func fixture(t testing.TB) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "a.txt"):        "one\ntwo\nthree\n",
		filepath.Join(root, "sub", "b.txt"): "b\n",
		filepath.Join(root, ".hidden"):      "h",
		filepath.Join(outside, "secret"):    "31337\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-out": filepath.Join(outside, "secret"),
		"rel-out":  "../outside/secret",
		"dir-out":  outside,
		"passwd":   "/etc/passwd",
		"link-in":  "a.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func call(t testing.TB, d *hostcalls.Dispatcher, req any) (json.RawMessage, string) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	raw := d.Call(context.Background(), b)
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("response %s: %v", raw, err)
	}
	if resp.Error != nil {
		return nil, resp.Error.Message
	}
	return resp.Result, ""
}

func newDispatcher(t testing.TB, root string, host hostcalls.Host) *hostcalls.Dispatcher {
	t.Helper()
	d, err := hostcalls.NewDispatcher(root, host, hostcalls.DispatcherOptions{HostSetting: "sandbox.Options.Host is nil"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

type m = map[string]any

func TestFiles(t *testing.T) {
	root, _ := fixture(t)
	d := newDispatcher(t, root, nil)
	tests := []struct {
		name    string
		req     m
		want    string // the result as JSON
		wantErr string
	}{
		{"read", m{"op": "read", "path": "a.txt"}, `"one\ntwo\nthree\n"`, ""},
		{"read offset", m{"op": "read", "path": "a.txt", "offset": 2}, `"two\nthree\n"`, ""},
		{"read offset limit", m{"op": "read", "path": "a.txt", "offset": 2, "limit": 1}, `"two\n"`, ""},
		{"read past the end", m{"op": "read", "path": "a.txt", "offset": 9}, `""`, ""},
		{"read absolute inside", m{"op": "read", "path": filepath.Join(root, "sub/b.txt")}, `"b\n"`, ""},
		{"read symlink inside", m{"op": "read", "path": "link-in"}, `"one\ntwo\nthree\n"`, ""},
		{"read offset 0", m{"op": "read", "path": "a.txt", "offset": 0}, "", "offset is 0; lines count from 1"},
		{"read limit 0", m{"op": "read", "path": "a.txt", "limit": 0}, "", "limit is 0"},
		{"read directory", m{"op": "read", "path": "sub"}, "", "read('sub'): it is a directory; use tree()"},
		{"read URI", m{"op": "read", "path": "file:///etc/passwd"}, "", "a URI is not a file"},
		{"read missing", m{"op": "read", "path": "nope"}, "", "read('nope'): no such file or directory"},
		{"read empty path", m{"op": "read", "path": ""}, "", "the path is empty"},
		{"write", m{"op": "write", "path": "new/deep/c.txt", "content": "c"}, `"` + filepath.Join(root, "new/deep/c.txt") + `"`, ""},
		{"append", m{"op": "append", "path": "new/deep/c.txt", "content": "d"}, `"` + filepath.Join(root, "new/deep/c.txt") + `"`, ""},
		{"read back", m{"op": "read", "path": "new/deep/c.txt"}, `"cd"`, ""},
		{"write a directory", m{"op": "write", "path": "sub", "content": "x"}, "", "it is a directory"},
		{"tree", m{"op": "tree"}, `"./\n├── a.txt\n├── dir-out@\n├── link-in@\n├── link-out@\n├── new/\n│   └── deep/\n│       └── c.txt\n├── passwd@\n├── rel-out@\n└── sub/\n    └── b.txt\n"`, ""},
		{"tree depth 1 hidden", m{"op": "tree", "path": "sub", "max_depth": 1, "show_hidden": true}, `"sub/\n└── b.txt\n"`, ""},
		{"tree of a file", m{"op": "tree", "path": "a.txt"}, "", "it is not a directory"},
		{"diff", m{"op": "diff", "a": "x\ny\nz\n", "b": "x\nY\nz\n"}, `"--- a\n+++ b\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"`, ""},
		{"diff equal", m{"op": "diff", "a": "x", "b": "x"}, `""`, ""},
		{"no op", m{}, "", "the request has no op"},
		{"unknown op", m{"op": "exec"}, "", `unknown op "exec"`},
		{"budget", m{"op": "budget"}, `{"total":{"seconds":null,"fuel":null,"agent_depth":3},"spent":{"seconds":null,"fuel":0,"agent_depth":0},` +
			`"remaining":{"seconds":null,"fuel":null,"agent_depth":3},"hard":true,"timeout_seconds":null,"agent_depth":0,"max_agent_depth":3,"seconds_left":null}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := call(t, d, tt.req)
			if tt.wantErr != "" {
				if !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error %q (result %s), want %q", msg, got, tt.wantErr)
				}
				return
			}
			if msg != "" || string(got) != tt.want {
				t.Fatalf("got %s (error %q)\nwant %s", got, msg, tt.want)
			}
		})
	}
}

// TestEscapes tries every path-taking op on every way out of the root.
func TestEscapes(t *testing.T) {
	paths := map[string]string{
		"../outside/secret":          "through '..'",
		"sub/../../outside/secret":   "through '..'",
		"/tmp/../tmp/outside/secret": "outside the session root",
		"OUTSIDE/secret":             "outside the session root",
		"/etc/passwd":                "outside the session root",
		"link-out":                   "outside the session root (through a symbolic link",
		"rel-out":                    "outside the session root (through a symbolic link",
		"dir-out/secret":             "outside the session root (through a symbolic link",
		"passwd":                     "outside the session root (through a symbolic link",
	}
	for _, op := range []string{"read", "write", "append", "tree"} {
		// A fresh root per op: a write replaces a link rather than following it.
		root, outside := fixture(t)
		d := newDispatcher(t, root, nil)
		t.Cleanup(func() {
			if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "31337\n" {
				t.Errorf("the secret outside was changed: %q", b)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("files were created outside the root: %v", ents)
			}
		})
		for p, why := range paths {
			p = strings.Replace(p, "OUTSIDE", outside, 1)
			t.Run(op+" "+p, func(t *testing.T) {
				got, msg := call(t, d, m{"op": op, "path": p, "content": "pwned"})
				if msg == "" {
					t.Fatalf("succeeded: %s", got)
				}
				if strings.Contains(msg, "31337") || strings.Contains(msg, "root:x:0") {
					t.Fatalf("leaked: %s", msg)
				}
				if !strings.HasPrefix(msg, op+"(") {
					t.Errorf("error %q does not name the helper and path", msg)
				}
				if op != "tree" && !strings.Contains(msg, why) {
					t.Errorf("error %q, want it to say %q", msg, why)
				}
			})
		}
	}
}

// TestSymlinkRace swaps a link between a file inside and one outside while
// reads and writes go through it: none may reach the outside.
func TestSymlinkRace(t *testing.T) {
	root, outside := fixture(t)
	d := newDispatcher(t, root, nil)
	if err := os.Mkdir(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "in", "secret"), []byte("inside\n"), 0o644)
	link := filepath.Join(root, "flip")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			target := filepath.Join(root, "in")
			if i%2 == 1 {
				target = outside
			}
			tmp := link + ".tmp"
			os.Remove(tmp)
			os.Symlink(target, tmp)
			os.Rename(tmp, link)
		}
	}()
	for i := 0; i < 2000; i++ {
		got, msg := call(t, d, m{"op": "read", "path": "flip/secret"})
		if strings.Contains(string(got), "31337") || strings.Contains(msg, "31337") {
			t.Fatalf("read escaped: %s %s", got, msg)
		}
		call(t, d, m{"op": "write", "path": "flip/secret", "content": "pwned"})
		call(t, d, m{"op": "append", "path": "flip/new", "content": "pwned"})
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "31337\n" {
		t.Errorf("the secret outside was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("append created a file outside the root")
	}
}

func TestWriteIsAtomic(t *testing.T) {
	root, _ := fixture(t)
	d := newDispatcher(t, root, nil)
	call(t, d, m{"op": "write", "path": "a.txt", "content": "new"})
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
	// Writing to a link inside the root replaces the link, not its target.
	call(t, d, m{"op": "write", "path": "link-in", "content": "replaced"})
	if fi, err := os.Lstat(filepath.Join(root, "link-in")); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("link-in: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "new" {
		t.Errorf("a.txt = %q", b)
	}
}

func TestCaps(t *testing.T) {
	root, _ := fixture(t)
	tool := 0
	d := newDispatcher(t, root, hostcalls.HostFuncs{ToolFunc: func(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
		tool++
		return hostcalls.ToolResponse{}, nil
	}})
	// At the default memory limit (256 MiB), a write carries up to an
	// eighth of it: 32 MiB.
	huge := strings.Repeat("x", 32<<20+1)
	if _, msg := call(t, d, m{"op": "write", "path": "big", "content": huge}); !strings.Contains(msg, "more than the 32 MiB one write may carry") {
		t.Errorf("huge write: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(root, "big")); err == nil {
		t.Error("the huge write created a file")
	}
	args := m{"data": strings.Repeat("y", hostcalls.DefaultMaxToolArgBytes)}
	if _, msg := call(t, d, m{"op": "tool", "name": "t", "args": args}); !strings.Contains(msg, "more than the 1024 KiB a tool call may carry") {
		t.Errorf("huge tool argument: %q", msg)
	}
	if tool != 0 {
		t.Error("the host saw a capped call")
	}
	// A request past the decode cap is refused without being decoded.
	big := make([]byte, 6*hostcalls.DefaultMaxWriteBytes+2<<20)
	if resp := d.Call(context.Background(), big); !strings.Contains(string(resp), "more than the") {
		t.Errorf("oversized request: %s", resp)
	}
	// A read of more than the cap must be given offset and limit.
	os.WriteFile(filepath.Join(root, "long"), []byte(strings.Repeat("z", hostcalls.DefaultMaxReadBytes+1)), 0o644)
	if _, msg := call(t, d, m{"op": "read", "path": "long"}); !strings.Contains(msg, "give offset and limit") {
		t.Errorf("huge read: %q", msg)
	}
}

func TestNoHost(t *testing.T) {
	root, _ := fixture(t)
	d := newDispatcher(t, root, nil)
	tests := []struct {
		req  m
		want string
	}{
		{m{"op": "tool", "name": "search", "args": m{}}, "tool.search: no tool is configured for this sandbox (sandbox.Options.Host is nil)"},
		{m{"op": "llm", "prompt": "hi"}, "llm: no LLM is configured for this sandbox (sandbox.Options.Host is nil)"},
		{m{"op": "agent", "prompt": "hi"}, "agent: no agent is configured for this sandbox (sandbox.Options.Host is nil)"},
	}
	for _, tt := range tests {
		if _, msg := call(t, d, tt.req); msg != tt.want {
			t.Errorf("%v: %q, want %q", tt.req, msg, tt.want)
		}
	}
}

func TestHost(t *testing.T) {
	root, _ := fixture(t)
	var gotAgent hostcalls.AgentRequest
	host := hostcalls.HostFuncs{
		ToolFunc: func(_ context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			if r.Name == "fail" {
				return hostcalls.ToolResponse{}, errors.New("it broke")
			}
			return hostcalls.ToolResponse{Result: json.RawMessage(`{"name":"` + r.Name + `","args":` + string(r.Args) + `}`)}, nil
		},
		LLMFunc: func(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			if r.System == "empty" {
				return hostcalls.LLMResponse{Text: " \n"}, nil
			}
			if r.Schema != nil {
				return hostcalls.LLMResponse{Text: ` {"model":"` + r.Model + `"} `}, nil
			}
			return hostcalls.LLMResponse{Text: r.Model + ":" + r.System + ":" + r.Prompt}, nil
		},
		AgentFunc: func(_ context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			gotAgent = r
			return hostcalls.AgentResponse{Text: "done"}, nil
		},
	}
	d := newDispatcher(t, root, host)
	tests := []struct {
		name    string
		req     m
		want    string
		wantErr string
	}{
		{"tool", m{"op": "tool", "name": "search", "args": m{"q": 1}}, `{"name":"search","args":{"q":1}}`, ""},
		{"tool no args", m{"op": "tool", "name": "t"}, `{"name":"t","args":{}}`, ""},
		{"tool array args", m{"op": "tool", "name": "t", "args": []int{1}}, "", "must be an object (a dict in Python), not an array"},
		{"tool bad name", m{"op": "tool", "name": "a b"}, "", "is not a tool name"},
		{"tool error", m{"op": "tool", "name": "fail"}, "", "tool.fail: it broke"},
		{"llm", m{"op": "llm", "prompt": "p", "system": "s"}, `"default:s:p"`, ""},
		{"llm smol", m{"op": "llm", "prompt": "p", "model": "smol"}, `"smol::p"`, ""},
		{"llm schema", m{"op": "llm", "prompt": "p", "schema": m{"type": "object"}}, `{"model":"default"}`, ""},
		{"llm bad model", m{"op": "llm", "prompt": "p", "model": "gpt"}, "", `model "gpt" is not one of`},
		{"llm empty prompt", m{"op": "llm", "prompt": " "}, "", "llm: the prompt is empty"},
		{"llm bad schema", m{"op": "llm", "prompt": "p", "schema": "x"}, "", "must be a JSON schema object, not a string"},
		{"agent", m{"op": "agent", "prompt": "p", "label": "L", "agent_type": "coder"}, `"done"`, ""},
		{"llm empty completion", m{"op": "llm", "prompt": "p", "system": "empty"}, "", "llm: the model returned an empty completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := call(t, d, tt.req)
			if tt.wantErr != "" {
				if !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error %q (result %s), want %q", msg, got, tt.wantErr)
				}
				return
			}
			if msg != "" || string(got) != tt.want {
				t.Fatalf("got %s (error %q)\nwant %s", got, msg, tt.want)
			}
		})
	}
	if gotAgent.Depth != 1 || gotAgent.Label != "L" || gotAgent.AgentType != "coder" {
		t.Errorf("agent request %+v", gotAgent)
	}
}

// TestDiffFiles: diff compares two files of the root under git's a/ and b/
// headers; "files": false (the default of the op) compares texts.
func TestDiffFiles(t *testing.T) {
	root, _ := fixture(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "a2.txt"), []byte("one\nTWO\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDispatcher(t, root, nil)
	tests := []struct {
		name    string
		req     m
		want    string
		wantErr string
	}{
		{"files", m{"op": "diff", "files": true, "a": "a.txt", "b": "sub/a2.txt"},
			`"--- a/a.txt\n+++ b/sub/a2.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"`, ""},
		{"absolute paths inside", m{"op": "diff", "files": true, "a": filepath.Join(root, "a.txt"), "b": "./sub/a2.txt"},
			`"--- a/a.txt\n+++ b/sub/a2.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"`, ""},
		{"equal files", m{"op": "diff", "files": true, "a": "a.txt", "b": "link-in"}, `""`, ""},
		{"texts", m{"op": "diff", "a": "x\n", "b": "y\n"}, `"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"`, ""},
		{"no newline at end", m{"op": "diff", "a": "x", "b": "y"}, `"--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"`, ""},
		{"missing file", m{"op": "diff", "files": true, "a": "a.txt", "b": "nope"}, "", "diff('nope'): no such file or directory (diff(a, b) compares two files; diff(text_a, text_b, text=True)"},
		{"a directory", m{"op": "diff", "files": true, "a": "sub", "b": "a.txt"}, "", "diff('sub'): it is a directory; diff compares two files"},
		{"outside", m{"op": "diff", "files": true, "a": "a.txt", "b": "../outside/secret"}, "", "diff('../outside/secret'): the path leads outside the session root"},
		{"link out", m{"op": "diff", "files": true, "a": "link-out", "b": "a.txt"}, "", "diff('link-out'): the path leads outside the session root"},
		{"empty path", m{"op": "diff", "files": true, "a": "a.txt"}, "", "diff: the second path is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := call(t, d, tt.req)
			if tt.wantErr != "" {
				if !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error %q (result %s), want %q", msg, got, tt.wantErr)
				}
				return
			}
			if msg != "" || string(got) != tt.want {
				t.Fatalf("got %s (error %q)\nwant %s", got, msg, tt.want)
			}
		})
	}
}

// TestAgentOutputs: an agent's answer comes back with an "agent://" id
// (its label, or its type, as the prefix) under which output() reads it
// back, in the default "raw" format and as JSON.
func TestAgentOutputs(t *testing.T) {
	root, _ := fixture(t)
	host := hostcalls.HostFuncs{AgentFunc: func(_ context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		if r.Schema != nil {
			return hostcalls.AgentResponse{Object: json.RawMessage(`{"n":1}`)}, nil
		}
		return hostcalls.AgentResponse{Text: "line 1\nfound it\nline 3\n"}, nil
	}}
	d, err := hostcalls.NewDispatcher(root, host, hostcalls.DispatcherOptions{Outputs: func(id string) (string, error) {
		return "", errors.New("unknown id")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	agentCall := func(req m) (result json.RawMessage, id string) {
		t.Helper()
		b, _ := json.Marshal(req)
		var resp struct {
			Result   json.RawMessage `json:"result"`
			OutputID string          `json:"output_id"`
			Error    *struct{ Message string }
		}
		if err := json.Unmarshal(d.Call(context.Background(), b), &resp); err != nil || resp.Error != nil {
			t.Fatalf("agent: %v %+v", err, resp.Error)
		}
		return resp.Result, resp.OutputID
	}
	res, id1 := agentCall(m{"op": "agent", "prompt": "p", "label": "Find bug"})
	if string(res) != `"line 1\nfound it\nline 3\n"` || id1 != "agent://Find-bug-1" {
		t.Fatalf("answer %s, id %q; want the text and agent://Find-bug-1", res, id1)
	}
	res, id2 := agentCall(m{"op": "agent", "prompt": "p", "agent_type": "task", "schema": m{"type": "object"}})
	if string(res) != `{"n":1}` || id2 != "agent://task-2" {
		t.Fatalf("answer %s, id %q; want the object and agent://task-2", res, id2)
	}
	tests := []struct {
		name    string
		req     m
		want    string
		wantErr string
	}{
		{"raw by default", m{"op": "output", "ids": []string{id1}}, `"line 1\nfound it\nline 3\n"`, ""},
		{"raw", m{"op": "output", "ids": []string{id1}, "format": "raw", "query": "found"}, `"found it\n"`, ""},
		{"without the scheme", m{"op": "output", "ids": []string{"task-2"}}, `"{\"n\":1}"`, ""},
		{"json", m{"op": "output", "ids": []string{id2}, "format": "json"}, `{"id":"agent://task-2","lines":1,"text":"{\"n\":1}"}`, ""},
		{"several ids: a list", m{"op": "output", "ids": []string{id2, id2}}, `["{\"n\":1}","{\"n\":1}"]`, ""},
		{"several ids as text", m{"op": "output", "ids": []string{id2, id2}, "format": "text"}, `"==> agent://task-2 <==\n{\"n\":1}\n\n==> agent://task-2 <==\n{\"n\":1}\n"`, ""},
		{"unknown agent id", m{"op": "output", "ids": []string{"agent://x-9"}}, "", "output('agent://x-9'): no agent output has this id; there are agent://Find-bug-1, agent://task-2"},
		{"cut outputs still asked", m{"op": "output", "ids": []string{"out-1"}}, "", "output('out-1'): unknown id"},
		{"bad format", m{"op": "output", "ids": []string{id1}, "format": "xml"}, "", "give 'raw' (the default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := call(t, d, tt.req)
			if tt.wantErr != "" {
				if !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error %q (result %s), want %q", msg, got, tt.wantErr)
				}
				return
			}
			if msg != "" || string(got) != tt.want {
				t.Fatalf("got %s (error %q)\nwant %s", got, msg, tt.want)
			}
		})
	}
}

// TestBudget: the budget op reports the cell's limits (WithCellLimits) as
// the seed's total, spent, remaining and hard.
func TestBudget(t *testing.T) {
	root, _ := fixture(t)
	d, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{AgentDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now().Add(-10 * time.Second)
	ctx := hostcalls.WithCellLimits(context.Background(), func() hostcalls.CellLimits {
		return hostcalls.CellLimits{Start: start, HardLimit: 300 * time.Second, Timeout: 30 * time.Second, FuelTotal: 1000, FuelSpent: 250}
	})
	var b struct {
		Total, Spent, Remaining struct {
			Seconds    *float64
			Fuel       *int64
			AgentDepth int `json:"agent_depth"`
		}
		Hard           bool
		TimeoutSeconds float64 `json:"timeout_seconds"`
	}
	if err := json.Unmarshal(d.Call(ctx, []byte(`{"op":"budget"}`)), &struct{ Result any }{&b}); err != nil {
		t.Fatal(err)
	}
	if b.Total.Seconds == nil || *b.Total.Seconds != 300 || b.Spent.Seconds == nil || *b.Spent.Seconds < 10 || *b.Spent.Seconds > 20 ||
		b.Remaining.Seconds == nil || *b.Remaining.Seconds > 290 || *b.Remaining.Seconds < 280 {
		t.Errorf("seconds: total %v spent %v remaining %v", b.Total.Seconds, b.Spent.Seconds, b.Remaining.Seconds)
	}
	if b.Total.Fuel == nil || *b.Total.Fuel != 1000 || *b.Spent.Fuel != 250 || *b.Remaining.Fuel != 750 {
		t.Errorf("fuel: %+v", b)
	}
	if b.Total.AgentDepth != 3 || b.Spent.AgentDepth != 1 || b.Remaining.AgentDepth != 2 || !b.Hard || b.TimeoutSeconds != 30 {
		t.Errorf("agent depth, hard or timeout: %+v", b)
	}
}

func TestAgentDepth(t *testing.T) {
	root, _ := fixture(t)
	host := hostcalls.HostFuncs{AgentFunc: func(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		return hostcalls.AgentResponse{Text: "ok"}, nil
	}}
	for depth := 0; depth <= hostcalls.MaxAgentDepth; depth++ {
		d, err := hostcalls.NewDispatcher(root, host, hostcalls.DispatcherOptions{AgentDepth: depth})
		if err != nil {
			t.Fatal(err)
		}
		_, msg := call(t, d, m{"op": "agent", "prompt": "p"})
		d.Close()
		if depth < hostcalls.MaxAgentDepth && msg != "" {
			t.Errorf("depth %d: %s", depth, msg)
		}
		if depth == hostcalls.MaxAgentDepth && !strings.Contains(msg, "agents nest at most 3 deep") {
			t.Errorf("depth %d: %q", depth, msg)
		}
	}
	if _, err := hostcalls.NewDispatcher(root, host, hostcalls.DispatcherOptions{AgentDepth: 4}); err == nil {
		t.Error("depth 4 accepted")
	}
}

func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"op":"read","path":"a.txt","offset":2,"limit":1}`, `{"op":"write","path":"x/y","content":"z"}`,
		`{"op":"tree","max_depth":2}`, `{"op":"diff","a":"1\n2\n","b":"2\n3"}`, `{"op":"tool","name":"t","args":{}}`,
		`{"op":"llm","prompt":"p","schema":{}}`, `{"op":"agent","prompt":"p"}`, `{"op":"read","path":"../x"}`,
		`{"op":1}`, `[]`, `{"op":"read"}{}`, ``, `{"op":"read","offset":-1}`,
	} {
		f.Add([]byte(s))
	}
	root, _ := fixture(f)
	host := hostcalls.HostFuncs{
		ToolFunc: func(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			return hostcalls.ToolResponse{}, nil
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			return hostcalls.LLMResponse{Text: "{}"}, nil
		},
		AgentFunc: func(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			return hostcalls.AgentResponse{Text: "{}"}, nil
		},
	}
	d := newDispatcher(f, root, host)
	f.Fuzz(func(t *testing.T, req []byte) {
		resp := d.Call(context.Background(), req)
		var r struct {
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(resp, &r); err != nil {
			t.Fatalf("response %q is not JSON: %v", resp, err)
		}
		if r.Error != nil && strings.HasPrefix(r.Error.Message, "internal error") {
			t.Fatalf("panic: %s", r.Error.Message)
		}
	})
}
