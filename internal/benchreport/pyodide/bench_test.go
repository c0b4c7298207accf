package pyodide_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBenchScriptUsage: bench.mjs refuses arguments it does not know,
// saying how to call it, before loading anything.
func TestBenchScriptUsage(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: no node on PATH (make node installs Debian's)")
	}
	out, err := exec.Command(node, "bench.mjs", "/nonexistent", "twice").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: node bench.mjs PYODIDE_DIR once CODE") {
		t.Fatalf("err %v, output %q; want exit 2 and the usage", err, out)
	}
}

// TestBenchScriptServe: the answers the benchmarks rely on: a cell's
// output captured, K runs timed, a Python error reported as data and the
// process still answering after it.
func TestBenchScriptServe(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: no node on PATH (make node installs Debian's)")
	}
	dir := pyodideDir()
	if dir == "" {
		t.Skip("skipped: Pyodide is not installed (run make pyodide)")
	}
	s, err := start(node, "bench.mjs", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.p.Close(30 * time.Second)
	ask := func(line string) answer {
		t.Helper()
		ans, err := s.p.RoundTrip([]byte(line + "\n"))
		if err != nil {
			t.Fatalf("%v; stderr %s", err, s.stderr.String())
		}
		var a answer
		if err := json.Unmarshal(ans, &a); err != nil {
			t.Fatalf("%v: %s", err, ans)
		}
		return a
	}
	if a := ask(`{"cells":[{"language":"py","code":"x = 20\nprint(x + 1)"}]}`); a.Output != "21\n" || a.Status != "complete" {
		t.Errorf("print: %+v", a)
	}
	if a := ask(`{"code":"x += 1","n":5}`); a.Error != "" || a.NS <= 0 {
		t.Errorf("repeat: %+v", a)
	}
	if a := ask(`{"cells":[{"code":"print(x)"}]}`); a.Output != "25\n" {
		t.Errorf("the namespace is not shared between requests: %+v", a)
	}
	if a := ask(`{"cells":[{"code":"1/0"}]}`); !strings.Contains(a.Error, "ZeroDivisionError") {
		t.Errorf("error: %+v", a)
	}
	if a := ask(`{"cells":[{"code":"print('still here')"}]}`); a.Output != "still here\n" {
		t.Errorf("after an error: %+v", a)
	}
}
