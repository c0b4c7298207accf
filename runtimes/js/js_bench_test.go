package js_test

import (
	"context"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
)

type nopSink struct{}

func (nopSink) Stdout(string)                 {}
func (nopSink) Stderr(string)                 {}
func (nopSink) Display(runtimes.Bundle, bool) {}
func (nopSink) Status(string, string)         {}

func benchInstance(b *testing.B) runtimes.Instance {
	b.Helper()
	inst, err := js.New().NewInstance(context.Background(), runtimes.InstanceOptions{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inst.Close(context.Background()) })
	return inst
}

func benchRun(b *testing.B, inst runtimes.Instance, code string) {
	b.Helper()
	out, err := inst.Run(context.Background(), code, nopSink{})
	if err != nil || out.Failed {
		b.Fatalf("Run(%q) = %+v, %v", code, out, err)
	}
}

// BenchmarkTrivialCell is one small cell, with a result, in a warm session.
// Target: 20 µs.
func BenchmarkTrivialCell(b *testing.B) {
	ctx := context.Background()
	for _, code := range []string{"1 + 1", "let v = 1; v + 1", "await null; 1"} {
		b.Run(code, func(b *testing.B) {
			inst := benchInstance(b)
			benchRun(b, inst, code)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := threadCPU()
			for range b.N {
				if _, err := inst.Run(ctx, code, nopSink{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkNewInstance is a session's start: a VM and the prelude.
func BenchmarkNewInstance(b *testing.B) {
	ctx := context.Background()
	rt := js.New()
	b.ReportAllocs()
	for range b.N {
		inst, err := rt.NewInstance(ctx, runtimes.InstanceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		inst.Close(ctx)
	}
}

const fibSource = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }"

// BenchmarkFib27 is recursive fib(27) in goja, and for comparison in the
// machine's node (started once per run of the benchmark; its figure is the
// time node reports for its own loop, without its start-up).
func BenchmarkFib27(b *testing.B) {
	b.Run("goja", func(b *testing.B) {
		inst := benchInstance(b)
		benchRun(b, inst, fibSource)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			benchRun(b, inst, "fib(27)")
		}
	})
	b.Run("node", func(b *testing.B) {
		node, err := exec.LookPath("node")
		if err != nil {
			b.Skip("no node on this machine")
		}
		script := fibSource + `
const n = Number(process.argv[1]);
let sink = 0;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) sink += fib(27);
const ns = process.hrtime.bigint() - start;
if (sink !== n * 196418) throw new Error('wrong fib');
console.log(String(ns));`
		out, err := exec.Command(node, "-e", script, strconv.Itoa(b.N)).Output()
		if err != nil {
			b.Fatalf("node: %v", err)
		}
		ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatalf("node printed %q", out)
		}
		b.ReportMetric(ns/float64(b.N), "ns/op")
	})
}

// loopSource is a tight arithmetic loop of a million turns: the loop's
// safe-point counter and the + guard's type test (source.go) were most of
// what the guards added to it (growth.go).
const loopSource = "{ let s = 0; for (let i = 0; i < 1e6; i++) s += i * 2; s }"

// benchCells runs code as a cell b.N times, with the thread's CPU time per
// cell as cpu-ns/op (Linux): on a busy machine it varies less than ns/op.
func benchCells(b *testing.B, code string) {
	inst := benchInstance(b)
	benchRun(b, inst, code)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu := threadCPU()
	for range b.N {
		benchRun(b, inst, code)
	}
	b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLoop is loopSource as a cell, and for comparison in a bare goja
// VM (no prelude, no rewriting, no guard); and a loop that calls a
// function each turn, which keeps its safe-point counter.
func BenchmarkLoop(b *testing.B) {
	b.Run("arithmetic", func(b *testing.B) { benchCells(b, loopSource) })
	b.Run("arithmetic in bare goja", func(b *testing.B) {
		vm := goja.New()
		prg := goja.MustCompile("loop.js", loopSource, false)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.ResetTimer()
		cpu := threadCPU()
		for range b.N {
			if _, err := vm.RunProgram(prg); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
	// i < n of two identifiers keeps a native path behind a type test
	// (compare.go).
	b.Run("arithmetic to a variable bound", func(b *testing.B) {
		benchCells(b, "{ const n = 1e6; let s = 0; for (let i = 0; i < n; i++) s += i * 2; s }")
	})
	b.Run("with a call", func(b *testing.B) {
		benchCells(b, "{ const f = (x) => x; let s = 0; for (let i = 0; i < 1e6; i++) s += f(i); s }")
	})
}

// BenchmarkTemplate is 100,000 templates of two substitutions, of
// identifiers and with a member: both call the host's guard
// (templates.go).
func BenchmarkTemplate(b *testing.B) {
	b.Run("identifiers", func(b *testing.B) {
		benchCells(b, "{ let r; const n = 'x'; for (let i = 0; i < 1e5; i++) r = `${i}-${n}`; r }")
	})
	b.Run("member", func(b *testing.B) {
		benchCells(b, "{ let r; const o = { n: 'x' }; for (let i = 0; i < 1e5; i++) r = `${i}-${o.n}`; r }")
	})
}

// compareSource makes 100,000 comparisons of two array elements, as a
// sort check or a merge does.
const compareSource = "{ const a = Array.from({ length: 1000 }, (_, i) => i); let c = 0; " +
	"for (let k = 0; k < 100; k++) for (let i = 1; i < a.length; i++) if (a[i - 1] < a[i]) c++; c }"

// BenchmarkCompare is compareSource as a cell, and for comparison in a
// bare goja VM: a comparison of two members may meet a BigInt and a long
// text, which the guard compares without parsing (compare.go).
func BenchmarkCompare(b *testing.B) {
	b.Run("members", func(b *testing.B) { benchCells(b, compareSource) })
	b.Run("members of objects", func(b *testing.B) {
		benchCells(b, "{ const o = { x: 1, y: 2 }; let c = 0; for (let i = 0; i < 1e5; i++) if (o.x < o.y) c++; c }")
	})
	b.Run("members in bare goja", func(b *testing.B) {
		vm := goja.New()
		prg := goja.MustCompile("compare.js", compareSource, false)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.ResetTimer()
		cpu := threadCPU()
		for range b.N {
			if _, err := vm.RunProgram(prg); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
}
