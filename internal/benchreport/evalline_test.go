package main

import (
	"strings"
	"testing"
)

// evalLineSample is a bench.out holding the eval line's layers: the
// floors, the library's cell, the session and the round trip (the
// python3.11 floor missing, as when it is not installed).
const evalLineSample = `goos: linux
pkg: github.com/wasmeval/wasmeval/cmd/wasmeval
BenchmarkEvalLineFloor/echo=cat-2                  	   21104	     48100 ns/op	     13800 cpu-ns/op	      48 B/op	       1 allocs/op
BenchmarkEvalLineFloor/echo=eval-host-2            	   14145	     90900 ns/op	     49300 cpu-ns/op	     320 B/op	       1 allocs/op
BenchmarkEvalLineFloor/echo=node-2                 	    9356	    127000 ns/op	     79300 cpu-ns/op	      48 B/op	       1 allocs/op
BenchmarkEvalSession/engine=wazero-2               	   10000	    101000 ns/op	    107000 cpu-ns/op	    3496 B/op	      60 allocs/op
BenchmarkEvalSession/engine=wasmtime-2             	   13407	     91800 ns/op	     98500 cpu-ns/op	    3696 B/op	      69 allocs/op
BenchmarkEvalLine/engine=wazero-2                  	    5886	    211000 ns/op	    147000 native-ns/op	         1.430 x-native	    202000 cpu-ns/op
BenchmarkEvalLine/engine=wasmtime-2                	    7358	    168000 ns/op	    167000 native-ns/op	         1.010 x-native	    161000 cpu-ns/op
pkg: github.com/wasmeval/wasmeval/runtimes/python
BenchmarkTrivialCellCheckpoints/engine=wazero-2    	    5000	     87600 ns/op	     91800 cpu-ns/op
BenchmarkTrivialCellCheckpoints/engine=wasmtime-2  	    5000	     76100 ns/op	     80800 cpu-ns/op
`

// TestEvalLineLayers: the report shows the eval line layer by layer, the
// floors (BenchmarkEvalLineFloor, one figure for both engines) and the
// session's share (BenchmarkEvalSession) between the library's cell and
// the whole round trip, wall and CPU time on each engine; a floor that
// did not run says so.
func TestEvalLineLayers(t *testing.T) {
	out := report(t, evalLineSample)
	i := strings.Index(out, "### The eval line, layer by layer")
	if i < 0 {
		t.Fatalf("no eval line section:\n%s", out)
	}
	sec, _, _ := strings.Cut(out[i:], "What each figure is")
	want := []string{
		"| the pipes' round trip (`cat` echoing the line) | 48.1 µs | 48.1 µs | 13.8 µs | 13.8 µs | `cmd/wasmeval` `BenchmarkEvalLineFloor/echo=cat` |",
		"| a python3.11 line loop that answers without running the cell | not measured | not measured | not measured | not measured | `cmd/wasmeval` `BenchmarkEvalLineFloor/echo=python3.11` |",
		"| node's readline loop that answers without running the cell (bench.mjs's floor) | 127 µs | 127 µs | 79.3 µs | 79.3 µs |",
		"| eval's line path without a session (stdin read, line decoded, a trivial answer encoded and written) | 90.9 µs | 90.9 µs | 49.3 µs | 49.3 µs |",
		"| the library's trivial cell, checkpoints on (no sandbox, no line) | 87.6 µs | 76.1 µs | 91.8 µs | 80.8 µs | `runtimes/python` `BenchmarkTrivialCellCheckpoints/engine=*` |",
		"| the session eval opens, in process (sandbox.Session.Eval, the answer encoded; no pipes) | 101 µs | 91.8 µs | 107 µs | 98.5 µs | `cmd/wasmeval` `BenchmarkEvalSession/engine=*` |",
		"| the whole round trip through a `wasmeval eval` process | 211 µs | 168 µs | 202 µs | 161 µs | `cmd/wasmeval` `BenchmarkEvalLine/engine=*` |",
	}
	last := -1
	for _, row := range want {
		j := strings.Index(sec, row)
		if j < 0 {
			t.Errorf("missing row %q in:\n%s", row, sec)
			continue
		}
		if j < last {
			t.Errorf("row %q out of order", row)
		}
		last = j
	}
	// It comes with issue 15's tables, before the list of what each is.
	if h, e := strings.Index(out, "### CPU time"), strings.Index(out, "What each figure is"); !(h < i && i < e) {
		t.Errorf("the section is at %d, want between the CPU table (%d) and the figures' list (%d)", i, h, e)
	}
}
