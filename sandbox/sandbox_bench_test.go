package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

func BenchmarkDecodeRequest(b *testing.B) {
	data := []byte(`{"cells":[{"language":"py","code":"import math\nprint(math.pi)","title":"pi","timeout":10},{"language":"js","code":"1 + 1"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sandbox.DecodeRequest(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEval measures the sandbox's own work per request (collecting,
// formatting) on a fake runtime.
func BenchmarkEval(b *testing.B) {
	for _, bc := range []struct{ name, code string }{
		{"small", "out hello\nresult {\"text/plain\":\"42\"}"},
		{"3000 lines", "spam 3000 " + strings.Repeat("y", 15)},
		{"cut 10 MB", "big 10000000"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fakes(b)
			ctx := context.Background()
			sb, err := sandbox.New(ctx, sandbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close(ctx)
			s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			req := sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: bc.code}}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Eval(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
