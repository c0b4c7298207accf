package js_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// nestedSession is a session whose tool calls run args.code as a cell
// nested in the waiting one (with args.ms as its timeout, if set) and
// answer with its stdout, or "FAILED: " and its stderr.
func nestedSession(t *testing.T) *session {
	t.Helper()
	var s *session
	s = newSession(t, runtimes.InstanceOptions{Call: func(ctx context.Context, req []byte) []byte {
		var q struct {
			Args struct {
				Code string
				MS   int
			}
		}
		if err := json.Unmarshal(req, &q); err != nil {
			return []byte(`{"error":{"message":"bad request"}}`)
		}
		if q.Args.MS > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(q.Args.MS)*time.Millisecond)
			defer cancel()
		}
		rec := &runtimetest.Recorder{}
		o, err := s.inst.(runtimes.Reentrant).RunNested(ctx, q.Args.Code, rec)
		if err != nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}})
			return b
		}
		out := rec.StdoutText()
		if o.Failed {
			out = "FAILED: " + rec.StderrText()
		}
		b, _ := json.Marshal(map[string]any{"result": out})
		return b
	}})
	return s
}

// TestNestedCell: a cell run while another waits for a host call runs on
// the same VM between the waiting cell's jobs: each sees the other's
// globals, it nests again, and one that throws or is stopped fails alone.
func TestNestedCell(t *testing.T) {
	s := nestedSession(t)
	s.ok("var before = 20")
	_, out := s.ok(`const r = await tool.nest({code: "var inner = before + 22; print('nested', inner)"})
print(r.trim(), inner)
const d = await tool.nest({code: "const x = await tool.nest({code: 'var deep = 3; print(deep)'}); print('mid', x.trim())"})
print(d.trim(), deep)`)
	if want := "nested 42 42\nmid 3 3\n"; out != want {
		t.Fatalf("%q, want %q", out, want)
	}
	_, out = s.ok(`let r = await tool.nest({code: "null.x"})
print(r.startsWith("FAILED") && r.includes("TypeError"))
r = await tool.nest({code: "while (true) {}", ms: 200})
print(r.startsWith("FAILED") && r.includes("Interrupted"))
r = await tool.nest({code: "await new Promise((res) => setTimeout(res, 10)); print('timer')"})
print(r.trim())`)
	if want := "true\ntrue\ntimer\n"; out != want {
		t.Fatalf("after failures: %q, want %q", out, want)
	}
	if _, err := s.inst.(runtimes.Reentrant).RunNested(context.Background(), "1", &runtimetest.Recorder{}); !errors.Is(err, runtimes.ErrNoCellWaiting) {
		t.Fatalf("RunNested between cells: %v, want ErrNoCellWaiting", err)
	}
}
