package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/wasmeval/wasmeval/internal/benchreport/linepipe"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// echoLinesEnv makes the test binary eval's line protocol without a
// session (echoLines), as the child of BenchmarkEvalLineFloor: "poll"
// reads stdin as eval does (newLineSource), "goroutine" as eval did
// before, in a goroutine of its own (readLines).
const echoLinesEnv = "WASMEVAL_TEST_ECHO_LINES"

func init() {
	if how := os.Getenv(echoLinesEnv); how != "" {
		os.Exit(echoLines(how))
	}
}

// echoLines answers each line on stdin as eval answers a trivial cell's,
// without running it: the line read (how says how), decoded
// (profiles.EvalRequest), trivialResult encoded and written by
// resultWriter, and stdin asked whether it ended (lineSource.ended).
func echoLines(how string) int {
	var res sandbox.Result
	if err := json.Unmarshal([]byte(trivialResult), &res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	ctx := context.Background()
	var lines lineSource
	switch how {
	case "poll":
		lines = newLineSource(ctx, os.Stdin, maxLineBytes)
	case "goroutine":
		lines = readLines(os.Stdin, maxLineBytes)
	default:
		fmt.Fprintf(os.Stderr, "%s=%s: want poll or goroutine\n", echoLinesEnv, how)
		return 2
	}
	defer lines.stop()
	w := newResultWriter(os.Stdout)
	for {
		ln, _ := lines.next(ctx)
		if ln.err != nil {
			return 0
		}
		if _, ok := profiles.EvalRequest(ln.text); !ok {
			fmt.Fprintf(os.Stderr, "not an eval request: %q\n", ln.text)
			return 2
		}
		if err := w.write(&res); err != nil {
			return 3
		}
		lines.ended() // as eval asks before it settles the session
	}
}

// nativeEchoLoop is nativeLineLoop without the cell: python3.11 reading a
// line and writing a fixed answer, flushed.
const nativeEchoLoop = `import sys
ans = '{"output": ""}\n'
for line in sys.stdin:
    sys.stdout.write(ans)
    sys.stdout.flush()
`

// nodeEchoLoop is bench.mjs's serve loop (internal/benchreport/pyodide)
// without Pyodide: node's readline, JSON.parse, and a fixed answer.
const nodeEchoLoop = `const lines = require("node:readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  JSON.parse(line);
  process.stdout.write(JSON.stringify({ output: "", status: "complete" }) + "\n");
});
`

// BenchmarkEvalLineFloor is the floor under BenchmarkEvalLine and its
// native and Pyodide counterparts (issue 15, an eval line round trip ≤ 50
// µs): the same harness (linepipe.Start) driving processes that answer the
// same request line without running a cell.
//
//	echo=cat                    the pipes' round trip itself
//	harness=polled/echo=cat     the same through os/exec's polled pipes, the
//	                            harness the line benchmarks used before
//	echo=eval-host              eval's own line path without the session:
//	                            stdin read as eval reads it, the line decoded,
//	                            a trivial cell's answer encoded and written
//	echo=eval-host-goroutine    the same with stdin read as eval did before
//	                            (a reading goroutine, a channel)
//	echo=python3.11             nativeLineLoop's floor: a Python line loop
//	echo=node                   bench.mjs's floor: node's readline loop
//
// cpu-ns/op is the child's CPU time per round trip.
func BenchmarkEvalLineFloor(b *testing.B) {
	line := []byte(`{"cells":[{"language":"py","code":"x = 1"}]}` + "\n")
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	selfCmd := func(how string) *exec.Cmd {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), echoLinesEnv+"="+how)
		return cmd
	}
	type floor struct {
		name  string
		start func(*exec.Cmd) (*linepipe.Process, error)
		cmd   func() *exec.Cmd // nil when its program is missing
	}
	lookPath := func(prog string, args ...string) func() *exec.Cmd {
		if _, err := exec.LookPath(prog); err != nil {
			return nil
		}
		return func() *exec.Cmd { return exec.Command(prog, args...) }
	}
	floors := []floor{
		{"echo=cat", linepipe.Start, lookPath("cat")},
		{"harness=polled/echo=cat", linepipe.StartPolled, lookPath("cat")},
		{"echo=eval-host", linepipe.Start, func() *exec.Cmd { return selfCmd("poll") }},
		{"echo=eval-host-goroutine", linepipe.Start, func() *exec.Cmd { return selfCmd("goroutine") }},
		{"echo=python3.11", linepipe.Start, lookPath("/usr/bin/python3.11", "-S", "-c", nativeEchoLoop)},
		{"echo=node", linepipe.Start, lookPath("node", "-e", nodeEchoLoop)},
	}
	for _, f := range floors {
		b.Run(f.name, func(b *testing.B) {
			if f.cmd == nil {
				b.Skip("its program is not installed")
			}
			p := startLineCmd(b, f.start, f.cmd())
			for range 100 { // warm
				if ans := p.roundTrip(b, line); len(ans) < 2 || ans[0] != '{' {
					b.Fatalf("unexpected answer %q", ans)
				}
			}
			b.ResetTimer()
			c0, _ := p.cpu()
			for b.Loop() {
				p.roundTrip(b, line)
			}
			if c1, ok := p.cpu(); ok {
				reportNative(b, nativeTimes{}, c1-c0)
			}
		})
	}
}
