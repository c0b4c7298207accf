//go:build linux

package sandbox_test

import (
	"context"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"golang.org/x/sys/unix"
)

// BenchmarkRecordedCell measures what recording adds to a cell's path
// through the sandbox, on a fake runtime whose cell costs next to nothing,
// so that the recording's own cost is most of the difference between
// plain and recorded (BenchmarkRecordOverhead in package replay measures
// it against the real runtimes).
func BenchmarkRecordedCell(b *testing.B) {
	fakes(b)
	for _, lang := range []string{"py", "js"} {
		for _, rec := range []bool{false, true} {
			name := lang + "/plain"
			if rec {
				name = lang + "/recorded"
			}
			b.Run(name, func(b *testing.B) {
				runtime.LockOSThread() // for threadCPU
				defer runtime.UnlockOSThread()
				ctx := context.Background()
				sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer sb.Close(ctx)
				so := sandbox.SessionOptions{Root: b.TempDir()}
				if rec {
					so.Record = io.Discard
				}
				s, err := sb.NewSession(ctx, so)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(ctx)
				req := sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: "out 2"}}}
				if _, err := s.Eval(ctx, req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu, path := processCPU(), threadCPU()
				for b.Loop() {
					res, err := s.Eval(ctx, req)
					if err != nil || res.Details.IsError {
						b.Fatalf("%v %+v", err, res)
					}
				}
				// The process's CPU time: steadier than wall time on a
				// loaded machine, and it counts the tape's encoding, which
				// runs on goroutines of its own.
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				// The CPU time of the benchmark's own thread, its goroutine
				// locked to it: the cost on the request's path, which the
				// load of others barely moves.
				b.ReportMetric(float64(threadCPU()-path)/float64(b.N), "path-cpu-ns/op")
			})
		}
	}
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// processCPU is the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
