package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/wasm"
)

// trivialResult is the result line of a trivial cell (`x = 1`), as eval
// writes it.
const trivialResult = `{"content":[{"type":"text","text":""}],"details":{"cells":[{"index":0,"title":"py","language":"py","code":"x = 1","status":"complete","output":"","durationMs":0,"exitCode":0,"statusEvents":[],"markdown":""}],"language":"py","languages":["py"],"jsonOutputs":[],"images":[],"statusEvents":[],"meta":{},"isError":false}}`

// BenchmarkEvalLineHost is the host side of one eval line without the
// guest: the line's decoding (profiles.EvalRequest) and its result's
// encoding and write, as runEval does them (issue 15: a few µs).
func BenchmarkEvalLineHost(b *testing.B) {
	line := []byte(`{"cells":[{"language":"py","code":"x = 1"}]}`)
	var res sandbox.Result
	if err := json.Unmarshal([]byte(trivialResult), &res); err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	w := newResultWriter(&out)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := profiles.EvalRequest(line); !ok {
			b.Fatal("not read by profiles.EvalRequest")
		}
		out.Reset()
		if err := w.write(&res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalSession is an eval line's session part in process, without
// the pipes: the session eval opens (openSession, checkpoints on, as eval
// runs it) evaluating the trivial cell of BenchmarkEvalLine, its result
// encoded and written to a buffer as eval writes it, on each engine. It is
// the step between runtimes/python's BenchmarkTrivialCellCheckpoints (the
// runtime alone) and BenchmarkEvalLine (the whole round trip through a
// process's stdin and stdout; BenchmarkEvalLineFloor is its floor), so the
// three say what each layer adds (issue 15). cpu-ns/op is this process's
// CPU time per op, all threads. An op ends, as eval's line does, with the
// session's work between cells (Settle: the checkpoint the cell leaves);
// answer-ns/op is the op without it, the part a client waits for when it
// sends its next line at once.
func BenchmarkEvalSession(b *testing.B) {
	testenv.RequirePython(b)
	line := []byte(`{"cells":[{"language":"py","code":"x = 1"}]}`)
	for _, engine := range wasm.Engines() {
		b.Run("engine="+engine, func(b *testing.B) {
			ctx := context.Background()
			sess, err := openSession(ctx, sandbox.SessionOptions{Root: b.TempDir(), Checkpoints: true}, sandbox.Options{Engine: engine})
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close(ctx)
			var out bytes.Buffer
			w := newResultWriter(&out)
			settle, _ := sess.(interface{ Settle() })
			var answer time.Duration // Eval and the answer's encoding, without Settle
			run := func() {
				t := time.Now()
				req, ok := profiles.EvalRequest(line)
				if !ok {
					b.Fatal("not read by profiles.EvalRequest")
				}
				res, err := sess.Eval(ctx, req)
				if err != nil || res.Details.IsError {
					b.Fatalf("%v %+v", err, res)
				}
				out.Reset()
				if err := w.write(res); err != nil {
					b.Fatal(err)
				}
				answer += time.Since(t)
				if settle != nil {
					settle.Settle()
				}
			}
			for range 100 { // warm the session
				run()
			}
			b.ResetTimer()
			answer = 0
			c0 := cputime.Self()
			for b.Loop() {
				run()
			}
			reportNative(b, nativeTimes{}, cputime.Self()-c0)
			b.ReportMetric(float64(answer.Nanoseconds())/float64(b.N), "answer-ns/op")
		})
	}
}
