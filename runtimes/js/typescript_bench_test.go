package js

import "testing"

// BenchmarkTypeScriptCell is the cost a ts cell adds to a js cell's
// compile: esbuild's transform and the mapping of positions.
func BenchmarkTypeScriptCell(b *testing.B) {
	const code = "interface Point { x: number; y: number }\n" +
		"const norm = (p: Point): number => Math.hypot(p.x, p.y)\n" +
		"const pts: Point[] = [{ x: 3, y: 4 }, { x: 6, y: 8 }]\n" +
		"pts.map(norm)"
	b.ReportAllocs()
	for b.Loop() {
		js, tm, cerr := transformTypeScript(code, "<cell-1>", DefaultMemoryLimit)
		if cerr != nil {
			b.Fatal(cerr)
		}
		if _, cerr := compileNamed(js, "<cell-1>", tm, 0); cerr != nil {
			b.Fatal(cerr)
		}
	}
}
