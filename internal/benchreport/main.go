// Command benchreport turns `go test -bench` output into docs/benchmarks.md:
// issue 15's headline table (wasmeval on each engine next to Pyodide and
// native CPython, measured in the same run), the other targets, and one
// row per benchmark with its time per op and, where the benchmark measured
// the native counterpart in the same run (native-ns/op), the ratio.
//
//	go run ./internal/benchreport -o docs/benchmarks.md < bench.out
//
// With -o, the sections of the file written by hand, each between a line
// <!-- hand-written --> and a line <!-- /hand-written -->, are kept: they
// follow the generated part, in their order. Without -o the report goes
// to stdout.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/internal/benchreport/pyodide"
)

func main() {
	out := flag.String("o", "", "write the report to this file, keeping its hand-written sections (default: stdout)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "benchreport: unexpected argument %q; usage: benchreport [-o docs/benchmarks.md] < bench.out\n", flag.Arg(0))
		os.Exit(2)
	}
	run, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	if *out == "" {
		write(os.Stdout, run, nil)
		return
	}
	if err := writeFile(*out, run); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

// writeFile writes the report to path, keeping the hand-written sections
// of the file there, through a temporary file so that a failure leaves
// the old report whole.
func writeFile(path string, run *benchRun) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	hand, err := handSections(old)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var buf bytes.Buffer
	write(&buf, run, hand)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".benchmarks-*.md")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// The markers around a hand-written section of docs/benchmarks.md.
const (
	handBegin = "<!-- hand-written -->"
	handEnd   = "<!-- /hand-written -->"
)

// handSections returns the hand-written sections of doc, each with its
// markers. A section left open is an error: writing the report would drop
// what follows its marker.
func handSections(doc []byte) ([]string, error) {
	var secs []string
	var cur *strings.Builder
	for i, line := range strings.SplitAfter(string(doc), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == handBegin && cur != nil:
			return nil, fmt.Errorf("line %d: %s inside a hand-written section; close the one before with %s", i+1, handBegin, handEnd)
		case t == handBegin:
			cur = &strings.Builder{}
			cur.WriteString(line)
		case t == handEnd && cur == nil:
			return nil, fmt.Errorf("line %d: %s without a %s before it", i+1, handEnd, handBegin)
		case t == handEnd:
			cur.WriteString(strings.TrimRight(line, "\n") + "\n")
			secs = append(secs, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("a hand-written section is not closed: end it with a line %s", handEnd)
	}
	return secs, nil
}

type row struct {
	pkg, name string
	runs      string // the iterations the figures are the mean of
	procs     int    // the processes that ran it: each figure is the median of theirs
	metrics   map[string]float64
	order     []string
}

// base is the benchmark's name without the -GOMAXPROCS suffix.
func (r row) base() string { return procSuffix.ReplaceAllString(r.name, "") }

var procSuffix = regexp.MustCompile(`-\d+$`)

// benchRun is what one `go test -bench` run printed.
type benchRun struct {
	rows     []row
	env      []string // goos, goarch, cpu
	notes    []string // lines the Makefile adds: loadavg-before, node, ...
	failures []string // packages or benchmarks that failed
}

// cpus is the machine's, which a load average above means other work
// competed with the benchmarks (make bench runs benchreport where it ran
// them).
var cpus = runtime.NumCPU()

// maxLoad is the largest one-minute load average the run recorded.
func (run *benchRun) maxLoad() float64 {
	m := 0.0
	for _, n := range run.notes {
		if _, rest, ok := strings.Cut(n, "loadavg-"); ok {
			if _, v, ok := strings.Cut(rest, ": "); ok {
				if f := strings.Fields(v); len(f) > 0 {
					if x, err := strconv.ParseFloat(f[0], 64); err == nil && x > m {
						m = x
					}
				}
			}
		}
	}
	return m
}

// noteKeys are the lines the Makefile's bench target adds to the output.
var noteKeys = []string{"loadavg-before: ", "loadavg-after: ", "node: ", "python3: "}

func parse(r io.Reader) (*benchRun, error) {
	run := &benchRun{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "cpu: ") || strings.HasPrefix(line, "goos: ") || strings.HasPrefix(line, "goarch: "):
			if !contains(run.env, line) {
				run.env = append(run.env, line)
			}
		case hasAnyPrefix(line, noteKeys):
			run.notes = append(run.notes, line)
		case strings.HasPrefix(line, "--- FAIL: "):
			run.failures = append(run.failures, strings.Fields(strings.TrimPrefix(line, "--- FAIL: "))[0])
		case strings.HasPrefix(line, "FAIL\t"):
			if f := strings.Fields(line); len(f) >= 2 {
				run.failures = append(run.failures, "package "+strings.TrimPrefix(f[1], "github.com/wasmeval/wasmeval/"))
			}
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			rw := row{pkg: strings.TrimPrefix(pkg, "github.com/wasmeval/wasmeval/"), name: f[0], runs: f[1], metrics: map[string]float64{}}
			for i := 2; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					break
				}
				if _, dup := rw.metrics[f[i+1]]; !dup {
					rw.order = append(rw.order, f[i+1])
				}
				rw.metrics[f[i+1]] = v
			}
			run.rows = append(run.rows, rw)
		}
	}
	run.rows = medians(run.rows)
	return run, sc.Err()
}

// medians merges the rows of a benchmark that several processes ran
// (make bench runs the headline benchmarks again in processes of their
// own) into one whose every figure is the median of that figure over the
// processes (the lower of the two middle ones for an even count): a
// process can be slower as a whole (by 15% on fib, seen), and a process's
// native figure can be an outlier too, so its time and its ratio to
// native are each taken by their own median, on both sides of a
// comparison. The merged row has the place and the iterations of the
// benchmark's first row.
func medians(rows []row) []row {
	type key struct{ pkg, name string }
	runs := map[key][]row{}
	var order []key
	for _, r := range rows {
		k := key{r.pkg, r.base()}
		if _, seen := runs[k]; !seen {
			order = append(order, k)
		}
		runs[k] = append(runs[k], r)
	}
	out := make([]row, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		m := rs[0]
		m.procs = len(rs)
		if len(rs) > 1 {
			m.metrics = map[string]float64{}
			for _, unit := range m.order {
				var vs []float64
				for _, r := range rs {
					if v, ok := r.metrics[unit]; ok {
						vs = append(vs, v)
					}
				}
				sort.Float64s(vs)
				m.metrics[unit] = vs[(len(vs)-1)/2]
			}
		}
		out = append(out, m)
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// metric is one benchmark's figure in the run: pkg and name as printed,
// name without its -GOMAXPROCS suffix.
func (run *benchRun) metric(pkg, name, unit string) (float64, bool) {
	for _, r := range run.rows {
		if r.pkg == pkg && r.base() == name {
			v, ok := r.metrics[unit]
			return v, ok
		}
	}
	return 0, false
}

// target is a figure an issue asks for.
type target struct {
	pkg, name, metric string
	max               float64
	unit, what        string
	// onEngines: the benchmark has a sub-benchmark per engine
	// (name/engine=wazero, name/engine=wasmtime), shown side by side.
	onEngines bool
}

// targets are the figures earlier issues ask for; issue 15's headline
// figures (the trivial cell, with checkpoints, fib, the loop, the whole
// process) have the table of their own, with its stricter targets.
var targets = []target{
	{"runtimes/python", "BenchmarkNewSession", "ns/op", 10e6, "ns", "new Python session from the snapshot", true},
	{"runtimes/python", "BenchmarkReset", "ns/op", 5e6, "ns", "reset a Python session", true},
	{"runtimes/python", "BenchmarkFork/light", "ns/op", 5e6, "ns", "fork a light Python session", true},
	{"runtimes/python", "BenchmarkFork/100k-strings", "ns/op", 5e6, "ns", "fork a Python session holding 100k strings", true},
	{"runtimes/python", "BenchmarkIdleSessionsRSS", "MiB-RSS/session", 25, "MiB", "resident memory per idle session (goal 5)", true},
	{"runtimes/python", "BenchmarkFuelOverhead/fib25", "fuel-overhead-%", 15, "%", "fuel metering overhead, fib(25)", true},
	{"runtimes/python", "BenchmarkFuelOverhead/loop1M", "fuel-overhead-%", 15, "%", "fuel metering overhead, 1M-iteration loop", true},
	{"runtimes/js", "BenchmarkTrivialCell/1_+_1", "ns/op", 20e3, "ns", "JS trivial cell, warm session", false},
	{"server", "BenchmarkLoad", "cells/s", -2000, "cells/s", "HTTP load: 100 sessions × 100 trivial cells", false},
}

// show is x in the target's unit.
func (t target) show(x float64) string {
	switch t.unit {
	case "ns":
		return dur(x)
	case "cells/s":
		return fmt.Sprintf("%.0f cells/s", x)
	}
	return fmt.Sprintf("%.1f %s", x, t.unit)
}

// limit is the target as text: "≤ max", or "≥ -max" for a floor.
func (t target) limit() string {
	if t.max < 0 {
		return "≥ " + t.show(-t.max)
	}
	return "≤ " + t.show(t.max)
}

// measure is the benchmark's figure (name/engine=e when e is set), and
// whether it meets the target; "not measured" and "" when it did not run.
func (t target) measure(run *benchRun, e string) (meas, met string) {
	name := t.name
	if e != "" {
		name += "/engine=" + e
	}
	v, ok := run.metric(t.pkg, name, t.metric)
	if !ok {
		return notMeasured, ""
	}
	return t.show(v), yesNo(t.max < 0 && v >= -t.max || t.max >= 0 && v <= t.max)
}

func writeTargets(w io.Writer, run *benchRun) {
	fmt.Fprintln(w, "## Other targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Session start, reset, fork, memory and fuel metering, on each engine:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| what | target | wazero | wasmtime | met |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, t := range targets {
		if !t.onEngines {
			continue
		}
		var cells, met []string
		for _, e := range engines {
			m, ok := t.measure(run, e)
			cells = append(cells, m)
			if ok == "" {
				ok = notMeasured
			}
			met = append(met, e+" "+ok)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.what, t.limit(), strings.Join(cells, " | "), strings.Join(met, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The fuel overhead is measured by running the metered and the unmetered")
	fmt.Fprintln(w, "module alternately (eight pairs an iteration), which cancels most of the")
	fmt.Fprintln(w, "machine's drift. The resident memory is the growth of the benchmark")
	fmt.Fprintln(w, "process's RSS over 200 sessions that each ran one cell, per session.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The rest (the HTTP load on the default engine):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| what | target | measured | met |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, t := range targets {
		if t.onEngines {
			continue
		}
		meas, met := t.measure(run, "")
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.what, t.limit(), meas, met)
	}
	fmt.Fprintln(w)
}

const notMeasured = "not measured"

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// dur shows ns as a duration with four significant digits at most.
func dur(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return trim(fmt.Sprintf("%.3g", d.Seconds())) + " s"
	case d >= time.Millisecond:
		return trim(fmt.Sprintf("%.3g", ns/1e6)) + " ms"
	case d >= time.Microsecond:
		return trim(fmt.Sprintf("%.3g", ns/1e3)) + " µs"
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// trim turns %g's exponent form (1.23e+03) back into plain digits.
func trim(s string) string {
	if strings.ContainsAny(s, "e") {
		f, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

func write(w io.Writer, run *benchRun, hand []string) {
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `make bench` (internal/benchreport) from one `go test -bench` run:")
	fmt.Fprintln(w, "wasmeval on both engines, Pyodide "+pyodide.Version+" from npm on node, Debian's")
	fmt.Fprintln(w, "python3.11 and node, all measured in the same run on the same machine, one")
	fmt.Fprintln(w, "package at a time. The headline's eval line, fib, loop and whole-process")
	fmt.Fprintln(w, "benchmarks and the typical-code kernels, ours and Pyodide's, and the fuel")
	fmt.Fprintln(w, "overhead then run again in processes of their own, in turn, and each")
	fmt.Fprintln(w, "figure of theirs is the median over the processes (the all-figures table")
	fmt.Fprintln(w, "says over how many). Sections between hand-written markers are kept from")
	fmt.Fprintln(w, "the file as it was; `make bench` writes the rest.")
	fmt.Fprintln(w)
	for _, e := range run.env {
		fmt.Fprintf(w, "- %s\n", e)
	}
	for _, n := range run.notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	fmt.Fprintln(w)
	if l := run.maxLoad(); l > float64(cpus) {
		fmt.Fprintf(w, "**Taken with other work running:** the load average reached %.1f on this\n", l)
		fmt.Fprintf(w, "%d-core machine during the run, so every time here is slower and noisier\n", cpus)
		fmt.Fprintln(w, "than on an idle one; the ratios, measured a few seconds apart, hold better.")
		fmt.Fprintln(w)
	}
	if len(run.failures) > 0 {
		fmt.Fprintln(w, "**Failed in this run** (their figures are missing below): "+strings.Join(run.failures, ", ")+".")
		fmt.Fprintln(w)
	}
	writeHeadline(w, run)
	writeKernels(w, run) // kernels.go
	writeTargets(w, run)
	writeAll(w, run)
	for _, h := range hand {
		fmt.Fprintln(w)
		fmt.Fprint(w, h)
	}
}

func writeAll(w io.Writer, run *benchRun) {
	fmt.Fprintln(w, "## All figures")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratio = the benchmark's time / native time (native-ns/op, measured by the")
	fmt.Fprintln(w, "benchmark itself in the same run); runs = the iterations the figures are")
	fmt.Fprintln(w, "the mean of (an op that takes longer than a second runs once) in the")
	fmt.Fprintln(w, "benchmark's first process; for a benchmark that several processes ran,")
	fmt.Fprintln(w, "each figure is the median of that figure over them.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| package | benchmark | runs | time/op | native/op | ratio | other |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range run.rows {
		native, ratio := "", ""
		if v, ok := r.metrics["native-ns/op"]; ok {
			native = dur(v)
		}
		if v, ok := r.metrics["x-native"]; ok {
			ratio = fmt.Sprintf("%.2fx", v)
		}
		var other []string
		for _, k := range r.order {
			switch k {
			case "ns/op", "native-ns/op", "x-native":
				continue
			}
			v := r.metrics[k]
			if strings.HasSuffix(k, "ns/op") {
				other = append(other, fmt.Sprintf("%s %s", dur(v), strings.TrimSuffix(k, "-ns/op")))
				continue
			}
			other = append(other, fmt.Sprintf("%s %s", strconv.FormatFloat(v, 'g', 4, 64), k))
		}
		runs := r.runs
		if r.procs > 1 {
			runs += fmt.Sprintf(" (median of %d processes)", r.procs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.pkg, r.name, runs, dur(r.metrics["ns/op"]), native, ratio, strings.Join(other, ", "))
	}
}
