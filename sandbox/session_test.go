package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/sandbox"
)

func py(code string) sandbox.Cell { return sandbox.Cell{Language: "py", Code: code} }
func js(code string) sandbox.Cell { return sandbox.Cell{Language: "js", Code: code} }

func titled(c sandbox.Cell, title string) sandbox.Cell { c.Title = title; return c }

func mustEval(t *testing.T, s *sandbox.Session, cells ...sandbox.Cell) *sandbox.Result {
	t.Helper()
	res, err := s.Eval(context.Background(), sandbox.Request{Cells: cells})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	return res
}

func statuses(r *sandbox.Result) []sandbox.CellStatus {
	var out []sandbox.CellStatus
	for _, c := range r.Details.Cells {
		out = append(out, c.Status)
	}
	return out
}

func exitCodes(r *sandbox.Result) []string {
	var out []string
	for _, c := range r.Details.Cells {
		if c.ExitCode == nil {
			out = append(out, "null")
		} else {
			out = append(out, string(rune('0'+*c.ExitCode)))
		}
	}
	return out
}

// TestContent checks the text an agent reads, for each shape of result.
func TestContent(t *testing.T) {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	tests := []struct {
		name     string
		cells    []sandbox.Cell
		want     string
		statuses []sandbox.CellStatus
		images   int
	}{
		{
			name:     "one cell",
			cells:    []sandbox.Cell{py("out hello")},
			want:     "hello",
			statuses: []sandbox.CellStatus{"complete"},
		},
		{
			name:     "several cells with and without titles",
			cells:    []sandbox.Cell{titled(py("out hello"), "greet"), js("result {\"text/plain\":\"42\"}")},
			want:     "[1/2] greet\nhello\n\n[2/2] js\n42",
			statuses: []sandbox.CellStatus{"complete", "complete"},
		},
		{
			name:     "title on one line",
			cells:    []sandbox.Cell{titled(py("out a"), "two\nlines  here"), py("out b")},
			want:     "[1/2] two lines here\na\n\n[2/2] py\nb",
			statuses: []sandbox.CellStatus{"complete", "complete"},
		},
		{
			name:     "no output",
			cells:    []sandbox.Cell{py("set x 1")},
			want:     "(no output)",
			statuses: []sandbox.CellStatus{"complete"},
		},
		{
			name:     "no output among several",
			cells:    []sandbox.Cell{py("set x 1"), py("out 1")},
			want:     "[1/2] py\n(no output)\n\n[2/2] py\n1",
			statuses: []sandbox.CellStatus{"complete", "complete"},
		},
		{
			name:     "only images",
			cells:    []sandbox.Cell{py(`display {"image/png":"` + png + `","text/plain":"<Figure>"}`)},
			want:     "(displayed 1 image(s); no text output)",
			statuses: []sandbox.CellStatus{"complete"},
			images:   1,
		},
		{
			name:     "images and text",
			cells:    []sandbox.Cell{py("out before\ndisplay {\"image/png\":\"" + png + "\"}\ndisplay {\"image/png\":\"" + png + "\"}")},
			want:     "before",
			statuses: []sandbox.CellStatus{"complete"},
			images:   2,
		},
		{
			name:     "failing middle cell leaves the rest pending",
			cells:    []sandbox.Cell{py("out one"), py("out two\nfail boom"), titled(py("out three"), "last")},
			want:     "[1/3] py\none\n\n[2/3] py\ntwo\nError: boom\n\n[3/3] last\n(not run)\n\nCell 2 (py) failed",
			statuses: []sandbox.CellStatus{"complete", "error", "pending"},
		},
		{
			name:     "stdout and stderr interleaved",
			cells:    []sandbox.Cell{py("out 1\nerr 2\nout 3\nwrite \"4\"\newrite \"5\\n\"")},
			want:     "1\n2\n3\n45",
			statuses: []sandbox.CellStatus{"complete"},
		},
		{
			name:     "displays on their own lines, where they came",
			cells:    []sandbox.Cell{py("write \"partial\"\ndisplay {\"text/plain\":\"shown\"}\nout after\nresult {\"text/plain\":\"'value'\"}")},
			want:     "partial\nshown\nafter\n'value'",
			statuses: []sandbox.CellStatus{"complete"},
		},
		{
			name: "markdown over plain over html",
			cells: []sandbox.Cell{py(strings.Join([]string{
				`display {"text/markdown":"**md**","text/plain":"plain1","text/html":"<b>h</b>"}`,
				`display {"text/plain":"plain2","text/html":"<b>h</b>"}`,
				`display {"text/html":"<h2>Title</h2><p>para</p>"}`,
			}, "\n"))},
			want:     "**md**\nplain2\n## Title\n\npara",
			statuses: []sandbox.CellStatus{"complete"},
		},
		{
			name:     "json without text shows the json",
			cells:    []sandbox.Cell{py(`display {"application/json":"{\"a\": 1}"}`)},
			want:     `{"a": 1}`,
			statuses: []sandbox.CellStatus{"complete"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newFakeSession(t)
			res := mustEval(t, s, tt.cells...)
			if got := res.Content[0].Text; got != tt.want {
				t.Errorf("content text:\n got %q\nwant %q", got, tt.want)
			}
			if got := statuses(res); !reflect.DeepEqual(got, tt.statuses) {
				t.Errorf("statuses = %v, want %v", got, tt.statuses)
			}
			if got := len(res.Content) - 1; got != tt.images {
				t.Errorf("image items = %d, want %d", got, tt.images)
			}
			if got := len(res.Details.Images); got != tt.images {
				t.Errorf("details.images = %d, want %d", got, tt.images)
			}
			wantErr := false
			for _, st := range tt.statuses {
				wantErr = wantErr || st == "error" || st == "cancelled"
			}
			if res.Details.IsError != wantErr {
				t.Errorf("isError = %v, want %v", res.Details.IsError, wantErr)
			}
		})
	}
}

func TestDetails(t *testing.T) {
	s, _, _ := newFakeSession(t)
	res := mustEval(t, s,
		titled(js("status phase loading\nout a\ndisplay {\"application/json\":\"{\\\"k\\\": [1, 2]}\",\"text/plain\":\"{'k': [1, 2]}\"}"), "first"),
		py("display {\"text/markdown\":\"# Hi\"}\ndisplay {\"text/html\":\"<ul><li>x</li></ul>\"}\nstatus log done\nfail no"),
		js("out never"),
	)
	d := res.Details
	if d.Language != "js" || !reflect.DeepEqual(d.Languages, []string{"js", "py"}) {
		t.Errorf("language %q, languages %v; want js, [js py]", d.Language, d.Languages)
	}
	if got := exitCodes(res); !reflect.DeepEqual(got, []string{"0", "1", "null"}) {
		t.Errorf("exit codes %v", got)
	}
	if len(d.JSONOutputs) != 1 || string(d.JSONOutputs[0]) != `{"k":[1,2]}` {
		t.Errorf("jsonOutputs = %s", d.JSONOutputs)
	}
	if got, want := d.Cells[1].Markdown, "# Hi\n\n- x"; got != want {
		t.Errorf("markdown = %q, want %q", got, want)
	}
	wantEvents := []sandbox.StatusEvent{{Cell: 0, Kind: "phase", Message: "loading"}, {Cell: 1, Kind: "log", Message: "done"}}
	if !reflect.DeepEqual(d.StatusEvents, wantEvents) {
		t.Errorf("statusEvents = %v", d.StatusEvents)
	}
	if !reflect.DeepEqual(d.Cells[1].StatusEvents, wantEvents[1:]) || len(d.Cells[2].StatusEvents) != 0 {
		t.Errorf("cell statusEvents = %v / %v", d.Cells[1].StatusEvents, d.Cells[2].StatusEvents)
	}
	if d.Cells[0].Title != "first" || d.Cells[1].Title != "py" || d.Cells[2].Index != 2 {
		t.Errorf("titles/index: %+v", d.Cells)
	}
	if d.Cells[2].Output != "" || d.Cells[2].DurationMs != 0 {
		t.Errorf("pending cell has output %q, duration %d", d.Cells[2].Output, d.Cells[2].DurationMs)
	}
	if !d.IsError {
		t.Error("isError not set")
	}
}

// TestJSONShape pins the field names and the null/empty conventions.
func TestJSONShape(t *testing.T) {
	s, _, _ := newFakeSession(t)
	res := mustEval(t, s, py("fail x"), py("out y"))
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	details := m["details"].(map[string]any)
	for _, k := range []string{"cells", "language", "languages", "jsonOutputs", "images", "statusEvents", "meta", "isError"} {
		if _, ok := details[k]; !ok {
			t.Errorf("details.%s missing in %s", k, b)
		}
	}
	for _, k := range []string{"jsonOutputs", "images", "statusEvents"} {
		if v, ok := details[k].([]any); !ok || len(v) != 0 {
			t.Errorf("details.%s = %v, want []", k, details[k])
		}
	}
	cells := details["cells"].([]any)
	for _, k := range []string{"index", "title", "language", "code", "status", "output", "durationMs", "exitCode", "statusEvents", "markdown"} {
		if _, ok := cells[1].(map[string]any)[k]; !ok {
			t.Errorf("cells[1].%s missing in %s", k, b)
		}
	}
	if cells[1].(map[string]any)["exitCode"] != nil {
		t.Errorf("pending exitCode = %v, want null", cells[1].(map[string]any)["exitCode"])
	}
	if string(mustJSON(t, details["meta"])) != "{}" {
		t.Errorf("meta = %s, want {}", mustJSON(t, details["meta"]))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTruncation(t *testing.T) {
	tests := []struct {
		name       string
		code       string
		wantCut    bool
		wantCapped bool
	}{
		{name: "under both limits", code: "spam 3000 line"},
		{name: "too many lines", code: "spam 3001 line", wantCut: true},
		{name: "too many bytes", code: "spam 1000 " + strings.Repeat("y", 60), wantCut: true},
		{name: "one long line", code: "big 200000", wantCut: true},
		{name: "past what is kept", code: "out first\nbig 20000000\nout\nout last", wantCut: true, wantCapped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newFakeSession(t)
			res := mustEval(t, s, py(tt.code), py("out next"))
			out := res.Details.Cells[0].Output
			tr := res.Details.Meta.Truncated
			if !tt.wantCut {
				if len(tr) != 0 || strings.Contains(out, "cut;") {
					t.Fatalf("cut output that fits: meta %+v", tr)
				}
				return
			}
			if len(tr) != 1 || tr[0].Cell != 0 || tr[0].OutputID == "" {
				t.Fatalf("meta.truncated = %+v, want one entry for cell 0", tr)
			}
			if len(out) > sandbox.MaxShownBytes || strings.Count(out, "\n") > sandbox.MaxShownLines {
				t.Errorf("shown output is %d bytes, %d lines: over the limits", len(out), strings.Count(out, "\n"))
			}
			if !strings.Contains(out, `output("`+tr[0].OutputID+`")`) {
				t.Errorf("no marker naming %s in the output", tr[0].OutputID)
			}
			if tr[0].Capped != tt.wantCapped {
				t.Errorf("capped = %v, want %v", tr[0].Capped, tt.wantCapped)
			}
			if got := int64(len(out)) - tr[0].Bytes + tr[0].OmittedBytes; got <= 0 || got > 200 {
				t.Errorf("shown + omitted bytes do not add up: marker takes %d bytes", got)
			}
			full, err := s.Output(tr[0].OutputID)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.wantCapped && int64(len(full)) != tr[0].Bytes {
				t.Errorf("full output is %d bytes, want %d", len(full), tr[0].Bytes)
			}
			if tt.wantCapped {
				if len(full) > sandbox.KeepCap+200 || !strings.Contains(full, "output capped") {
					t.Errorf("capped output is %d bytes, or says nothing of the cap", len(full))
				}
				if !strings.HasPrefix(out, "first\n") || !strings.HasSuffix(out, "\nlast\n") {
					t.Errorf("head or tail lost: %q ... %q", out[:20], out[len(out)-20:])
				}
			}
			if res.Details.Cells[1].Output != "next\n" {
				t.Errorf("next cell output %q", res.Details.Cells[1].Output)
			}
		})
	}
}

func TestOutputNotFound(t *testing.T) {
	s, _, _ := newFakeSession(t)
	if _, err := s.Output("out-9"); !errors.Is(err, sandbox.ErrOutputNotFound) {
		t.Fatalf("Output(out-9) = %v, want ErrOutputNotFound", err)
	}
}

func TestStateAndReset(t *testing.T) {
	s, py1, js1 := newFakeSession(t)
	mustEval(t, s, py("set x 1"), js("set y 2"))
	res := mustEval(t, s, py("get x"), js("get y"))
	if got := res.Content[0].Text; got != "[1/2] py\n1\n\n[2/2] js\n2" {
		t.Errorf("state across requests: %q", got)
	}
	reset := py("get x")
	reset.Reset = true
	res = mustEval(t, s, reset, js("get y"))
	if got := res.Content[0].Text; got != "[1/2] py\nundefined\n\n[2/2] js\n2" {
		t.Errorf("after a py reset: %q", got)
	}
	if n, r, _ := py1.counts(); n != 1 || r != 1 {
		t.Errorf("py: %d instances, %d resets; want 1, 1", n, r)
	}
	// A reset as a language's first cell needs no reset: the instance is new.
	s2 := newSessionOn(t, s)
	mustEval(t, s2, sandbox.Cell{Language: "js", Code: "out hi", Reset: true})
	if n, r, _ := js1.counts(); n != 2 || r != 0 {
		t.Errorf("js: %d instances, %d resets; want 2, 0", n, r)
	}
}

func newSessionOn(t *testing.T, _ *sandbox.Session) *sandbox.Session {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTimeout(t *testing.T) {
	s, _, _ := newFakeSession(t)
	c := py("out started\nhang")
	c.TimeoutSeconds = 1
	res := mustEval(t, s, c, py("out never"))
	if got := statuses(res); !reflect.DeepEqual(got, []sandbox.CellStatus{"error", "pending"}) {
		t.Errorf("statuses = %v", got)
	}
	if got, want := res.Details.Cells[0].Output, "started\nKeyboardInterrupt\ntimed out after 1 second\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	if !res.Details.IsError || *res.Details.Cells[0].ExitCode != 1 {
		t.Error("a timed-out cell is an error with exit code 1")
	}
	// The session is still usable.
	if res := mustEval(t, s, py("out again")); res.Content[0].Text != "again" {
		t.Errorf("after a timeout: %q", res.Content[0].Text)
	}
}

func TestCancel(t *testing.T) {
	s, _, _ := newFakeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("hang"), py("out never")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res); !reflect.DeepEqual(got, []sandbox.CellStatus{"cancelled", "pending"}) {
		t.Errorf("statuses = %v", got)
	}
	if !strings.HasSuffix(res.Details.Cells[0].Output, "cancelled\n") || !res.Details.IsError {
		t.Errorf("output %q, isError %v", res.Details.Cells[0].Output, res.Details.IsError)
	}
	// A done context fails before anything runs.
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("out x")}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Eval with a done ctx: %v", err)
	}
}

func TestOneEvalAtATime(t *testing.T) {
	s, _, _ := newFakeSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *sandbox.Result)
	go func() {
		res, _ := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("hang")}})
		done <- res
	}()
	time.Sleep(50 * time.Millisecond)
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer waitCancel()
	if _, err := s.Eval(waitCtx, sandbox.Request{Cells: []sandbox.Cell{py("out x")}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Eval while the first runs: %v, want a deadline error", err)
	}
	cancel()
	if res := <-done; res == nil || res.Details.Cells[0].Status != sandbox.StatusCancelled {
		t.Errorf("first Eval: %+v", res)
	}
}

func TestCloseDuringEval(t *testing.T) {
	s, py1, _ := newFakeSession(t)
	done := make(chan *sandbox.Result)
	go func() {
		res, _ := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{py("hang")}})
		done <- res
	}()
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil || res.Details.Cells[0].Status != sandbox.StatusCancelled ||
		!strings.Contains(res.Details.Cells[0].Output, "session was closed") {
		t.Errorf("Eval cut short by Close: %+v", res)
	}
	if _, _, closed := py1.counts(); closed != 1 {
		t.Errorf("%d instances closed, want 1", closed)
	}
	if _, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{py("out x")}}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Eval after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestHostFailures(t *testing.T) {
	tests := []struct {
		name string
		code string
		want string
	}{
		{name: "runtime error", code: "hosterr", want: "sandbox: cell 0: py runtime: fake host failure"},
		{name: "runtime panic", code: "panic", want: "sandbox: cell 0: py runtime: panicked: fake runtime panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, py1, _ := newFakeSession(t)
			mustEval(t, s, py("set x 1"))
			_, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{py(tt.code)}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "sandbox: ") {
				t.Fatalf("err = %v, want one with %q", err, tt.want)
			}
			var re *sandbox.RequestError
			if errors.As(err, &re) {
				t.Error("a host failure must not be a RequestError")
			}
			// The broken instance is replaced by a new one.
			res := mustEval(t, s, py("get x"))
			if res.Content[0].Text != "undefined" {
				t.Errorf("after a host failure: %q", res.Content[0].Text)
			}
			if n, _, closed := py1.counts(); n != 2 || closed != 1 {
				t.Errorf("%d instances, %d closed; want 2, 1", n, closed)
			}
		})
	}
}

func TestRuntimeStartOnce(t *testing.T) {
	var calls atomic.Int32
	notBuilt := errors.New("python runtime not built: run make")
	sandbox.SetRuntimeForTest(t, "py", func(ctx context.Context) (runtimes.Runtime, error) {
		calls.Add(1)
		return nil, notBuilt
	})
	sandbox.SetRuntimeForTest(t, "js", func(ctx context.Context) (runtimes.Runtime, error) {
		return &fakeRuntime{lang: "js"}, nil
	})
	s := newSessionOn(t, nil)
	for range 2 {
		_, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{py("out 1")}})
		if !errors.Is(err, notBuilt) || !strings.Contains(err.Error(), "sandbox: cell 0: py runtime: python runtime not built") {
			t.Fatalf("err = %v", err)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("runtime made %d times, want once", calls.Load())
	}
	// Other languages still work.
	if res := mustEval(t, s, js("out ok")); res.Content[0].Text != "ok" {
		t.Errorf("js: %q", res.Content[0].Text)
	}
}

func TestRuntimeStartCancelledIsRetried(t *testing.T) {
	var calls atomic.Int32
	sandbox.SetRuntimeForTest(t, "py", func(ctx context.Context) (runtimes.Runtime, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &fakeRuntime{lang: "py"}, nil
	})
	s := newSessionOn(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("out 1")}})
	if err != nil || res.Details.Cells[0].Status != sandbox.StatusCancelled {
		t.Fatalf("first Eval: %v, %+v", err, res)
	}
	if res := mustEval(t, s, py("out 1")); res.Content[0].Text != "1" {
		t.Errorf("second Eval: %q", res.Content[0].Text)
	}
}

func TestEvalRejectsInvalidRequest(t *testing.T) {
	s, _, _ := newFakeSession(t)
	tests := []struct {
		name string
		req  sandbox.Request
		want string
	}{
		{"no cells", sandbox.Request{}, "cells: empty"},
		{"bad language", sandbox.Request{Cells: []sandbox.Cell{{Language: "python", Code: "x"}}}, `cells[0].language: "python" is not supported; use "py" for Python`},
		{"empty code", sandbox.Request{Cells: []sandbox.Cell{py("out 1"), py("  \n")}}, "cells[1].code: empty"},
		{"timeout", sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "x", TimeoutSeconds: 900}}}, "cells[0].timeout: 900 is out of range; use an integer from 1 to 600 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Eval(context.Background(), tt.req)
			var re *sandbox.RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a RequestError with %q", err, tt.want)
			}
		})
	}
}

func TestSessionOptions(t *testing.T) {
	py1, _ := fakes(t)
	t.Setenv("WASMEVAL_TEST_SECRET_TOKEN", "s3cret")
	t.Setenv("LANG", "C.UTF-8")
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)

	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{}); err == nil || !strings.Contains(err.Error(), "Root is required") {
		t.Errorf("no root: %v", err)
	}
	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: filepath.Join(t.TempDir(), "missing")}); err == nil || !strings.Contains(err.Error(), "existing directory") {
		t.Errorf("missing root: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: file}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file root: %v", err)
	}
	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), MemoryLimitBytes: -1}); err == nil {
		t.Error("negative memory limit accepted")
	}

	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("sub", 0o755)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: "sub", MemoryLimitBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mustEval(t, s, py("out 1"))
	opts := py1.opts[0]
	wantRoot := filepath.Join(dir, "sub")
	if opts.Root != wantRoot || s.Root() != wantRoot {
		t.Errorf("root = %q, want %q", opts.Root, wantRoot)
	}
	if opts.Env["HOME"] != wantRoot || opts.Env["PWD"] != wantRoot || opts.Env["LANG"] != "C.UTF-8" {
		t.Errorf("env = %v", opts.Env)
	}
	allowed := map[string]bool{"HOME": true, "PWD": true, "PATH": true, "LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TZ": true}
	for k := range opts.Env {
		if !allowed[k] {
			t.Errorf("env has %s, which is not on the allowlist", k)
		}
	}
	if opts.MemoryLimitBytes != 1<<20 {
		t.Errorf("memory limit = %d", opts.MemoryLimitBytes)
	}

	// An explicit Env is used as given.
	s2, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: dir, Env: map[string]string{"A": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	mustEval(t, s2, py("out 1"))
	if got := py1.opts[1].Env; !reflect.DeepEqual(got, map[string]string{"A": "b"}) {
		t.Errorf("explicit env = %v", got)
	}
}

func TestSandboxClose(t *testing.T) {
	fakes(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustEval(t, s, py("out 1"))
	if err := sb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("out 1")}}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Eval on a closed sandbox's session: %v", err)
	}
	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("NewSession after Close: %v", err)
	}
	if err := sb.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDisplayBudget(t *testing.T) {
	s, _, _ := newFakeSession(t)
	res := mustEval(t, s, py(`display {"image/png":"not base64!!","text/plain":"fallback"}`))
	if got := res.Content[0].Text; got != "[image/png not shown: its data is not valid base64]\nfallback" {
		t.Errorf("invalid image: %q", got)
	}
	if len(res.Details.Images) != 0 {
		t.Error("invalid image kept")
	}
	res = mustEval(t, s, py(`display {"application/json":"not json"}`))
	if len(res.Details.JSONOutputs) != 1 || string(res.Details.JSONOutputs[0]) != `"not json"` {
		t.Errorf("invalid json kept as %s", res.Details.JSONOutputs)
	}
	var code strings.Builder
	for range 1200 {
		code.WriteString("status log x\n")
	}
	res = mustEval(t, s, py(code.String()))
	if len(res.Details.StatusEvents) != 1000 || res.Details.Meta.Dropped == nil || res.Details.Meta.Dropped.StatusEvents != 200 {
		t.Errorf("%d events kept, dropped %+v", len(res.Details.StatusEvents), res.Details.Meta.Dropped)
	}
}
