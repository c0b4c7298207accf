package jupyter_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/runtimes/python"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// BenchmarkKernelStart: a session's first cell on the jupyter backend,
// which starts its kernel (process, connection, kernel_info, prelude).
func BenchmarkKernelStart(b *testing.B) {
	rt := newRuntime(b, jupyter.Config{})
	b.ReportAllocs()
	for b.Loop() {
		inst, _ := newInstance(b, rt, nil)
		ok(b, inst, "1")
		inst.Close(context.Background())
	}
}

// BenchmarkCellRoundTrip: a trivial cell on a running kernel.
func BenchmarkCellRoundTrip(b *testing.B) {
	rt := newRuntime(b, jupyter.Config{})
	inst, _ := newInstance(b, rt, nil)
	ok(b, inst, "1")
	b.ReportAllocs()
	for b.Loop() {
		ok(b, inst, "1")
	}
}

const fib27 = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(27)"

// BenchmarkFib27 runs fib(27) on both Python backends in the same run:
// native CPython in a kernel against CPython-WASI in wazero.
func BenchmarkFib27(b *testing.B) {
	b.Run("jupyter", func(b *testing.B) {
		rt := newRuntime(b, jupyter.Config{})
		inst, _ := newInstance(b, rt, nil)
		benchFib(b, inst)
	})
	b.Run("wasm", func(b *testing.B) {
		dir, _ := os.UserCacheDir()
		rt, err := python.New(context.Background(), python.Config{CacheDir: filepath.Join(dir, "wasmeval")})
		testenv.NotBuilt(b, err)
		b.Cleanup(func() { rt.Close(context.Background()) })
		inst, err := rt.NewInstance(context.Background(), runtimes.InstanceOptions{Root: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { inst.Close(context.Background()) })
		benchFib(b, inst)
	})
}

func benchFib(b *testing.B, inst runtimes.Instance) {
	ok(b, inst, "1") // started: the kernel, or the wasm instance
	b.ReportAllocs()
	for b.Loop() {
		rec := &runtimetest.Recorder{}
		out, err := inst.Run(context.Background(), fib27, rec)
		if err != nil || out.Failed {
			b.Fatalf("fib(27): %+v %v %s", out, err, rec.StderrText())
		}
		if r := rec.Results(); len(r) != 1 || r[0]["text/plain"] != "196418" {
			b.Fatalf("fib(27) = %v", r)
		}
	}
}
