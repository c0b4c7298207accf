package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/benchreport/linepipe"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/wasm"
)

// benchBinary builds wasmeval for a benchmark, into its temporary folder.
func benchBinary(b *testing.B) string {
	b.Helper()
	testenv.RequirePython(b)
	bin := filepath.Join(b.TempDir(), "wasmeval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkProcessEvalPrint1 runs a whole `wasmeval eval` process for one
// `print(1)` cell with warm caches (the compiled module and the template,
// from a first run), on each engine (issue 15's target ≤ 100 ms), against
// a native `python3.11 -c 'print(1)'` process in the same run.
// internal/benchreport/pyodide's BenchmarkPyodideProcessPrint1 is the same
// process in Pyodide on node.
func BenchmarkProcessEvalPrint1(b *testing.B) {
	bin := benchBinary(b)
	for _, engine := range wasm.Engines() {
		b.Run("engine="+engine, func(b *testing.B) {
			cwd := b.TempDir()
			req := `{"cells":[{"language":"py","code":"print(1)"}]}` + "\n"
			var cpu time.Duration // the processes' CPU time
			runOnce := func() {
				cmd := exec.Command(bin, "eval", "--engine", engine, "--cwd", cwd)
				cmd.Stdin = strings.NewReader(req)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("wasmeval eval --engine %s: %v: %s", engine, err, out)
				}
				if !strings.Contains(string(out), `"output":"1\n"`) {
					b.Fatalf("unexpected result: %s", out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			runOnce() // warm the caches

			var native nativeTimes
			if py, err := exec.LookPath("/usr/bin/python3.11"); err == nil {
				const n = 10
				t := time.Now()
				for range n {
					cmd := exec.Command(py, "-c", "print(1)")
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
					native.cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()) / n
				}
				native.wall = time.Since(t) / n
			}
			cpu = 0
			b.ResetTimer()
			for b.Loop() {
				runOnce()
			}
			reportNative(b, native, cpu)
		})
	}
}

// nativeTimes are the native counterpart's wall and CPU time per op.
type nativeTimes struct{ wall, cpu time.Duration }

// reportNative reports native-ns/op and the ratio x-native that
// internal/benchreport shows next to the benchmark's time, and, where cpu
// (the CPU time of the process that evaluated the cells, over the b.N
// ops) is known, cpu-ns/op, native-cpu-ns/op and x-native-cpu: on a
// machine shared with other work the wall times stretch with the load,
// the CPU times much less.
func reportNative(b *testing.B, native nativeTimes, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	if native.wall <= 0 {
		return
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64(native.wall.Nanoseconds()), "native-ns/op")
	b.ReportMetric(per/float64(native.wall.Nanoseconds()), "x-native")
	if cpu > 0 && native.cpu > 0 {
		b.ReportMetric(float64(native.cpu.Nanoseconds()), "native-cpu-ns/op")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(native.cpu.Nanoseconds()), "x-native-cpu")
	}
}

// lineProcess is a process that answers one JSON line on stdin with one
// on stdout: `wasmeval eval`, or the native loop below, driven by the
// harness all the line benchmarks share (internal/benchreport/linepipe).
type lineProcess struct {
	*linepipe.Process
	stderr *lockedBuffer
}

func startLineProcess(b *testing.B, name string, args ...string) *lineProcess {
	b.Helper()
	return startLineCmd(b, linepipe.Start, exec.Command(name, args...))
}

// startLineCmd starts cmd with start (linepipe.Start, or StartPolled for
// the floor benchmark's comparison).
func startLineCmd(b *testing.B, start func(*exec.Cmd) (*linepipe.Process, error), cmd *exec.Cmd) *lineProcess {
	b.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	p, err := start(cmd)
	if err != nil {
		b.Fatalf("%s: %v", cmd.Path, err)
	}
	b.Cleanup(func() { p.Close(30 * time.Second) })
	return &lineProcess{Process: p, stderr: stderr}
}

// cpu is the CPU time process p has used so far; ok false when it
// cannot be read.
func (p *lineProcess) cpu() (time.Duration, bool) { return p.CPU() }

// roundTrip writes line (with its newline) and returns the answer line.
func (p *lineProcess) roundTrip(b *testing.B, line []byte) []byte {
	ans, err := p.RoundTrip(line)
	if err != nil {
		b.Fatalf("%v (stderr: %s)", err, p.stderr.String())
	}
	return ans
}

// nativeLineLoop is the native counterpart of an eval line: python3.11
// reading a JSON line, running its code in one namespace with stdout
// captured, and writing the output as a JSON line, flushed.
const nativeLineLoop = `import sys, json, io, contextlib
ns = {}
for line in sys.stdin:
    req = json.loads(line)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(req["cells"][0]["code"], "<cell>", "exec"), ns)
    sys.stdout.write(json.dumps({"output": buf.getvalue()}) + "\n")
    sys.stdout.flush()
`

// BenchmarkEvalLine is a trivial cell's round trip through `wasmeval eval`'s
// line protocol in a warm session, with the default settings (checkpoints
// on), on each engine (issue 15's target ≤ 50 µs): one request line
// written to the process's stdin, its result line read back. native-ns/op
// is the same round trip to python3.11 running nativeLineLoop;
// internal/benchreport/pyodide's BenchmarkPyodideEvalLine is the same to
// Pyodide on node. cpu-ns/op is the wasmeval process's CPU time per round
// trip (all its threads), native-cpu-ns/op python3.11's.
func BenchmarkEvalLine(b *testing.B) {
	bin := benchBinary(b)
	line := []byte(`{"cells":[{"language":"py","code":"x = 1"}]}` + "\n")
	for _, engine := range wasm.Engines() {
		b.Run("engine="+engine, func(b *testing.B) {
			var native nativeTimes
			if py, err := exec.LookPath("/usr/bin/python3.11"); err == nil {
				p := startLineProcess(b, py, "-S", "-c", nativeLineLoop)
				for range 100 { // warm
					p.roundTrip(b, line)
				}
				const n = 2000
				c0, _ := p.cpu()
				t := time.Now()
				for range n {
					p.roundTrip(b, line)
				}
				native.wall = time.Since(t) / n
				if c1, ok := p.cpu(); ok {
					native.cpu = (c1 - c0) / n
				}
			}
			p := startLineProcess(b, bin, "eval", "--engine", engine, "--cwd", b.TempDir())
			for range 100 { // warm the session
				ans := p.roundTrip(b, line)
				var res struct {
					Details struct {
						Cells []struct{ Status string }
					}
				}
				if err := json.Unmarshal(ans, &res); err != nil || len(res.Details.Cells) != 1 || res.Details.Cells[0].Status != "complete" {
					b.Fatalf("unexpected result (%v): %s", err, ans)
				}
			}
			b.ResetTimer()
			c0, _ := p.cpu()
			for b.Loop() {
				p.roundTrip(b, line)
			}
			c1, ok := p.cpu()
			if !ok {
				c1 = c0
			}
			reportNative(b, native, c1-c0)
		})
	}
}
