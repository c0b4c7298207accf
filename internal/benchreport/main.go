// Command benchreport turns `go test -bench` output into docs/benchmarks.md:
// one table row per benchmark with its time per op and, where the benchmark
// measured the native counterpart in the same run (native-ns/op), the ratio.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

type row struct {
	pkg, name string
	metrics   map[string]float64
	order     []string
}

func main() {
	rows, env, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	write(os.Stdout, rows, env)
}

func parse(r io.Reader) ([]row, []string, error) {
	var rows []row
	var env []string
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "cpu: ") || strings.HasPrefix(line, "goos: ") || strings.HasPrefix(line, "goarch: "):
			if !contains(env, line) {
				env = append(env, line)
			}
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			rw := row{pkg: pkg, name: f[0], metrics: map[string]float64{}}
			for i := 2; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					break
				}
				rw.metrics[f[i+1]] = v
				rw.order = append(rw.order, f[i+1])
			}
			rows = append(rows, rw)
		}
	}
	return rows, env, sc.Err()
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// target is a figure an issue asks for.
type target struct {
	pkg, prefix, metric string
	max                 float64
	unit, what          string
}

var targets = []target{
	{"runtimes/python", "BenchmarkTrivialCell", "ns/op", 100e3, "ns", "Python trivial cell, warm session"},
	{"runtimes/python", "BenchmarkTrivialCellCheckpoints", "ns/op", 100e3, "ns", "the same, with per-cell checkpoints on, back to back"},
	{"runtimes/python", "BenchmarkNewSession", "ns/op", 10e6, "ns", "new Python session from the snapshot"},
	{"cmd/wasmeval", "BenchmarkProcessEvalPrint1", "ns/op", 300e6, "ns", "whole `wasmeval eval` process, print(1), warm cache"},
	{"runtimes/python", "BenchmarkReset", "ns/op", 5e6, "ns", "reset a Python session"},
	{"runtimes/python", "BenchmarkFork/light", "ns/op", 5e6, "ns", "fork a light Python session"},
	{"runtimes/python", "BenchmarkFork/100k-strings", "ns/op", 5e6, "ns", "fork a Python session holding 100k strings"},
	{"runtimes/python", "BenchmarkFuelOverhead/fib25", "fuel-overhead-%", 15, "%", "fuel metering overhead, fib(25)"},
	{"runtimes/python", "BenchmarkFuelOverhead/loop1M", "fuel-overhead-%", 15, "%", "fuel metering overhead, 1M-iteration loop"},
	{"runtimes/python", "BenchmarkIdleSessionsRSS", "MiB-RSS/session", 25, "MiB", "resident memory per idle session (goal 5)"},
	{"runtimes/js", "BenchmarkTrivialCell/1_+_1", "ns/op", 20e3, "ns", "JS trivial cell, warm session"},
	{"server", "BenchmarkLoad", "cells/s", -1, "", "HTTP load: 100 sessions × 100 trivial cells (target ≥ 2,000 cells/s)"},
}

func writeTargets(w io.Writer, rows []row) {
	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| what | target | measured | met |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, t := range targets {
		for _, r := range rows {
			pkg := strings.TrimPrefix(r.pkg, "github.com/wasmeval/wasmeval/")
			if pkg != t.pkg || !strings.HasPrefix(r.name, t.prefix+"-") {
				continue
			}
			v, ok := r.metrics[t.metric]
			if !ok {
				continue
			}
			show := func(x float64) string {
				if t.unit == "ns" {
					return dur(x)
				}
				return fmt.Sprintf("%.1f %s", x, t.unit)
			}
			if t.max < 0 { // a floor, not a ceiling
				met := "yes"
				if v < 2000 {
					met = "no"
				}
				fmt.Fprintf(w, "| %s | ≥ 2,000 cells/s | %.0f cells/s | %s |\n", t.what, v, met)
				continue
			}
			met := "yes"
			if v > t.max {
				met = "no"
			}
			fmt.Fprintf(w, "| %s | ≤ %s | %s | %s |\n", t.what, show(t.max), show(v), met)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Timings on this 2-core VM vary by up to ±40% from run to run, so compare")
	fmt.Fprintln(w, "figures within one run. The fuel overhead is measured by running the")
	fmt.Fprintln(w, "metered and the unmetered module alternately (eight pairs an iteration),")
	fmt.Fprintln(w, "which cancels most of that drift.")
	fmt.Fprintln(w)
}

func dur(ns float64) string {
	return time.Duration(ns).Round(time.Duration(max(1, ns/1000))).String()
}

func write(w io.Writer, rows []row, env []string) {
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `make bench` (internal/benchreport) from one `go test -bench` run;")
	fmt.Fprintln(w, "native figures (Debian's python3.11, node) were measured in the same run on")
	fmt.Fprintln(w, "the same machine. Ratio = wasmeval time / native time.")
	fmt.Fprintln(w)
	for _, e := range env {
		fmt.Fprintf(w, "- %s\n", e)
	}
	fmt.Fprintln(w)
	writeTargets(w, rows)
	fmt.Fprintln(w, "## All figures")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| package | benchmark | time/op | native/op | ratio | other |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
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
			other = append(other, fmt.Sprintf("%s %s", strconv.FormatFloat(r.metrics[k], 'g', 4, 64), k))
		}
		pkg := strings.TrimPrefix(r.pkg, "github.com/wasmeval/wasmeval/")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", pkg, r.name, dur(r.metrics["ns/op"]), native, ratio, strings.Join(other, ", "))
	}
}
