package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
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
