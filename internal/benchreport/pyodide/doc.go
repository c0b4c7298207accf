// Package pyodide holds the Pyodide side of make bench: bench.mjs, which
// times Pyodide (from npm, installed by make pyodide into the build cache)
// on node, and the benchmarks that run it, so that one `go test -bench`
// run puts Pyodide next to wasmeval's figures (issue 15;
// internal/benchreport writes the table). It has no code of its own.
package pyodide

// Version is the npm pyodide that make pyodide installs; keep it in step
// with PYODIDE_VERSION in the Makefile.
const Version = "0.29.5"
