package js_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

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
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := inst.Run(ctx, code, nopSink{}); err != nil {
					b.Fatal(err)
				}
			}
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
