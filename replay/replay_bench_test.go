package replay_test

import (
	"context"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
)

// countingWriter counts the tape's bytes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// BenchmarkRecord measures what recording adds to a cell (target: at most
// 5% on the trivial and fib cells) and the tape's bytes per cell.
func BenchmarkRecord(b *testing.B) {
	testenv.RequirePython(b)
	for _, bc := range []struct{ name, lang, code string }{
		{"trivial py", "py", "1 + 1"},
		{"fib py", "py", "def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)\nfib(20)"},
		{"trivial js", "js", "1 + 1"},
		{"clock and random py", "py", "import time, random\n[time.time() + random.random() for _ in range(100)][-1] > 0"},
	} {
		for _, rec := range []bool{false, true} {
			name := bc.name + "/plain"
			if rec {
				name = bc.name + "/recorded"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				sb, err := sandbox.New(ctx, sandbox.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer sb.Close(ctx)
				so := sandbox.SessionOptions{Root: b.TempDir()}
				var w countingWriter
				if rec {
					so.Record = &w
				}
				s, err := sb.NewSession(ctx, so)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(ctx)
				req := sandbox.Request{Cells: []sandbox.Cell{{Language: bc.lang, Code: bc.code}}}
				if _, err := s.Eval(ctx, req); err != nil { // the runtime's start
					b.Fatal(err)
				}
				start := w.n
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					res, err := s.Eval(ctx, req)
					if err != nil || res.Details.IsError {
						b.Fatalf("%v %+v", err, res)
					}
				}
				if rec {
					b.ReportMetric(float64(w.n-start)/float64(b.N), "tape-B/cell")
				}
			})
		}
	}
}

// BenchmarkReplay replays the committed tape: a sandbox, a session and two
// requests of Python and JavaScript cells each time.
func BenchmarkReplay(b *testing.B) {
	testenv.RequirePython(b)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := replay.File(context.Background(), committedTape, replay.Options{})
		if err != nil || !rep.Identical {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkRecordOverhead measures what recording adds to a cell (target:
// at most 5% on the trivial and fib cells) with the plain and the
// recorded session run alternately, a pair at a time in turns, and
// reports the median of the pairs' wall-time ratios as overhead-% and the
// ratio of the process's CPU time spent in each as cpu-overhead-%: on a
// busy machine, timings drift by far more than the overhead between two
// runs of a benchmark, and alternation cancels that. path-overhead-% is
// the median of the pairs' ratios of the CPU time the benchmark's own
// thread spent in Eval (its goroutine locked to it): what recording adds
// on a request's path, which the load of others barely moves; the CPU
// time of the goroutines Eval leaves work to (the tape's encoding and
// compression) is in cpu-overhead-% only.
func BenchmarkRecordOverhead(b *testing.B) {
	testenv.RequirePython(b)
	for _, bc := range []struct {
		name, lang, code string
		pairs            int
	}{
		{"trivial py", "py", "1 + 1", 16},
		{"fib py", "py", "def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)\nfib(20)", 4},
		{"trivial js", "js", "1 + 1", 16},
	} {
		b.Run(bc.name, func(b *testing.B) {
			runtime.LockOSThread() // for threadCPU
			defer runtime.UnlockOSThread()
			ctx := context.Background()
			sb, err := sandbox.New(ctx, sandbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close(ctx)
			var w countingWriter
			var sess [2]*sandbox.Session // plain, recorded
			for i := range sess {
				so := sandbox.SessionOptions{Root: b.TempDir()}
				if i == 1 {
					so.Record = &w
				}
				if sess[i], err = sb.NewSession(ctx, so); err != nil {
					b.Fatal(err)
				}
				defer sess[i].Close(ctx)
			}
			req := sandbox.Request{Cells: []sandbox.Cell{{Language: bc.lang, Code: bc.code}}}
			var cpu [2]time.Duration
			var path [2]int64 // the thread's CPU time in the pair's last Evals
			run := func(s *sandbox.Session) time.Duration {
				c0, t0, start := cpuTime(), threadCPU(), time.Now()
				res, err := s.Eval(ctx, req)
				if err != nil || res.Details.IsError {
					b.Fatalf("%v %+v", err, res)
				}
				d := time.Since(start)
				if s == sess[1] {
					path[1] = threadCPU() - t0
				} else {
					path[0] = threadCPU() - t0
				}
				if s == sess[1] {
					cpu[1] += cpuTime() - c0
				} else {
					cpu[0] += cpuTime() - c0
				}
				return d
			}
			for range 3 { // the runtimes' start, and warm caches
				run(sess[0])
				run(sess[1])
			}
			var ratios, pathRatios []float64
			var plain, recorded time.Duration
			cpu = [2]time.Duration{}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for i := range bc.pairs {
					var d [2]time.Duration
					first := i % 2
					d[first] = run(sess[first])
					d[1-first] = run(sess[1-first])
					plain, recorded = plain+d[0], recorded+d[1]
					ratios = append(ratios, float64(d[1])/float64(d[0]))
					if path[0] > 0 {
						pathRatios = append(pathRatios, float64(path[1])/float64(path[0]))
					}
				}
			}
			slices.Sort(ratios)
			b.ReportMetric((ratios[len(ratios)/2]-1)*100, "overhead-%")
			if len(pathRatios) > 0 {
				slices.Sort(pathRatios)
				b.ReportMetric((pathRatios[len(pathRatios)/2]-1)*100, "path-overhead-%")
			}
			n := float64(len(ratios))
			b.ReportMetric(float64(plain.Microseconds())/n, "plain-µs/cell")
			b.ReportMetric(float64(recorded.Microseconds())/n, "recorded-µs/cell")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric((float64(cpu[1])/float64(cpu[0])-1)*100, "cpu-overhead-%")
		})
	}
}
