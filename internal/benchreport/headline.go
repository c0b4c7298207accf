package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/wasmeval/wasmeval/internal/benchreport/pyodide"
)

// engines are wasm.Engines(), named here so that benchreport does not
// build the engines (wasmtime's is cgo) to print a table.
var engines = []string{"wazero", "wasmtime"}

const (
	pkgCmd     = "cmd/wasmeval"
	pkgPython  = "runtimes/python"
	pkgPyodide = "internal/benchreport/pyodide"
)

// figure is one measured value, or none when its benchmark did not run.
type figure struct {
	v  float64
	ok bool
}

func (run *benchRun) fig(pkg, name, unit string) figure {
	v, ok := run.metric(pkg, name, unit)
	return figure{v, ok}
}

// first is the first measured of fs.
func first(fs ...figure) figure {
	for _, f := range fs {
		if f.ok {
			return f
		}
	}
	return figure{}
}

func (f figure) dur() string {
	if !f.ok {
		return notMeasured
	}
	return dur(f.v)
}

func (f figure) ratio() string {
	if !f.ok {
		return notMeasured
	}
	return fmt.Sprintf("%.2fx", f.v)
}

// div is a / b, measured when both are.
func div(a, b figure) figure {
	if !a.ok || !b.ok || b.v == 0 {
		return figure{}
	}
	return figure{a.v / b.v, true}
}

// pair shows two figures as "a / b", with f showing each.
func pair(a, b figure, f func(figure) string) string {
	if !a.ok && !b.ok {
		return notMeasured
	}
	return f(a) + " / " + f(b)
}

// headline is one row of issue 15's table: for each engine the figures
// (one, or two shown "a / b"), Pyodide's, native's, their targets, and
// the ratios against Pyodide and native.
type headline struct {
	what, target       string
	max                []float64           // the targets of wasm's figures (ns, or x-native)
	wasm               map[string][]figure // by engine
	vsPyodide          map[string][]figure // wasm's figures ÷ Pyodide's, by engine
	vsNative           map[string][]figure // wasm's figures ÷ native's, by engine
	pyodideCellContent string              // Pyodide's cell in the table
	pyodideVsNative    []figure            // Pyodide's figures ÷ native's
	nativeCell         string              // native's cell in the table
}

func headlines(run *benchRun, cpu bool) []headline {
	fig := func(pkg, name, unit string) figure {
		if cpu {
			switch unit {
			case "ns/op":
				unit = "cpu-ns/op"
			case "native-ns/op":
				unit = "native-cpu-ns/op"
			case "x-native":
				unit = "x-native-cpu"
			}
		}
		return run.fig(pkg, name, unit)
	}
	var hs []headline

	// Trivial cell through the eval line protocol.
	{
		h := headline{what: "trivial cell, warm session, eval line round trip", target: "≤ 50 µs", max: []float64{50e3},
			wasm: map[string][]figure{}, vsPyodide: map[string][]figure{}, vsNative: map[string][]figure{}}
		p := fig(pkgPyodide, "BenchmarkPyodideEvalLine", "ns/op")
		nat := first(fig(pkgCmd, "BenchmarkEvalLine/engine=wazero", "native-ns/op"), fig(pkgCmd, "BenchmarkEvalLine/engine=wasmtime", "native-ns/op"))
		for _, e := range engines {
			w := fig(pkgCmd, "BenchmarkEvalLine/engine="+e, "ns/op")
			h.wasm[e] = []figure{w}
			h.vsPyodide[e] = []figure{div(w, p)}
			h.vsNative[e] = []figure{fig(pkgCmd, "BenchmarkEvalLine/engine="+e, "x-native")}
		}
		h.pyodideCellContent = p.dur()
		h.pyodideVsNative = []figure{div(p, nat)}
		h.nativeCell = nat.dur() + " (a python3.11 line loop)"
		if !nat.ok {
			h.nativeCell = notMeasured
		}
		hs = append(hs, h)
	}

	// Trivial cell in the library, checkpoints off and on.
	{
		h := headline{what: "trivial cell inside the library, checkpoints off / on", target: "≤ 20 / ≤ 30 µs", max: []float64{20e3, 30e3},
			wasm: map[string][]figure{}, vsPyodide: map[string][]figure{}, vsNative: map[string][]figure{}}
		p := fig(pkgPyodide, "BenchmarkPyodideTrivialCell", "ns/op")
		nat := first(fig(pkgPython, "BenchmarkTrivialCell/engine=wazero", "native-ns/op"), fig(pkgPython, "BenchmarkTrivialCell/engine=wasmtime", "native-ns/op"))
		for _, e := range engines {
			off := fig(pkgPython, "BenchmarkTrivialCell/engine="+e, "ns/op")
			on := fig(pkgPython, "BenchmarkTrivialCellCheckpoints/engine="+e, "ns/op")
			h.wasm[e] = []figure{off, on}
			h.vsPyodide[e] = []figure{div(off, p), div(on, p)}
			h.vsNative[e] = []figure{fig(pkgPython, "BenchmarkTrivialCell/engine="+e, "x-native"), fig(pkgPython, "BenchmarkTrivialCellCheckpoints/engine="+e, "x-native")}
		}
		h.pyodideCellContent = p.dur() + " (runPython in node)"
		if !p.ok {
			h.pyodideCellContent = notMeasured
		}
		h.pyodideVsNative = []figure{fig(pkgPyodide, "BenchmarkPyodideTrivialCell", "x-native")}
		h.nativeCell = nat.dur()
		hs = append(hs, h)
	}

	// fib and the loop against native, fuel on; the figures are ratios.
	{
		h := headline{what: "fib(27) / 3M-iteration loop vs native, fuel on", target: "≤ 2.0x / ≤ 2.0x", max: []float64{2, 2},
			wasm: map[string][]figure{}, vsPyodide: map[string][]figure{}, vsNative: map[string][]figure{}}
		pf := fig(pkgPyodide, "BenchmarkPyodideFib27", "x-native")
		pl := fig(pkgPyodide, "BenchmarkPyodideLoop3M", "x-native")
		// Against Pyodide the times themselves, as in the other rows: a
		// ratio of the two ratios would carry the difference between two
		// measurements of the same native program (up to 7% apart in one
		// run) into the comparison.
		pft := fig(pkgPyodide, "BenchmarkPyodideFib27", "ns/op")
		plt := fig(pkgPyodide, "BenchmarkPyodideLoop3M", "ns/op")
		for _, e := range engines {
			f := fig(pkgPython, "BenchmarkFib27/engine="+e, "x-native")
			l := fig(pkgPython, "BenchmarkLoop3M/engine="+e, "x-native")
			h.wasm[e] = []figure{f, l}
			h.vsPyodide[e] = []figure{
				div(fig(pkgPython, "BenchmarkFib27/engine="+e, "ns/op"), pft),
				div(fig(pkgPython, "BenchmarkLoop3M/engine="+e, "ns/op"), plt),
			}
			h.vsNative[e] = []figure{f, l}
		}
		h.pyodideCellContent = pair(pf, pl, figure.ratio)
		h.pyodideVsNative = []figure{pf, pl}
		nf := first(fig(pkgPython, "BenchmarkFib27/engine=wazero", "native-ns/op"), fig(pkgPython, "BenchmarkFib27/engine=wasmtime", "native-ns/op"))
		nl := first(fig(pkgPython, "BenchmarkLoop3M/engine=wazero", "native-ns/op"), fig(pkgPython, "BenchmarkLoop3M/engine=wasmtime", "native-ns/op"))
		h.nativeCell = "1x (" + pair(nf, nl, figure.dur) + ")"
		hs = append(hs, h)
	}

	// The whole process.
	{
		h := headline{what: "whole-process `eval` of print(1), warm caches", target: "≤ 100 ms", max: []float64{100e6},
			wasm: map[string][]figure{}, vsPyodide: map[string][]figure{}, vsNative: map[string][]figure{}}
		p := fig(pkgPyodide, "BenchmarkPyodideProcessPrint1", "ns/op")
		load := fig(pkgPyodide, "BenchmarkPyodideProcessPrint1", "load-ns/op")
		node := fig(pkgPyodide, "BenchmarkPyodideProcessPrint1", "node-ns/op")
		nat := first(fig(pkgCmd, "BenchmarkProcessEvalPrint1/engine=wazero", "native-ns/op"), fig(pkgCmd, "BenchmarkProcessEvalPrint1/engine=wasmtime", "native-ns/op"))
		for _, e := range engines {
			w := fig(pkgCmd, "BenchmarkProcessEvalPrint1/engine="+e, "ns/op")
			h.wasm[e] = []figure{w}
			h.vsPyodide[e] = []figure{div(w, p)}
			h.vsNative[e] = []figure{fig(pkgCmd, "BenchmarkProcessEvalPrint1/engine="+e, "x-native")}
		}
		h.pyodideCellContent = p.dur()
		if p.ok && !cpu {
			h.pyodideCellContent += " (loadPyodide " + load.dur() + "; a bare node process " + node.dur() + ")"
		}
		h.pyodideVsNative = []figure{fig(pkgPyodide, "BenchmarkPyodideProcessPrint1", "x-native")}
		h.nativeCell = nat.dur()
		hs = append(hs, h)
	}
	return hs
}

// show is the engine's cell: its figures as times, or as ratios for the
// fib row (whose targets are ratios).
func (h headline) show(fs []figure) string {
	f := figure.dur
	if h.max[0] < 100 { // a ratio target
		f = figure.ratio
	}
	if len(fs) == 2 {
		return pair(fs[0], fs[1], f)
	}
	return f(fs[0])
}

// met says whether the engine's figures meet their targets.
func (h headline) met(e string) string {
	for i, f := range h.wasm[e] {
		if !f.ok {
			return notMeasured
		}
		if f.v > h.max[i] {
			return "no"
		}
	}
	return "yes"
}

// ahead says whether the engine is ahead of Pyodide: every ratio below 1.
func (h headline) ahead(e string) string {
	for _, f := range h.vsPyodide[e] {
		if !f.ok {
			return notMeasured
		}
		if f.v >= 1 {
			return "no"
		}
	}
	return "yes"
}

func ratios(fs []figure) string {
	if !first(fs...).ok {
		return notMeasured
	}
	var s []string
	for _, f := range fs {
		s = append(s, f.ratio())
	}
	return strings.Join(s, " / ")
}

// headlineTables writes the figures' table and the ratios' table.
func headlineTables(w io.Writer, hs []headline) {
	fmt.Fprintln(w, "| figure | wasmeval wazero | wasmeval wasmtime | Pyodide "+pyodideVersion()+" | native CPython | target | met |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, h := range hs {
		var met []string
		for _, e := range engines {
			met = append(met, e+" "+h.met(e))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", h.what, h.show(h.wasm["wazero"]), h.show(h.wasm["wasmtime"]),
			h.pyodideCellContent, h.nativeCell, h.target, strings.Join(met, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "As ratios (below 1x: faster than what it is divided by; \"a / b\" as in the row's figure):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | wazero ÷ Pyodide | wasmtime ÷ Pyodide | wazero ÷ native | wasmtime ÷ native | Pyodide ÷ native | ahead of Pyodide |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, h := range hs {
		var ahead []string
		for _, e := range engines {
			ahead = append(ahead, e+" "+h.ahead(e))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", h.what, ratios(h.vsPyodide["wazero"]), ratios(h.vsPyodide["wasmtime"]),
			ratios(h.vsNative["wazero"]), ratios(h.vsNative["wasmtime"]), ratios(h.pyodideVsNative), strings.Join(ahead, ", "))
	}
	fmt.Fprintln(w)
}

func pyodideVersion() string { return pyodide.Version }

func writeHeadline(w io.Writer, run *benchRun) {
	fmt.Fprintln(w, "## Issue 15's figures: wasmeval, Pyodide and native CPython side by side")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Default settings on each engine (fuel metering on; `wasmeval eval` with its")
	fmt.Fprintln(w, "checkpoints on). Pyodide runs the same cells in node. Ratios to native are")
	fmt.Fprintln(w, "each benchmark's own (native measured by the benchmark, right before it);")
	fmt.Fprintln(w, "the native column shows the one measured next to wazero. Ratios to Pyodide")
	fmt.Fprintln(w, "divide the two times (for fib and the loop too, not their ratios to native).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Wall time")
	fmt.Fprintln(w)
	headlineTables(w, headlines(run, false))
	fmt.Fprintln(w, "### CPU time")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The same benchmarks' CPU time per op, of the process that evaluates the")
	fmt.Fprintln(w, "cells (the `wasmeval eval`, node or python3.11 process for the eval line")
	fmt.Fprintln(w, "and whole-process rows, all its threads; this benchmark process, or node,")
	fmt.Fprintln(w, "or python3.11, for the others). Other work on the machine stretches wall")
	fmt.Fprintln(w, "times but hardly CPU times, so while the load is high these are the")
	fmt.Fprintln(w, "steadier comparison; they leave out waiting (the line rows' pipe wake-ups")
	fmt.Fprintln(w, "and the driver's side), so they are a floor under an idle machine's wall")
	fmt.Fprintln(w, "times, and a multi-threaded process can use more CPU than wall time.")
	fmt.Fprintln(w)
	headlineTables(w, headlines(run, true))
	writeEvalLayers(w, run) // evalline.go
	fmt.Fprintln(w, "What each figure is (benchmark names; all are in the table at the end):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "- eval line round trip: `cmd/wasmeval` `BenchmarkEvalLine/engine=*`, a")
	fmt.Fprintln(w, "  `wasmeval eval --engine E` process with a warm session, one request line")
	fmt.Fprintln(w, "  `x = 1` written to its stdin and the result line read back; Pyodide:")
	fmt.Fprintln(w, "  `BenchmarkPyodideEvalLine`, the same line to `bench.mjs serve` (runPython,")
	fmt.Fprintln(w, "  output captured, a JSON answer); native: python3.11 doing the same in a")
	fmt.Fprintln(w, "  line loop. The Pyodide figure of the next row is runPython without a pipe.")
	fmt.Fprintln(w, "- inside the library: `runtimes/python` `BenchmarkTrivialCell` and")
	fmt.Fprintln(w, "  `BenchmarkTrivialCellCheckpoints` (`Instance.Run(\"x = 1\")`);")
	fmt.Fprintln(w, "  Pyodide: `BenchmarkPyodideTrivialCell`, `pyodide.runPython(\"x = 1\")` timed")
	fmt.Fprintln(w, "  inside node; native: `exec(compile(...))` in python3.11.")
	fmt.Fprintln(w, "- fib and the loop: `BenchmarkFib27` and `BenchmarkLoop3M` (issue 15 names a")
	fmt.Fprintln(w, "  1M loop; the ratio is per iteration, and the 3M loop is the one the")
	fmt.Fprintln(w, "  README's engine table quotes); Pyodide: `BenchmarkPyodideFib27`,")
	fmt.Fprintln(w, "  `BenchmarkPyodideLoop3M`, the same cells by runPython.")
	fmt.Fprintln(w, "- whole process: `BenchmarkProcessEvalPrint1/engine=*`, `wasmeval eval")
	fmt.Fprintln(w, "  --engine E` with one print(1) line, after a first run warmed the caches;")
	fmt.Fprintln(w, "  Pyodide: `BenchmarkPyodideProcessPrint1`, `node bench.mjs DIR once")
	fmt.Fprintln(w, "  'print(1)'` (node has no code cache for Pyodide's module between")
	fmt.Fprintln(w, "  processes); native: `python3.11 -c 'print(1)'`.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Pyodide "+pyodideVersion()+" is CPython 3.13 built with Emscripten; wasmeval's")
	fmt.Fprintln(w, "and the native interpreter are CPython 3.11. The machine has two cores;")
	fmt.Fprintln(w, "wall times on it move by tens of percent from run to run (more while other")
	fmt.Fprintln(w, "work runs: see the load averages above), so compare figures within a run.")
	fmt.Fprintln(w)
}
