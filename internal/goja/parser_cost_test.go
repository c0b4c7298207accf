package goja

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja/parser"
)

// denseShapes are the densest code of each kind: what parsing and compiling
// them takes per byte is the most the parser's cost hook must cover
// (parser/cost.go).
func denseShapes(n int) map[string]string {
	return map[string]string{
		"numbers":       "x=[" + strings.Repeat("1,", n/2) + "1]",
		"nested arrays": "x=" + strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		"holes":         "x=[" + strings.Repeat(",", n) + "]",
		"object":        "x={" + strings.Repeat("a:1,", n/4) + "a:1}",
		"empty objects": "x=[" + strings.Repeat("{},", n/3) + "]",
		"methods":       "x={" + strings.Repeat("a(){},", n/6) + "}",
		"classes":       "x=[" + strings.Repeat("class{},", n/8) + "]",
		"sequence":      "a," + strings.Repeat("a,", n/2) + "a",
		"arrow chain":   "x=" + strings.Repeat("x=>", n/3) + "x",
		"arrows":        "x=[" + strings.Repeat("a=>a,", n/5) + "]",
		"functions":     "x=[" + strings.Repeat("function(){},", n/13) + "]",
		"template":      "`" + strings.Repeat("${a}", n/4) + "`",
		"templates":     "x=[" + strings.Repeat("``,", n/3) + "]",
		"regexps":       "x=[" + strings.Repeat("/a/,", n/4) + "]",
		"negations":     "x=" + strings.Repeat("-1", n/2),
		"nots":          "x=" + strings.Repeat("!", n) + "1",
		"calls":         "a" + strings.Repeat("()", n/2),
		"members":       "a" + strings.Repeat(".a", n/2),
		"indexes":       "a" + strings.Repeat("[0]", n/3),
		"blocks":        strings.Repeat("{let a}", n/7),
		"statements":    strings.Repeat(";", n),
		"strings":       "x=[" + strings.Repeat("'',", n/3) + "]",
		"long string":   "x='" + strings.Repeat("a", n) + "'",
		"long escapes":  "x='" + strings.Repeat("\\u00e9", n/6) + "'",
		"wide string":   "x='" + strings.Repeat("\u00e9", n/2) + "'",
		"long template": "x=`" + strings.Repeat("\u00e9", n/2) + "`",
		"long name":     "x" + strings.Repeat("a", n),
		"long number":   "x=" + strings.Repeat("1", n),
		"long comment":  "/*" + strings.Repeat("\u00e9", n/2) + "*/",
	}
}

// parseCompileBytes is what parsing and compiling src allocate.
func parseCompileBytes(t testing.TB, src string) int64 {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	prog, err := parser.ParseFile(nil, "x", src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileAST(prog, false)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(p)
	return int64(m1.TotalAlloc - m0.TotalAlloc)
}

// TestParseCostCoversDenseCode checks that the parser's estimate covers
// what parsing and compiling the densest code takes: eval reserved 32 bytes
// a byte, and a literal of a million numbers took the host to about three
// times a session's limit before its monitor stopped it.
func TestParseCostCoversDenseCode(t *testing.T) {
	for name, src := range denseShapes(1 << 14) {
		t.Run(name, func(t *testing.T) {
			got := parseCompileBytes(t, src)
			est := parser.Cost(src)
			t.Logf("%d bytes: took %.0f bytes a byte, estimated %.0f", len(src), float64(got)/float64(len(src)), float64(est)/float64(len(src)))
			if est < got {
				t.Errorf("estimate %d bytes, parsing and compiling took %d", est, got)
			}
		})
	}
}

// TestParseCostOfOrdinaryCode checks that the estimate of ordinary code
// (the prelude) is not far above what it takes: eval of a library must not
// be refused for want of a fraction of its estimate.
func TestParseCostOfOrdinaryCode(t *testing.T) {
	files, _ := filepath.Glob("../../prelude/js/*.js")
	if len(files) == 0 {
		t.Skip("no prelude files")
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// As a function body each: the prelude's files return.
		src.WriteString("(function(){\n" + string(b) + "\n});\n")
	}
	got := parseCompileBytes(t, src.String())
	est := parser.Cost(src.String())
	t.Logf("%d bytes: took %.0f bytes a byte, estimated %.0f", src.Len(), float64(got)/float64(src.Len()), float64(est)/float64(src.Len()))
	if est < got || est > 6*got {
		t.Errorf("estimate %d bytes, parsing and compiling took %d", est, got)
	}
}
