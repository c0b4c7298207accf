package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
)

func TestWithEventFunc(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	sess, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	var got []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { got = append(got, ev) })
	req := sandbox.Request{Cells: []sandbox.Cell{
		{Language: "js", Code: "print('a')"},
		{Language: "js", Code: "console.error('b'); log('c'); 1+1"},
	}}
	if _, err := sess.Eval(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := []sandbox.Event{
		{Cell: 0, Kind: sandbox.EventCellStart},
		{Cell: 0, Kind: sandbox.EventStdout, Text: "a\n"},
		{Cell: 0, Kind: sandbox.EventCellEnd, Status: "complete"},
		{Cell: 1, Kind: sandbox.EventCellStart},
		{Cell: 1, Kind: sandbox.EventStderr, Text: "b\n"},
		{Cell: 1, Kind: sandbox.EventStatus, Status: "log", Text: "c"},
		{Cell: 1, Kind: sandbox.EventResult},
		{Cell: 1, Kind: sandbox.EventCellEnd, Status: "complete"},
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %d", got, len(want))
	}
	for i := range want {
		g := got[i]
		if g.Cell != want[i].Cell || g.Kind != want[i].Kind || g.Status != want[i].Status || (g.Kind != sandbox.EventResult && g.Text != want[i].Text) {
			t.Errorf("event %d = %+v, want %+v", i, g, want[i])
		}
	}
	if got[6].Bundle["text/plain"] != "2" {
		t.Errorf("result bundle %v, want text/plain 2", got[6].Bundle)
	}
	// Without the func, nothing is observed and Eval works as before.
	got = nil
	if _, err := sess.Eval(context.Background(), req); err != nil || got != nil {
		t.Errorf("Eval without EventFunc: %v, events %v", err, got)
	}
}

// TestCellEvents: cell_start and cell_end bracket each cell that runs,
// with its title, language, status and duration; a failing cell's
// cell_end says why, and the cells after it have none.
func TestCellEvents(t *testing.T) {
	sess := eventSession(t, nil)
	var got []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { got = append(got, ev) })
	res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "js", Title: "setup", Code: "print('x')"},
		{Language: "js", Code: "while (true) {}", TimeoutSeconds: 1},
		{Language: "js", Title: "never", Code: "print('y')"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range got {
		kinds = append(kinds, fmt.Sprintf("%d:%s", ev.Cell, ev.Kind))
	}
	// The interrupted JavaScript cell may say so on stderr.
	if k, want := strings.Join(kinds, " "), "0:cell_start 0:stdout 0:cell_end 1:cell_start "; !strings.HasPrefix(k, want) || !strings.HasSuffix(k, " 1:cell_end") {
		t.Fatalf("events %s, want %s... 1:cell_end", k, want)
	}
	start, end := got[0], got[2]
	if start.Title != "setup" || start.Language != "js" || start.DurationMs != nil || start.Status != "" {
		t.Errorf("cell_start %+v, want title setup, language js, no status or duration", start)
	}
	if end.Title != "setup" || end.Language != "js" || end.Status != "complete" || end.DurationMs == nil || end.Text != "" {
		t.Errorf("cell_end %+v, want title setup, language js, status complete, a duration, no text", end)
	}
	failed := got[len(got)-1]
	cell := res.Details.Cells[1]
	if failed.Status != "error" || failed.Title != cell.Title || failed.DurationMs == nil || *failed.DurationMs != cell.DurationMs || *failed.DurationMs < 900 {
		t.Errorf("cell_end of the timed-out cell %+v, want status error, title %q, duration %d ms", failed, cell.Title, cell.DurationMs)
	}
	if failed.Text != "timed out after 1 second" {
		t.Errorf("cell_end text %q, want the timeout note", failed.Text)
	}
	// The JSON names: the final event's and the result's agree.
	b, _ := json.Marshal(end)
	if want := `"type":"cell_end"`; !strings.Contains(string(b), want) || !strings.Contains(string(b), `"durationMs":`) || !strings.Contains(string(b), `"status":"complete"`) {
		t.Errorf("cell_end JSON %s", b)
	}
	b, _ = json.Marshal(start)
	if strings.Contains(string(b), "durationMs") || strings.Contains(string(b), `"status"`) {
		t.Errorf("cell_start JSON %s has a duration or status", b)
	}
}

// TestCellEventsDisabledLanguage: a cell of a disabled language, failed
// before any runtime starts, still has its cell_start and cell_end.
func TestCellEventsDisabledLanguage(t *testing.T) {
	sess := eventSession(t, []string{"js"})
	var got []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { got = append(got, ev) })
	if _, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != sandbox.EventCellStart || got[1].Kind != sandbox.EventCellEnd || got[1].Status != "error" || !strings.Contains(got[1].Text, "py") {
		t.Fatalf("events %+v, want cell_start then cell_end with status error and the note naming py", got)
	}
}

// TestCellEventsHostError: a cell the host could not run still ends with
// a cell_end, status error, saying why; Eval returns the error.
func TestCellEventsHostError(t *testing.T) {
	sess, _, _ := newFakeSession(t)
	var got []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { got = append(got, ev) })
	_, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "out a\nhosterr"}}})
	if err == nil {
		t.Fatal("Eval of a failing runtime returned no error")
	}
	if len(got) != 3 || got[2].Kind != sandbox.EventCellEnd || got[2].Status != "error" || !strings.Contains(got[2].Text, "fake host failure") {
		t.Fatalf("events %+v, want cell_start, stdout, then cell_end with status error naming the failure", got)
	}
}

// nestHost runs an agent's prompt as a JavaScript cell in the session of
// the cell that called agent(), streaming it to its own EventFunc.
type nestHost struct {
	s      *sandbox.Session
	events []sandbox.Event
}

func (h *nestHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	ctx = sandbox.WithEventFunc(ctx, func(ev sandbox.Event) { h.events = append(h.events, ev) })
	res, err := h.s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Title: "sub", Code: r.Prompt}}})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
}

func (h *nestHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, errors.New("no tools here")
}

func (h *nestHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm here")
}

// TestCellEventsNested: a nested eval (a sub-agent's, inside a cell that
// waits in agent()) reports its cells to its own caller's EventFunc, with
// the same cell_start and cell_end; the waiting cell's stream sees only
// its own cell.
func TestCellEventsNested(t *testing.T) {
	h := &nestHost{}
	sb, err := sandbox.New(context.Background(), sandbox.Options{Host: h})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	sess, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	h.s = sess
	var outer []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { outer = append(outer, ev) })
	res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Title: "parent",
		Code: "var secret = 7; const r = await agent('print(secret * 6)'); print('got', r.trim())"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete || c.Output != "got 42\n" {
		t.Fatalf("parent cell %s: %q", c.Status, c.Output)
	}
	describe := func(evs []sandbox.Event) string {
		var s []string
		for _, ev := range evs {
			s = append(s, fmt.Sprintf("%d:%s:%s:%s:%s", ev.Cell, ev.Kind, ev.Title, ev.Status, strings.TrimSpace(ev.Text)))
		}
		return strings.Join(s, " ")
	}
	if got, want := describe(h.events), "0:cell_start:sub:: 0:stdout:::42 0:cell_end:sub:complete:"; got != want {
		t.Errorf("nested events\n%s\nwant\n%s", got, want)
	}
	// The agent call's own status events are the waiting cell's.
	if got, want := describe(outer), "0:cell_start:parent:: 0:status::agent:task: started 0:status::agent:agent://task-1: done 0:stdout:::got 42 0:cell_end:parent:complete:"; got != want {
		t.Errorf("outer events\n%s\nwant\n%s", got, want)
	}
}

// eventSession is a session of a new sandbox, with languages enabled
// (nil: all).
func eventSession(t *testing.T, languages []string) *sandbox.Session {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	sess, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir(), Languages: languages})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return sess
}

func TestManagerForkAndOwnerLen(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx := context.Background()
	id, _ := m.Create(ctx, "alice")
	m.Create(ctx, "bob")
	if _, err := m.Fork(ctx, "bob", id); !errors.Is(err, sandbox.ErrNoSession) {
		t.Errorf("fork by another owner: %v, want ErrNoSession", err)
	}
	cp, err := m.Fork(ctx, "alice", id) // no state yet: only files
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Session("alice", cp); err != nil {
		t.Errorf("the copy is not alice's: %v", err)
	}
	if a, b := m.OwnerLen("alice"), m.OwnerLen("bob"); a != 2 || b != 1 {
		t.Errorf("OwnerLen alice %d bob %d, want 2 and 1", a, b)
	}
}

func TestEventDisplayText(t *testing.T) {
	tests := []struct {
		name string
		ev   sandbox.Event
		want string
	}{
		{"markdown first", sandbox.Event{Kind: sandbox.EventDisplay, Bundle: map[string]string{"text/markdown": "# m", "text/plain": "p"}}, "# m"},
		{"plain", sandbox.Event{Kind: sandbox.EventResult, Bundle: map[string]string{"text/plain": "42"}}, "42"},
		{"html as markdown", sandbox.Event{Kind: sandbox.EventDisplay, Bundle: map[string]string{"text/html": "<b>x</b>"}}, "**x**"},
		{"json", sandbox.Event{Kind: sandbox.EventDisplay, Bundle: map[string]string{"application/json": `{"a":1}`}}, `{"a":1}`},
		{"an image stands for its bundle", sandbox.Event{Kind: sandbox.EventDisplay, Bundle: map[string]string{"image/png": "AAAA", "text/plain": "<Figure>"}}, ""},
		{"not a display", sandbox.Event{Kind: sandbox.EventStdout, Text: "out"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ev.DisplayText(); got != tt.want {
				t.Errorf("DisplayText = %q, want %q", got, tt.want)
			}
		})
	}
}
