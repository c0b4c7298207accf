package main

import (
	"fmt"
	"io"
	"math"

	"github.com/wasmeval/wasmeval/internal/benchreport/kernels"
)

// writeKernels is the table of the typical-code kernels: each engine's
// time, Pyodide's and native's, and the ratios of wasmtime (the default
// engine) to Pyodide and to native, with their geometric means over the
// kernels measured on both sides.
func writeKernels(w io.Writer, run *benchRun) {
	fmt.Fprintln(w, "## Typical code")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The kernels of internal/benchreport/kernels (`runtimes/python`")
	fmt.Fprintln(w, "`BenchmarkKernel/name=*/engine=*`, fuel metering on; Pyodide:")
	fmt.Fprintln(w, "`BenchmarkPyodideKernel/name=*`), wall time per kernel, each figure the")
	fmt.Fprintln(w, "median over the processes as for fib (the all-figures table says over how")
	fmt.Fprintln(w, "many). A change that helps fib or the loop above is judged on these too.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| kernel | wazero | wasmtime | Pyodide | native | wasmtime ÷ Pyodide (CPU) | wasmtime ÷ native |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	var vsP, vsPCPU, vsN geomean
	for _, k := range kernels.All {
		name := "BenchmarkKernel/name=" + k.Name + "/engine="
		pname := "BenchmarkPyodideKernel/name=" + k.Name
		wt := run.fig(pkgPython, name+"wasmtime", "ns/op")
		p := run.fig(pkgPyodide, pname, "ns/op")
		nat := first(run.fig(pkgPython, name+"wasmtime", "native-ns/op"), run.fig(pkgPython, name+"wazero", "native-ns/op"))
		r := div(wt, p)
		rc := div(run.fig(pkgPython, name+"wasmtime", "cpu-ns/op"), run.fig(pkgPyodide, pname, "cpu-ns/op"))
		n := run.fig(pkgPython, name+"wasmtime", "x-native")
		vsP.add(r)
		vsPCPU.add(rc)
		vsN.add(n)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s (%s) | %s |\n", k.What,
			run.fig(pkgPython, name+"wazero", "ns/op").dur(), wt.dur(), p.dur(), nat.dur(),
			r.ratio(), rc.ratio(), n.ratio())
	}
	fmt.Fprintf(w, "| geometric mean | | | | | %s (%s) | %s |\n", vsP.figure().ratio(), vsPCPU.figure().ratio(), vsN.figure().ratio())
	fmt.Fprintln(w)
}

// geomean is the geometric mean of the measured figures added to it.
type geomean struct {
	logSum float64
	n      int
}

func (g *geomean) add(f figure) {
	if f.ok && f.v > 0 {
		g.logSum += math.Log(f.v)
		g.n++
	}
}

func (g geomean) figure() figure {
	if g.n == 0 {
		return figure{}
	}
	return figure{math.Exp(g.logSum / float64(g.n)), true}
}
