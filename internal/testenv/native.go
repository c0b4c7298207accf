package testenv

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NativePython times code in Debian's python3.11 as the Python benchmarks
// time a cell (setup run once, then code compiled and run n times in one
// process) and returns the wall and the CPU time per run, for the ratios
// in docs/benchmarks.md: the medians of nativeProcesses such processes.
// One process now and then runs a tenth slower than the others (fib(27):
// 17.7 ms against 15.6 in one of 12 processes on an idle machine), and a
// ratio to a single process's figure would carry that into the verdict.
// Both are 0 when python3.11 is missing.
func NativePython(tb testing.TB, setup, code string, n int) (wall, cpu time.Duration) {
	tb.Helper()
	py, err := exec.LookPath("/usr/bin/python3.11")
	if err != nil {
		return 0, 0
	}
	walls := make([]time.Duration, nativeProcesses)
	cpus := make([]time.Duration, nativeProcesses)
	for i := range nativeProcesses {
		walls[i], cpus[i] = nativeProcess(tb, py, setup, code, n)
	}
	return median(walls), median(cpus)
}

// nativeProcesses is how many processes NativePython takes the median of.
const nativeProcesses = 5

// median is the middle of ds (an odd count), which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// nativeProcess is one python3.11 process's wall and CPU time per run.
func nativeProcess(tb testing.TB, py, setup, code string, n int) (wall, cpu time.Duration) {
	tb.Helper()
	prog := `import time, sys
ns = {}
exec(compile(sys.argv[1], "<setup>", "exec"), ns)
src = sys.argv[2]
n = int(sys.argv[3])
t, c = time.perf_counter(), time.process_time()
for _ in range(n):
    exec(compile(src, "<cell>", "exec"), ns)
print((time.perf_counter() - t) / n * 1e9, (time.process_time() - c) / n * 1e9)
`
	out, err := exec.Command(py, "-S", "-c", prog, setup, code, strconv.Itoa(n)).Output()
	if err != nil {
		tb.Fatalf("native python3.11: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		tb.Fatalf("native python3.11 printed %q", out)
	}
	w, err1 := strconv.ParseFloat(f[0], 64)
	c, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("native python3.11 printed %q", out)
	}
	return time.Duration(w), time.Duration(c)
}
