package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestEvalStreamAnswers: with --stream, each answer is the line eval
// writes without it, with "line" (the request's line on stdin, blank ones
// counted) and "event" (done or error) put first.
func TestEvalStreamAnswers(t *testing.T) {
	withFakeSession(t)
	stdin := req("ok a") + "\n\nnot json\n" + req("fail") + "\n" + req("hosterr") + "\n"
	plainCode, plain, _ := run(t, context.Background(), stdin, "eval", "--cwd", t.TempDir())
	code, streamed, _ := run(t, context.Background(), stdin, "eval", "--stream", "--cwd", t.TempDir())
	if code != plainCode {
		t.Errorf("exit status %d with --stream, %d without", code, plainCode)
	}
	plainLines := strings.SplitAfter(plain, "\n")
	streamLines := strings.SplitAfter(streamed, "\n")
	want := []struct {
		line  int
		event string
	}{{1, "done"}, {3, "error"}, {4, "done"}, {5, "error"}}
	if len(plainLines) != len(want)+1 || len(streamLines) != len(want)+1 {
		t.Fatalf("stdout without --stream:\n%s\nwith:\n%s", plain, streamed)
	}
	for i, w := range want {
		prefix := fmt.Sprintf(`{"line":%d,"event":%q,`, w.line, w.event)
		if got := streamLines[i]; got != prefix+plainLines[i][1:] {
			t.Errorf("line %d with --stream\n%s\nwant\n%s", i+1, got, prefix+plainLines[i][1:])
		}
	}
}

// streamReader reads eval --stream's lines as they come.
type streamReader struct {
	t     *testing.T
	lines chan map[string]any
}

func readStream(t *testing.T, r io.Reader) *streamReader {
	s := &streamReader{t: t, lines: make(chan map[string]any, 1024)}
	go func() {
		defer close(s.lines)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				m = map[string]any{"event": "BAD LINE " + l}
			}
			s.lines <- m
		}
	}()
	return s
}

// next returns the next line, within d.
func (s *streamReader) next(d time.Duration) map[string]any {
	s.t.Helper()
	select {
	case m, ok := <-s.lines:
		if !ok {
			s.t.Fatal("eval closed its stdout")
		}
		return m
	case <-time.After(d):
		s.t.Fatalf("no line within %v", d)
	}
	return nil
}

// startEval runs eval with args in the background, on pipes; the
// returned function closes stdin and waits for its exit status.
func startEval(t *testing.T, args ...string) (stdin io.WriteCloser, stdout io.ReadCloser, wait func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := doMain(context.Background(), append([]string{"eval"}, args...), inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	return inW, outR, func() (int, string) {
		inW.Close()
		select {
		case code := <-done:
			done <- code
			return code, stderr.String()
		case <-time.After(time.Minute):
			t.Fatal("eval did not end")
		}
		return 0, ""
	}
}

// TestEvalStreamLive: events come as they happen, each flushed, tagged
// with the request's line: a cell that waits for a file the test makes
// only after it read the cell's first output completes.
func TestEvalStreamLive(t *testing.T) {
	root := t.TempDir()
	stdin, stdout, wait := startEval(t, "--stream", "--cwd", root)
	lines := readStream(t, stdout)
	code := `print('waiting'); const fs = require('fs'); while (!fs.existsSync('go')) {} print('went'); 6*7`
	fmt.Fprintf(stdin, "\n{\"cells\":[{\"language\":\"js\",\"title\":\"wait\",\"code\":%q,\"timeout\":20}]}\n", code)
	var got []string
	for {
		m := lines.next(30 * time.Second)
		if m["line"] != 2.0 {
			t.Errorf("line %v, want 2: %v", m["line"], m)
		}
		ev, _ := m["event"].(string)
		switch ev {
		case "cell_start":
			got = append(got, fmt.Sprintf("cell_start %v %v %v", m["cell"], m["title"], m["language"]))
		case "stdout":
			got = append(got, "stdout "+strings.TrimSpace(m["text"].(string)))
			if m["text"] == "waiting\n" {
				os.WriteFile(filepath.Join(root, "go"), nil, 0o644)
			}
		case "result":
			got = append(got, fmt.Sprintf("result %v", m["data"].(map[string]any)["text/plain"]))
		case "cell_end":
			_, hasDuration := m["durationMs"].(float64)
			got = append(got, fmt.Sprintf("cell_end %v %v duration:%v", m["cell"], m["status"], hasDuration))
		case "done":
			got = append(got, "done")
			if _, ok := m["details"].(map[string]any); !ok {
				t.Errorf("done line without details: %v", m)
			}
		default:
			t.Fatalf("unexpected line %v", m)
		}
		if ev == "done" {
			break
		}
	}
	want := "cell_start 0 wait js|stdout waiting|stdout went|result 42|cell_end 0 complete duration:true|done"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("lines\n%s\nwant\n%s", g, want)
	}
	if code, stderr := wait(); code != exitOK {
		t.Errorf("exit status %d; stderr %s", code, stderr)
	}
}

// TestEvalStreamSlowReader: a reader that takes nothing does not stall
// the cell: it runs to its end while its output waits, the events past
// the queue's bound are left out and a dropped line counts them, and the
// answer is still written whole.
func TestEvalStreamSlowReader(t *testing.T) {
	old := streamQueueBytes
	streamQueueBytes = 64 << 10
	defer func() { streamQueueBytes = old }()
	root := t.TempDir()
	stdin, stdout, wait := startEval(t, "--stream", "--cwd", root)
	const prints = 5000
	code := fmt.Sprintf(`for (let i = 0; i < %d; i++) print('x'.repeat(100)); require('fs').writeFileSync('finished', '')`, prints)
	fmt.Fprintf(stdin, "{\"cells\":[{\"language\":\"js\",\"code\":%q}]}\n", code)
	// Nothing reads stdout until the cell has finished.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(root, "finished")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cell did not finish while nobody read its stream: it waited on the reader")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := readStream(t, stdout)
	var outputs, dropped, droppedLines int
	for {
		m := lines.next(30 * time.Second)
		switch m["event"] {
		case "stdout":
			outputs++
			if droppedLines > 0 {
				t.Errorf("an output after the dropped line: the cell's output is past the bound once")
			}
		case "dropped":
			droppedLines++
			dropped += int(m["events"].(float64))
			if m["bytes"].(float64) <= 0 {
				t.Errorf("dropped line without bytes: %v", m)
			}
		case "cell_end":
			if m["status"] != "complete" || droppedLines != 1 {
				t.Errorf("cell_end %v after %d dropped lines, want complete after one", m, droppedLines)
			}
		}
		if m["event"] == "done" {
			break
		}
	}
	if dropped == 0 || outputs+dropped != prints {
		t.Errorf("%d output events and %d dropped, want %d in all with some dropped", outputs, dropped, prints)
	}
	if code, stderr := wait(); code != exitOK {
		t.Errorf("exit status %d; stderr %s", code, stderr)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestEvalStreamWriteFails: when stdout cannot be written, the running
// cell is stopped (nobody can read it) and eval exits 3 saying why.
func TestEvalStreamWriteFails(t *testing.T) {
	stdin := `{"cells":[{"language":"js","code":"print('a'); while (true) {}","timeout":60}]}` + "\n"
	var stderr syncBuffer
	start := time.Now()
	code := doMain(context.Background(), []string{"eval", "--stream", "--cwd", t.TempDir()}, strings.NewReader(stdin), failingWriter{}, &stderr)
	if code != exitHost || !strings.Contains(stderr.String(), "writing results: broken pipe") {
		t.Errorf("exit status %d, stderr %q; want 3 and the write error", code, stderr.String())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("eval took %v: the cell ran on after stdout failed", d)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer = testenv.LockedBuffer
