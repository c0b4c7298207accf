package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is `go test -bench` output as make bench writes it to bench.out.
const sample = `loadavg-before: 3.10 2.00 1.50 4/500 123
node: v20.20.2
goos: linux
goarch: amd64
pkg: github.com/wasmeval/wasmeval/cmd/wasmeval
cpu: AMD EPYC
BenchmarkProcessEvalPrint1/engine=wazero-2         	       5	 206000000 ns/op	  42000000 native-ns/op	         4.905 x-native
BenchmarkProcessEvalPrint1/engine=wasmtime-2       	       5	  90000000 ns/op	  45000000 native-ns/op	         2.000 x-native
BenchmarkEvalLine/engine=wazero-2                  	    3000	    440000 ns/op	     40000 native-ns/op	        11.00 x-native
BenchmarkEvalLine/engine=wasmtime-2                	    3000	     45000 ns/op	     41000 native-ns/op	         1.098 x-native
ok  	github.com/wasmeval/wasmeval/cmd/wasmeval	140.049s
pkg: github.com/wasmeval/wasmeval/internal/benchreport/pyodide
BenchmarkPyodideEvalLine-2        	    3000	    320000 ns/op
BenchmarkPyodideTrivialCell-2     	    3000	    300000 ns/op	      3800 native-ns/op	        78.95 x-native
BenchmarkPyodideFib27-2           	       3	  60000000 ns/op	  28000000 native-ns/op	         2.100 x-native
BenchmarkPyodideLoop3M-2          	       1	 600000000 ns/op	 190000000 native-ns/op	         3.100 x-native
BenchmarkPyodideProcessPrint1-2   	       1	2500000000 ns/op	2300000000 load-ns/op	  42000000 native-ns/op	  40000000 node-ns/op	        59.52 x-native
pkg: github.com/wasmeval/wasmeval/runtimes/python
BenchmarkTrivialCell/engine=wazero-2         	   10000	     91000 ns/op	      3800 native-ns/op	        23.95 x-native	     265 B/op	      13 allocs/op
BenchmarkTrivialCell/engine=wasmtime-2       	   10000	     18000 ns/op	      3800 native-ns/op	         4.737 x-native	     824 B/op	      26 allocs/op
BenchmarkTrivialCellCheckpoints/engine=wazero-2         	    5000	    304000 ns/op	      3800 native-ns/op	        80.00 x-native
BenchmarkTrivialCellCheckpoints/engine=wasmtime-2       	    5000	     25000 ns/op	      3800 native-ns/op	         6.579 x-native
BenchmarkFib27/engine=wazero-2                          	       3	 106000000 ns/op	  28000000 native-ns/op	         3.800 x-native
BenchmarkFib27/engine=wasmtime-2                        	       3	  50000000 ns/op	  28000000 native-ns/op	         1.800 x-native
BenchmarkLoop3M/engine=wazero-2                         	       1	 780000000 ns/op	 190000000 native-ns/op	         4.100 x-native
BenchmarkLoop3M/engine=wasmtime-2                       	       1	 300000000 ns/op	 190000000 native-ns/op	         1.600 x-native
BenchmarkFuelOverhead/fib25/engine=wazero-2             	       1	5016180943 ns/op	        11.80 fuel-overhead-%
BenchmarkNewSession/engine=wazero-2                     	     400	   3100000 ns/op	  12000000 native-ns/op	         0.2583 x-native	        16.00 snapshot-MiB
BenchmarkNewSession/engine=wasmtime-2                   	     100	  12500000 ns/op	  12000000 native-ns/op	         1.042 x-native	        16.00 snapshot-MiB
BenchmarkIdleSessionsRSS/engine=wazero-2                	       1	9000000000 ns/op	         4.900 MiB-RSS/session
BenchmarkIdleSessionsRSS/engine=wasmtime-2              	       1	8000000000 ns/op	         3.200 MiB-RSS/session
BenchmarkFork/light/engine=wasmtime-2                   	     500	   2100000 ns/op
--- FAIL: BenchmarkFork/light
FAIL	github.com/wasmeval/wasmeval/runtimes/python	158.657s
loadavg-after: 9.10 8.00 7.50 4/500 123
`

// wantLines fails t for each of lines that out lacks as a whole line.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, want := range lines {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the report lacks the line\n%s\nreport:\n%s", want, out)
		}
	}
}

func report(t *testing.T, in string) string {
	t.Helper()
	run, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	write(&b, run, nil)
	return b.String()
}

// TestHeadlineTable: issue 15's table has a row per figure with a column
// per engine, Pyodide, native, the target and whether each engine met it,
// and the ratios table says who is ahead of Pyodide.
func TestHeadlineTable(t *testing.T) {
	defer func(n int) { cpus = n }(cpus)
	cpus = 2
	out := report(t, sample)
	wantLines(t, out,
		"| figure | wasmeval wazero | wasmeval wasmtime | Pyodide 0.29.5 | native CPython | target | met |",
		"| trivial cell, warm session, eval line round trip | 440 µs | 45 µs | 320 µs | 40 µs (a python3.11 line loop) | ≤ 50 µs | wazero no, wasmtime yes |",
		"| trivial cell inside the library, checkpoints off / on | 91 µs / 304 µs | 18 µs / 25 µs | 300 µs (runPython in node) | 3.8 µs | ≤ 20 / ≤ 30 µs | wazero no, wasmtime yes |",
		"| fib(27) / 3M-iteration loop vs native, fuel on | 3.80x / 4.10x | 1.80x / 1.60x | 2.10x / 3.10x | 1x (28 ms / 190 ms) | ≤ 2.0x / ≤ 2.0x | wazero no, wasmtime yes |",
		"| whole-process `eval` of print(1), warm caches | 206 ms | 90 ms | 2.5 s (loadPyodide 2.3 s; a bare node process 40 ms) | 42 ms | ≤ 100 ms | wazero no, wasmtime yes |",
		"| trivial cell, warm session, eval line round trip | 1.38x | 0.14x | 11.00x | 1.10x | 8.00x | wazero no, wasmtime yes |",
		"| fib(27) / 3M-iteration loop vs native, fuel on | 1.77x / 1.30x | 0.83x / 0.50x | 3.80x / 4.10x | 1.80x / 1.60x | 2.10x / 3.10x | wazero no, wasmtime yes |",
		"- loadavg-before: 3.10 2.00 1.50 4/500 123",
		"- loadavg-after: 9.10 8.00 7.50 4/500 123",
		"**Taken with other work running:** the load average reached 9.1 on this",
		"**Failed in this run** (their figures are missing below): BenchmarkFork/light, package runtimes/python.",
		"| fuel metering overhead, fib(25) | ≤ 15.0 % | 11.8 % | not measured | wazero yes, wasmtime not measured |",
		"| runtimes/python | BenchmarkTrivialCell/engine=wasmtime-2 | 10000 | 18 µs | 3.8 µs | 4.74x | 824 B/op, 26 allocs/op |",
		"| internal/benchreport/pyodide | BenchmarkPyodideProcessPrint1-2 | 1 | 2.5 s | 42 ms | 59.52x | 2.3 s load, 40 ms node |",
	)
}

// TestTargetsOnEachEngine: session start, fork and memory per session
// are shown for each engine side by side, each judged against the
// target; a figure of one engine that did not run says so.
func TestTargetsOnEachEngine(t *testing.T) {
	out := report(t, sample)
	wantLines(t, out,
		"| what | target | wazero | wasmtime | met |",
		"| new Python session from the snapshot | ≤ 10 ms | 3.1 ms | 12.5 ms | wazero yes, wasmtime no |",
		"| fork a light Python session | ≤ 5 ms | not measured | 2.1 ms | wazero not measured, wasmtime yes |",
		"| resident memory per idle session (goal 5) | ≤ 25.0 MiB | 4.9 MiB | 3.2 MiB | wazero yes, wasmtime yes |",
		"| reset a Python session | ≤ 5 ms | not measured | not measured | wazero not measured, wasmtime not measured |",
		"| HTTP load: 100 sessions × 100 trivial cells | ≥ 2000 cells/s | not measured |  |",
	)
}

// TestHeadlineNotMeasured: a figure whose benchmark did not run says so
// instead of leaving a blank or a zero.
func TestHeadlineNotMeasured(t *testing.T) {
	var kept []string
	for _, l := range strings.Split(sample, "\n") {
		if !strings.Contains(l, "Pyodide") && !strings.Contains(l, "engine=wasmtime") {
			kept = append(kept, l)
		}
	}
	out := report(t, strings.Join(kept, "\n"))
	if !strings.Contains(out, "| trivial cell, warm session, eval line round trip | 440 µs | not measured | not measured | 40 µs (a python3.11 line loop) | ≤ 50 µs | wazero no, wasmtime not measured |\n") {
		t.Errorf("missing figures are not marked:\n%s", out)
	}
	if !strings.Contains(out, "| fib(27) / 3M-iteration loop vs native, fuel on | not measured | not measured | 3.80x / 4.10x | not measured | not measured | wazero not measured, wasmtime not measured |\n") {
		t.Errorf("missing ratios are not marked:\n%s", out)
	}
}

// TestHandWrittenSectionsKept: writing the report over a file keeps its
// hand-written sections, once each, after the generated part (issue 13's
// figures, measured by hand, were lost on every make bench).
func TestHandWrittenSectionsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	hand := "<!-- hand-written -->\n## Recording and replay (by hand)\n\nMeasured by hand: +2.6%.\n<!-- /hand-written -->\n"
	hand2 := "<!-- hand-written -->\nAnother note.\n<!-- /hand-written -->\n"
	old := "# Benchmarks\n\nold generated text\n\n" + hand + "\n| old | table |\n\n" + hand2
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second run keeps them once
		if err := writeFile(path, run); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if strings.Count(s, hand) != 1 || strings.Count(s, hand2) != 1 || !strings.HasSuffix(s, hand+"\n"+hand2) {
		t.Errorf("hand-written sections not kept once each at the end:\n%s", s)
	}
	if strings.Contains(s, "old generated text") || !strings.Contains(s, "## Issue 15's figures") {
		t.Errorf("the generated part was not replaced:\n%s", s)
	}
}

// TestHandWrittenSectionUnclosed: a section left open is an error that
// says how to close it, and the file is left as it was.
func TestHandWrittenSectionUnclosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	old := "# Benchmarks\n<!-- hand-written -->\nnotes\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	run, _ := parse(strings.NewReader(sample))
	err := writeFile(path, run)
	if err == nil || !strings.Contains(err.Error(), "<!-- /hand-written -->") {
		t.Fatalf("err = %v, want one naming the closing marker", err)
	}
	if got, _ := os.ReadFile(path); string(got) != old {
		t.Errorf("the file changed: %q", got)
	}
	if _, err := handSections([]byte("<!-- /hand-written -->\n")); err == nil {
		t.Error("a closing marker without an opening one is not an error")
	}
}

// TestIdleRunNotFlagged: a run whose load stayed within the cores is not
// said to be taken with other work running.
func TestIdleRunNotFlagged(t *testing.T) {
	defer func(n int) { cpus = n }(cpus)
	cpus = 16
	if out := report(t, sample); strings.Contains(out, "other work running") {
		t.Errorf("a load of 9.1 on 16 cores is flagged:\n%s", out)
	}
}

// TestHeadlineCPUTable: the CPU-time table is built from the benchmarks'
// cpu-ns/op, native-cpu-ns/op and x-native-cpu, after the wall-time one.
func TestHeadlineCPUTable(t *testing.T) {
	out := report(t, `pkg: github.com/wasmeval/wasmeval/cmd/wasmeval
BenchmarkEvalLine/engine=wazero-2 	 3000	 440000 ns/op	 30000 cpu-ns/op	 40000 native-ns/op	 11.00 x-native	 10000 native-cpu-ns/op	 3.000 x-native-cpu
pkg: github.com/wasmeval/wasmeval/internal/benchreport/pyodide
BenchmarkPyodideEvalLine-2 	 3000	 320000 ns/op	 60000 cpu-ns/op
`)
	_, cpuPart, ok := strings.Cut(out, "### CPU time")
	if !ok || !strings.Contains(out, "### Wall time") {
		t.Fatalf("no wall and CPU sections:\n%s", out)
	}
	for _, want := range []string{
		"| trivial cell, warm session, eval line round trip | 30 µs | not measured | 60 µs | 10 µs (a python3.11 line loop) | ≤ 50 µs | wazero yes, wasmtime not measured |",
		"| trivial cell, warm session, eval line round trip | 0.50x | not measured | 3.00x | not measured | 6.00x | wazero yes, wasmtime not measured |",
	} {
		if !strings.Contains(cpuPart, want+"\n") {
			t.Errorf("the CPU section lacks\n%s\n%s", want, cpuPart)
		}
	}
	if !strings.Contains(out, "| trivial cell, warm session, eval line round trip | 440 µs | not measured | 320 µs | 40 µs (a python3.11 line loop) | ≤ 50 µs | wazero no, wasmtime not measured |\n") {
		t.Errorf("the wall section changed:\n%s", out)
	}
}

// TestMedianOfProcesses: a benchmark that several processes ran (make
// bench runs the headline ones again) is reported, in the place of its
// first row, with each figure the median of that figure over the
// processes: the time, the native time and the ratio each by its own
// median, not all three from the process with the median time (whose
// native figure can be the outlier); the table says so. A slow process on
// one side of a comparison leaves the headline alone.
func TestMedianOfProcesses(t *testing.T) {
	in := sample + `pkg: github.com/wasmeval/wasmeval/runtimes/python
BenchmarkFib27/engine=wasmtime-2                        	       3	  36000000 ns/op	  15000000 native-ns/op	         2.400 x-native
pkg: github.com/wasmeval/wasmeval/internal/benchreport/pyodide
BenchmarkPyodideFib27-2           	       3	  31000000 ns/op	  15500000 native-ns/op	         2.000 x-native
pkg: github.com/wasmeval/wasmeval/runtimes/python
BenchmarkFib27/engine=wasmtime-2                        	       3	  49000000 ns/op	  30000000 native-ns/op	         1.633 x-native
pkg: github.com/wasmeval/wasmeval/internal/benchreport/pyodide
BenchmarkPyodideFib27-2           	       3	  61000000 ns/op	  29000000 native-ns/op	         2.103 x-native
`
	run, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// wasmtime fib: 50, 36, 49 ms; native 28, 15, 30 ms; 1.8, 2.4, 1.633x.
	for _, c := range []struct {
		unit string
		want float64
	}{{"ns/op", 49e6}, {"native-ns/op", 28e6}, {"x-native", 1.8}} {
		if v, _ := run.metric(pkgPython, "BenchmarkFib27/engine=wasmtime", c.unit); v != c.want {
			t.Errorf("fib on wasmtime: %v %s, want the median %v", v, c.unit, c.want)
		}
	}
	// Pyodide: 60, 31, 61 ms; 2.1, 2.0, 2.103x.
	if v, _ := run.metric(pkgPyodide, "BenchmarkPyodideFib27", "ns/op"); v != 60e6 {
		t.Errorf("Pyodide fib: %v ns/op, want the median 60e6", v)
	}
	if v, _ := run.metric(pkgPyodide, "BenchmarkPyodideFib27", "x-native"); v != 2.1 {
		t.Errorf("Pyodide fib: %vx native, want the median 2.1", v)
	}
	// A benchmark one process ran is as it was.
	if v, _ := run.metric(pkgPython, "BenchmarkFib27/engine=wazero", "ns/op"); v != 106e6 {
		t.Errorf("fib on wazero: %v ns/op, want 106e6", v)
	}
	n := 0
	for _, r := range run.rows {
		if r.pkg == pkgPython && r.base() == "BenchmarkFib27/engine=wasmtime" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d rows for fib on wasmtime, want 1", n)
	}
	out := report(t, in)
	if !strings.Contains(out, "| runtimes/python | BenchmarkFib27/engine=wasmtime-2 | 3 (median of 3 processes) | 49 ms | 28 ms | 1.80x |") {
		t.Errorf("the all-figures table does not show the medians of 3 processes:\n%s", out)
	}
	if !strings.Contains(out, "| runtimes/python | BenchmarkFib27/engine=wazero-2 | 3 | ") {
		t.Errorf("a benchmark run once is not shown as it was:\n%s", out)
	}
}

// TestKernelTable: the typical-code table has a row per kernel with each
// engine's, Pyodide's and native's times and wasmtime's ratios, and a
// geometric mean over the kernels measured on both sides; a kernel that
// did not run says so and is left out of the means.
func TestKernelTable(t *testing.T) {
	in := `pkg: github.com/wasmeval/wasmeval/runtimes/python
BenchmarkKernel/name=calls/engine=wazero-2     	      10	 150000000 ns/op	 140000000 cpu-ns/op	  40000000 native-ns/op	         3.750 x-native
BenchmarkKernel/name=calls/engine=wasmtime-2   	      10	  80000000 ns/op	  78000000 cpu-ns/op	  40000000 native-ns/op	         2.000 x-native
BenchmarkKernel/name=add/engine=wasmtime-2     	      10	  36000000 ns/op	  35000000 cpu-ns/op	  18000000 native-ns/op	         2.000 x-native
BenchmarkKernel/name=loop/engine=wasmtime-2    	      10	  36000000 ns/op	  35000000 cpu-ns/op	  18000000 native-ns/op	         8.000 x-native
ok  	github.com/wasmeval/wasmeval/runtimes/python	10s
pkg: github.com/wasmeval/wasmeval/internal/benchreport/pyodide
BenchmarkPyodideKernel/name=calls-2   	      10	 100000000 ns/op	  97500000 cpu-ns/op
BenchmarkPyodideKernel/name=add-2     	      10	  90000000 ns/op	  70000000 cpu-ns/op
ok  	github.com/wasmeval/wasmeval/internal/benchreport/pyodide	10s
`
	out := report(t, in)
	wantLines(t, out,
		"| kernel | wazero | wasmtime | Pyodide | native | wasmtime ÷ Pyodide (CPU) | wasmtime ÷ native |",
		"| a method and a builtin called from a function, 300,000 times | 150 ms | 80 ms | 100 ms | 40 ms | 0.80x (0.80x) | 2.00x |",
		"| a two-line function called 300,000 times | not measured | 36 ms | 90 ms | 18 ms | 0.40x (0.50x) | 2.00x |",
		"| a 500,000-iteration `for` loop in a function | not measured | 36 ms | not measured | 18 ms | not measured (not measured) | 8.00x |",
		"| a generator of 300,000 values summed | not measured | not measured | not measured | not measured | not measured (not measured) | not measured |",
		// sqrt(0.8*0.4) and sqrt(0.8*0.5); the cube root of 2*2*8
		"| geometric mean | | | | | 0.57x (0.63x) | 3.17x |",
	)
}
