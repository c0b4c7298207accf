package pyodide_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
	"github.com/wasmeval/wasmeval/internal/benchreport/kernels"
	"github.com/wasmeval/wasmeval/internal/benchreport/linepipe"
	"github.com/wasmeval/wasmeval/internal/benchreport/pyodide"
	"github.com/wasmeval/wasmeval/internal/testenv"
)

// RequireEnv turns a missing node or Pyodide from a skip into a failure:
// make bench sets it, so its table cannot lose the Pyodide column quietly.
const RequireEnv = "WASMEVAL_REQUIRE_PYODIDE"

// The cells, as runtimes/python's benchmarks run them.
const (
	fibDef = "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n"
	loop3M = "s = 0\nfor i in range(3_000_000):\n    s += i\n"
)

// setup finds node and the Pyodide package: the skip (or, with RequireEnv
// set, the failure) says how to get them.
func setup(b *testing.B) (node, dir string) {
	b.Helper()
	missing := func(format string, args ...any) {
		b.Helper()
		msg := fmt.Sprintf(format, args...)
		if v := os.Getenv(RequireEnv); v != "" && v != "0" {
			b.Fatalf("%s, and %s is set", msg, RequireEnv)
		}
		b.Skipf("skipped: %s (set %s=1 to make this a failure)", msg, RequireEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on PATH (make node installs Debian's)")
	}
	if dir = pyodideDir(); dir == "" {
		missing("Pyodide %s is not installed in %s (run make pyodide)", pyodide.Version, installDir())
	}
	return node, dir
}

// installDir is where make pyodide puts the npm package.
func installDir() string {
	return filepath.Join(testenv.BuildCache("pyodide-"+pyodide.Version), "node_modules", "pyodide")
}

// pyodideDir is installDir when Pyodide is there, else "".
func pyodideDir() string {
	dir := installDir()
	if _, err := os.Stat(filepath.Join(dir, "pyodide.mjs")); err != nil {
		return ""
	}
	return dir
}

func script(b *testing.B) string {
	p, err := filepath.Abs("bench.mjs")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// server is a `node bench.mjs DIR serve` process with Pyodide loaded,
// shared by the benchmarks below (loading Pyodide takes seconds, and a
// b.N-style benchmark function runs several times).
type server struct {
	cmd    *exec.Cmd
	p      *linepipe.Process // the harness cmd/wasmeval's line benchmarks use too
	stderr bytes.Buffer
	loadNS float64
}

var (
	srvOnce sync.Once
	srv     *server
	srvErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		srv.p.Close(30 * time.Second)
	}
	os.Exit(code)
}

func shared(b *testing.B) *server {
	b.Helper()
	node, dir := setup(b)
	srvOnce.Do(func() { srv, srvErr = start(node, script(b), dir) })
	if srvErr != nil {
		b.Fatal(srvErr)
	}
	return srv
}

func start(node, script, dir string) (*server, error) {
	s := &server{cmd: exec.Command(node, script, dir, "serve")}
	s.cmd.Stderr = &s.stderr
	var err error
	if s.p, err = linepipe.Start(s.cmd); err != nil {
		return nil, err
	}
	line, err := s.p.ReadLine()
	var ready struct {
		Ready  bool
		LoadNS float64 `json:"load_ns"`
	}
	if err != nil || json.Unmarshal(line, &ready) != nil || !ready.Ready {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		return nil, fmt.Errorf("node bench.mjs serve did not start: %v %s; stderr: %s", err, line, s.stderr.String())
	}
	s.loadNS = ready.LoadNS
	return s, nil
}

// answer is bench.mjs's answer line.
type answer struct {
	Output, Status, Error string
	NS                    float64
	CPUNS                 float64 `json:"cpu_ns"`
}

func (s *server) roundTrip(b *testing.B, line []byte) []byte {
	ans, err := s.p.RoundTrip(line)
	if err != nil {
		b.Fatalf("node: %v; stderr: %s", err, s.stderr.String())
	}
	return ans
}

// repeat runs code n times in Pyodide, back to back, and returns the wall
// and the CPU time node measured.
func (s *server) repeat(b *testing.B, code string, n int) (wall, cpu time.Duration) {
	req, _ := json.Marshal(map[string]any{"code": code, "n": n})
	var a answer
	if err := json.Unmarshal(s.roundTrip(b, append(req, '\n')), &a); err != nil || a.Error != "" {
		b.Fatalf("Pyodide running %q: %v %s", code, err, a.Error)
	}
	return time.Duration(a.NS), time.Duration(a.CPUNS)
}

// report reports cpu-ns/op (cpu over the b.N ops), and against native
// native-ns/op, x-native (of per, the wall time per op),
// native-cpu-ns/op and x-native-cpu, as the wasmeval benchmarks do.
func report(b *testing.B, per float64, cpu time.Duration, nat nativeTimes) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	if nat.wall <= 0 {
		return
	}
	b.ReportMetric(float64(nat.wall.Nanoseconds()), "native-ns/op")
	b.ReportMetric(per/float64(nat.wall.Nanoseconds()), "x-native")
	if cpu > 0 && nat.cpu > 0 {
		b.ReportMetric(float64(nat.cpu.Nanoseconds()), "native-cpu-ns/op")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(nat.cpu.Nanoseconds()), "x-native-cpu")
	}
}

// nativeTimes are native's wall and CPU time per op.
type nativeTimes struct{ wall, cpu time.Duration }

// BenchmarkPyodideEvalLine is a trivial cell's round trip to Pyodide on
// node through bench.mjs's line protocol: cmd/wasmeval's BenchmarkEvalLine
// against Pyodide, a request line written to node's stdin and its answer
// (the cell's captured output, as JSON) read back.
func BenchmarkPyodideEvalLine(b *testing.B) {
	s := shared(b)
	line := []byte(`{"cells":[{"language":"py","code":"x = 1"}]}` + "\n")
	for range 100 { // warm
		var a answer
		if ans := s.roundTrip(b, line); json.Unmarshal(ans, &a) != nil || a.Status != "complete" {
			b.Fatalf("unexpected answer: %s", ans)
		}
	}
	b.ResetTimer()
	c0, _ := cputime.Process(s.cmd.Process.Pid)
	for b.Loop() {
		s.roundTrip(b, line)
	}
	if c1, ok := cputime.Process(s.cmd.Process.Pid); ok {
		report(b, 0, c1-c0, nativeTimes{})
	}
}

// benchInProcess times code run b.N times by pyodide.runPython inside node
// (the time node measured; one request carries all b.N), with native
// python3.11 doing the same in the same run.
func benchInProcess(b *testing.B, setupCode, code string, nativeN int) {
	s := shared(b)
	if setupCode != "" {
		s.repeat(b, setupCode, 1)
	}
	s.repeat(b, code, 1) // warm
	nat, ok := nativeByCell[code]
	if !ok { // measured once: a b.N-style benchmark function runs several times
		nat = native(b, setupCode, code, nativeN)
		nativeByCell[code] = nat
	}
	b.ResetTimer()
	d, cpu := s.repeat(b, code, b.N)
	// ns/op is the time node measured, without the pipe's one round trip
	// (the timer keeps running, so that b.N grows as it should).
	per := float64(d.Nanoseconds()) / float64(b.N)
	b.ReportMetric(per, "ns/op")
	report(b, per, cpu, nat)
}

// nativeByCell holds native's figures by cell.
var nativeByCell = map[string]nativeTimes{}

// BenchmarkPyodideTrivialCell: pyodide.runPython("x = 1") in a warm
// Pyodide, in process (runtimes/python's BenchmarkTrivialCell in Pyodide).
func BenchmarkPyodideTrivialCell(b *testing.B) { benchInProcess(b, "", "x = 1", 10000) }

// BenchmarkPyodideFib27: fib(27) in Pyodide against native python3.11
// (runtimes/python's BenchmarkFib27).
func BenchmarkPyodideFib27(b *testing.B) { benchInProcess(b, fibDef, "fib(27)", 3) }

// BenchmarkPyodideLoop3M: the 3M-iteration loop in Pyodide against native
// python3.11 (runtimes/python's BenchmarkLoop3M).
func BenchmarkPyodideLoop3M(b *testing.B) { benchInProcess(b, "", loop3M, 3) }

// BenchmarkPyodideKernel: the typical-code kernels
// (internal/benchreport/kernels) in Pyodide against native python3.11
// (runtimes/python's BenchmarkKernel).
func BenchmarkPyodideKernel(b *testing.B) {
	for _, k := range kernels.All {
		b.Run("name="+k.Name, func(b *testing.B) { benchInProcess(b, kernels.Setup, k.Code, 3) })
	}
}

// BenchmarkPyodideProcessPrint1 is a whole node process that loads Pyodide
// and runs print(1) (cmd/wasmeval's BenchmarkProcessEvalPrint1 in
// Pyodide), against python3.11 -c 'print(1)'. load-ns/op is the part
// loadPyodide took inside node; node-ns/op is a node process that does
// nothing (node -e ""), the floor under Pyodide's.
func BenchmarkPyodideProcessPrint1(b *testing.B) {
	node, dir := setup(b)
	scr := script(b)
	var load float64
	var cpu time.Duration
	runOnce := func() {
		cmd := exec.Command(node, scr, dir, "once", "print(1)")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("node bench.mjs once: %v: %s", err, out)
		}
		first, last, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		var r struct {
			LoadNS float64 `json:"load_ns"`
		}
		if first != "1" || json.Unmarshal([]byte(last), &r) != nil {
			b.Fatalf("unexpected output: %q", out)
		}
		load += r.LoadNS
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	runOnce() // warm the file cache
	nat := processTime(b, 10, "/usr/bin/python3.11", "-c", "print(1)")
	nodeStart := processTime(b, 10, node, "-e", "")
	load, cpu = 0, 0
	b.ResetTimer()
	for b.Loop() {
		runOnce()
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(load/float64(b.N), "load-ns/op")
	b.ReportMetric(float64(nodeStart.wall.Nanoseconds()), "node-ns/op")
	report(b, per, cpu, nat)
}

// processTime is the mean wall and CPU time of n runs of a process (0
// when the program is missing).
func processTime(b *testing.B, n int, prog string, args ...string) nativeTimes {
	if _, err := exec.LookPath(prog); err != nil {
		return nativeTimes{}
	}
	var cpu time.Duration
	t := time.Now()
	for range n {
		cmd := exec.Command(prog, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", prog, err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return nativeTimes{time.Since(t) / time.Duration(n), cpu / time.Duration(n)}
}

// native times code in Debian's python3.11 (testenv.NativePython).
func native(b *testing.B, setup, code string, n int) nativeTimes {
	wall, cpu := testenv.NativePython(b, setup, code, n)
	return nativeTimes{wall, cpu}
}
