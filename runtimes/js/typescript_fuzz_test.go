package js

import "testing"

var tsFuzzSeeds = []string{
	"const x: number = 1\nx", "interface A { a: number }\nconst f = (a: A): number => a.a\nf({a: 1})",
	"enum E { A, B = 'b' }", "let x: = 3", "const é: string = 'ü😀'\nthrow new Error(é)",
	"class C<T> { constructor(private v: T) {} }", "await null\nreturn 1", "type T = {", "x!.y as any",
	"import type { A } from './a'\nimport b from 'b'", "namespace N { export const n = 1 }", "<T,>(a: T) => a",
}

// FuzzTypeScriptCell: no TypeScript cell, however broken, may panic the
// host, and every position it maps lies inside its source.
func FuzzTypeScriptCell(f *testing.F) {
	for _, s := range tsFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		js, tm, cerr := transformTypeScript(code, "<cell-1>", DefaultMemoryLimit)
		if cerr != nil {
			cerr.render()
			return
		}
		for off := 0; off <= len(js); off += 1 + len(js)/64 {
			if got := tm.offset(off); got < 0 || got > len(code) {
				t.Fatalf("offset(%d) = %d, outside the %d-byte source", off, got, len(code))
			}
		}
		if _, cerr := compileNamed(js, "<cell-1>", tm, 0); cerr != nil {
			cerr.render()
		}
	})
}

// FuzzSourceMap: a source map's mappings, however broken, decode to an
// error or to positions inside the source.
func FuzzSourceMap(f *testing.F) {
	f.Add("AAAA,MAAM,IAAY;AAClB;", "const x = 1;\nx;\n", "const x: number = 1\nx")
	f.Add("AAAA;;;gBAAgB,IAAI", "a\nb\nc\nd", "")
	f.Add("+/+/+/+/+/+/+/", "x", "y")
	f.Fuzz(func(t *testing.T, mappings, gen, source string) {
		tm, err := newTSMap(gen, source, []byte(`{"version":3,"mappings":`+mappingsJSON(mappings)+`}`))
		if err != nil {
			return
		}
		for off := 0; off <= len(gen); off++ {
			if got := tm.offset(off); got < 0 || got > len(source) {
				t.Fatalf("offset(%d) = %d, outside the %d-byte source", off, got, len(source))
			}
		}
		tm.position(1, 1)
		tm.position(1<<20, 1<<20)
	})
}

func mappingsJSON(s string) string {
	b := []byte{'"'}
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			continue // the mappings alphabet is ASCII; drop what JSON would need escaped
		}
		b = append(b, c)
	}
	return string(append(b, '"'))
}
