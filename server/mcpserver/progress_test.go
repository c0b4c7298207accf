package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// notes collects the notifications a client of the SDK receives.
type notes struct {
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	at       []time.Time // when each progress notification came
	logs     []*mcp.LoggingMessageParams
}

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.progress = append(n.progress, r.Params)
			n.at = append(n.at, time.Now())
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.logs = append(n.logs, r.Params)
		},
	}
}

// text joins the progress messages.
func (n *notes) text() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, p := range n.progress {
		b.WriteString(p.Message)
	}
	return b.String()
}

// waitFor waits until cond holds of n, at most a few seconds: the client
// may handle a notification after the call's answer.
func (n *notes) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		n.mu.Lock()
		ok := cond()
		n.mu.Unlock()
		if ok {
			return
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("never %s", what)
		}
	}
}

// TestProgressNotifications: a call with a progressToken gets the cell's
// output as progress notifications while the cell runs (stdout, stderr,
// the text of displays and of the last value), with the client's token
// and a progress that grows; a call without one gets none.
func TestProgressNotifications(t *testing.T) {
	srv, _ := newServer(t)
	n := &notes{}
	cs := connect(t, srv, n.options())
	code := "print('one'); console.error('two'); display({type: 'html', html: '<b>shown</b>'}); " +
		"var end = Date.now() + 1500; while (Date.now() < end) {} print('three'); 6*7"
	for _, tool := range []string{"eval", "run_code"} {
		t.Run(tool, func(t *testing.T) {
			n.mu.Lock()
			n.progress, n.at = nil, nil
			n.mu.Unlock()
			args := map[string]any{"language": "js", "code": code}
			if tool == "eval" {
				args = map[string]any{"cells": []any{args}}
			}
			params := &mcp.CallToolParams{Name: tool, Arguments: args}
			params.SetProgressToken("tok-" + tool)
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %s", tool, err, text(res))
			}
			returned := time.Now()
			// The cell's output as the result has it, HTML as Markdown.
			want := "one\ntwo\n**shown**\nthree\n42\n"
			if tool == "eval" {
				var d struct{ Cells []struct{ Output string } }
				structured(t, res, &d)
				if d.Cells[0].Output != want {
					t.Fatalf("the cell's output %q, want %q", d.Cells[0].Output, want)
				}
			}
			n.waitFor(t, "all the output as progress", func() bool {
				var b strings.Builder
				for _, p := range n.progress {
					b.WriteString(p.Message)
				}
				return b.String() == want
			})
			n.mu.Lock()
			defer n.mu.Unlock()
			last := 0.0
			for i, p := range n.progress {
				if p.ProgressToken != "tok-"+tool {
					t.Errorf("progress token %v, want tok-%s", p.ProgressToken, tool)
				}
				if p.Progress <= last {
					t.Errorf("progress %v after %v: it must grow", p.Progress, last)
				}
				last = p.Progress
				// The output before the busy wait came while the cell ran.
				if strings.Contains(p.Message, "one") && returned.Sub(n.at[i]) < time.Second {
					t.Errorf("the first output came %v before the answer, want about 1.5 s: not while the cell ran", returned.Sub(n.at[i]))
				}
			}
		})
	}
	// No token, no progress.
	n.mu.Lock()
	n.progress = nil
	n.mu.Unlock()
	call(t, cs, "eval", map[string]any{"cells": []any{map[string]any{"language": "js", "code": "print('quiet')"}}})
	time.Sleep(200 * time.Millisecond)
	if got := n.text(); got != "" {
		t.Errorf("a call without a progressToken got progress %q", got)
	}
}

// TestLogNotifications: status events become notifications/message at
// level info, and cell_start and cell_end at debug, once the client set
// a logging level; before, none are sent (the SDK's rule).
func TestLogNotifications(t *testing.T) {
	srv, _ := newServer(t)
	n := &notes{}
	cs := connect(t, srv, n.options())
	cells := map[string]any{"cells": []any{map[string]any{"language": "js", "title": "work", "code": "log('step one'); phase('loading')"}}}
	call(t, cs, "eval", cells)
	time.Sleep(200 * time.Millisecond)
	n.mu.Lock()
	if len(n.logs) != 0 {
		t.Errorf("log messages before logging/setLevel: %v", n.logs)
	}
	n.mu.Unlock()

	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "eval", cells)
	n.waitFor(t, "four log messages", func() bool { return len(n.logs) >= 4 })
	n.mu.Lock()
	defer n.mu.Unlock()
	var got []string
	for _, l := range n.logs {
		d, _ := l.Data.(map[string]any)
		s := string(l.Level) + " " + l.Logger
		for _, k := range []string{"event", "title", "kind", "message", "status"} {
			if v, ok := d[k]; ok {
				s += " " + k + "=" + v.(string)
			}
		}
		if d["event"] == "cell_end" {
			if _, ok := d["durationMs"].(float64); !ok {
				t.Errorf("cell_end log without durationMs: %v", d)
			}
		}
		got = append(got, s)
	}
	want := []string{
		"debug wasmeval event=cell_start title=work",
		"info wasmeval kind=log message=step one",
		"info wasmeval kind=phase message=loading",
		"debug wasmeval event=cell_end title=work status=complete",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProgressBeforeAnswerOnStdio: on the stdio face (one stream), a
// call's progress notifications are written before its answer, each a
// notifications/progress line with the call's token.
func TestProgressBeforeAnswerOnStdio(t *testing.T) {
	srv, _ := newServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		srv.MCP().Run(ctx, &mcpserver.LineTransport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	defer inW.Close()
	lines := make(chan map[string]any, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output")
			}
			return m
		case <-ctx.Done():
			t.Fatal("no line")
		}
		return nil
	}
	send := func(v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "eval", "_meta": map[string]any{"progressToken": "p1"},
		"arguments": map[string]any{"cells": []any{map[string]any{"language": "js", "code": "print('a'); console.error('b'); 'c'"}}}}})
	var streamed strings.Builder
	for {
		m := next()
		if m["id"] == 2.0 {
			if r, _ := m["result"].(map[string]any); r == nil || r["isError"] == true {
				t.Fatalf("the call's answer: %v", m)
			}
			break
		}
		if m["method"] != "notifications/progress" {
			t.Fatalf("before the answer: %v, want only progress notifications", m)
		}
		p, _ := m["params"].(map[string]any)
		if p["progressToken"] != "p1" {
			t.Errorf("progress token %v, want p1", p["progressToken"])
		}
		msg, _ := p["message"].(string)
		streamed.WriteString(msg)
	}
	if got := streamed.String(); got != "a\nb\n'c'\n" {
		t.Errorf("progress before the answer %q, want the whole output a, b, c", got)
	}
}
