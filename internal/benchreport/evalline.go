package main

import (
	"fmt"
	"io"
)

// evalLayer is one row of the eval line's breakdown: a benchmark that
// measures one layer of the round trip, per engine (the same benchmark for
// both when the layer has no engine).
type evalLayer struct {
	what  string
	bench func(engine string) (pkg, name string)
}

// evalLayers go from the floor under every process to the whole round
// trip, so that each row's step over the one before it is that layer's
// share (issue 15: where the eval line's time goes).
var evalLayers = []evalLayer{
	{"the pipes' round trip (`cat` echoing the line)", func(string) (string, string) {
		return pkgCmd, "BenchmarkEvalLineFloor/echo=cat"
	}},
	{"a python3.11 line loop that answers without running the cell", func(string) (string, string) {
		return pkgCmd, "BenchmarkEvalLineFloor/echo=python3.11"
	}},
	{"node's readline loop that answers without running the cell (bench.mjs's floor)", func(string) (string, string) {
		return pkgCmd, "BenchmarkEvalLineFloor/echo=node"
	}},
	{"eval's line path without a session (stdin read, line decoded, a trivial answer encoded and written)", func(string) (string, string) {
		return pkgCmd, "BenchmarkEvalLineFloor/echo=eval-host"
	}},
	{"the library's trivial cell, checkpoints on (no sandbox, no line)", func(e string) (string, string) {
		return pkgPython, "BenchmarkTrivialCellCheckpoints/engine=" + e
	}},
	{"the session eval opens, in process (sandbox.Session.Eval, the answer encoded; no pipes)", func(e string) (string, string) {
		return pkgCmd, "BenchmarkEvalSession/engine=" + e
	}},
	{"the whole round trip through a `wasmeval eval` process", func(e string) (string, string) {
		return pkgCmd, "BenchmarkEvalLine/engine=" + e
	}},
}

// writeEvalLayers writes the eval line's breakdown: wall and CPU time per
// line of each layer, on each engine.
func writeEvalLayers(w io.Writer, run *benchRun) {
	fmt.Fprintln(w, "### The eval line, layer by layer")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where the eval line round trip's time goes. The floors (the first four")
	fmt.Fprintln(w, "rows) answer the same line without running a cell: the pipes alone, the")
	fmt.Fprintln(w, "line loops under the native and the Pyodide figures, and eval's own line")
	fmt.Fprintln(w, "path. Then the cell alone in the library, the cell in the session eval")
	fmt.Fprintln(w, "opens (everything eval does around it, in process, no pipes), and the")
	fmt.Fprintln(w, "whole round trip: each step down is that layer's share. CPU is the")
	fmt.Fprintln(w, "answering process's (all its threads), or this benchmark process's for")
	fmt.Fprintln(w, "the in-process rows. The floors have no engine: one figure, shown twice.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| layer | wazero wall | wasmtime wall | wazero CPU | wasmtime CPU | benchmark |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, l := range evalLayers {
		var wall, cpu [2]string
		for i, e := range engines {
			pkg, name := l.bench(e)
			wall[i] = run.fig(pkg, name, "ns/op").dur()
			cpu[i] = run.fig(pkg, name, "cpu-ns/op").dur()
		}
		pkg, name := l.bench("*")
		bench := "`" + pkg + "` `" + name + "`"
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", l.what, wall[0], wall[1], cpu[0], cpu[1], bench)
	}
	fmt.Fprintln(w)
}
