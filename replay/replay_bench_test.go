package replay_test

import (
	"context"
	"io"
	"testing"

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
