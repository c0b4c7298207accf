package testenv

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NativePython times code in Debian's python3.11 as the Python benchmarks
// time a cell (setup run once, then code compiled and run n times in one
// process) and returns the wall and the CPU time per run, for the ratios
// in docs/benchmarks.md. Both are 0 when python3.11 is missing.
func NativePython(tb testing.TB, setup, code string, n int) (wall, cpu time.Duration) {
	tb.Helper()
	py, err := exec.LookPath("/usr/bin/python3.11")
	if err != nil {
		return 0, 0
	}
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
