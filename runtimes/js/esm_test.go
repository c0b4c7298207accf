package js

import (
	"strings"
	"testing"
)

func TestRewriteModuleSyntax(t *testing.T) {
	tests := []struct {
		name, src, want string
		module          bool
		esm             bool
	}{
		{name: "nothing to do", src: "const a = 1", want: "const a = 1"},
		{name: "default", src: "import d from './x.js'", want: `const { default: d } = __wasmeval.import("./x.js");`, esm: true},
		{name: "named", src: "import { a, b as c, 'd e' as f } from \"./x.js\";\nuse(a)",
			want: "const { a, b: c, 'd e': f } = __wasmeval.import(\"./x.js\");\nuse(a)", esm: true},
		{name: "default and named", src: "import d, { a } from './x'", want: `const { default: d, a } = __wasmeval.import("./x");`, esm: true},
		{name: "namespace", src: "import * as ns from './x'", want: `const ns = __wasmeval.import("./x");`, esm: true},
		{name: "default and namespace", src: "import d, * as ns from './x'", want: `const ns = __wasmeval.import("./x"), d = ns.default;`, esm: true},
		{name: "side effect", src: "import './x'\nf()", want: "__wasmeval.import(\"./x\");\nf()", esm: true},
		{name: "attributes", src: "import d from './d.json' with { type: 'json' };", want: `const { default: d } = __wasmeval.import("./d.json");`, esm: true},
		{name: "lines are kept", src: "import {\n  a,\n  b\n} from './x'\nthrow 1", want: "const { a, b } = __wasmeval.import(\"./x\");\n\n\n\nthrow 1", esm: true},
		{name: "dynamic", src: "const m = await import('./x')", want: "const m = await __wasmeval.dynamicImport('./x')"},
		{name: "import.meta", src: "const u = import.meta.url; f(import . meta)", want: "const u = __wasmeval.meta.url; f(__wasmeval.meta)"},
		{name: "not keywords", src: "obj.import(1); x = { import: 1, export: 2 }; y.export; `import ${a} from 'b'`; '/* import */'; // import x from 'y'\n/import/.test(s)",
			want: "obj.import(1); x = { import: 1, export: 2 }; y.export; `import ${a} from 'b'`; '/* import */'; // import x from 'y'\n/import/.test(s)"},
		{name: "nested template", src: "`${ `${ {a: 1}.a }` }`; import x from './y'", want: "`${ `${ {a: 1}.a }` }`; const { default: x } = __wasmeval.import(\"./y\");", esm: true},
		{name: "regex with quote", src: "const r = /'/; import x from './y'", want: "const r = /'/; const { default: x } = __wasmeval.import(\"./y\");", esm: true},
		{name: "division is not a regex", src: "const q = a / b; import x from './y' // /", want: "const q = a / b; const { default: x } = __wasmeval.import(\"./y\"); // /", esm: true},
		{name: "cell export const", src: "export const a = 1", want: "       const a = 1", esm: true},
		{name: "cell export default", src: "export default 1 + 1", want: "               1 + 1", esm: true},
		{name: "cell export list", src: "export { a as b };\nx", want: "                  \nx", esm: true},
		{name: "module export default expression", src: "export default 42", module: true, want: "__wasmeval.exports.default = 42", esm: true},
		{name: "module export default function", src: "export default function f() {}", module: true, want: "               function f() {}", esm: true},
		{name: "module export star", src: "export * from './y'", module: true,
			want: `__wasmeval.reexport(__wasmeval.exports, __wasmeval.import("./y"), null);`, esm: true},
		{name: "module export named from", src: "export { a as b, c } from './y'", module: true,
			want: `__wasmeval.reexport(__wasmeval.exports, __wasmeval.import("./y"), [["a", "b"], ["c", "c"]]);`, esm: true},
		{name: "module export namespace from", src: "export * as ns from './y'", module: true,
			want: `__wasmeval.reexport(__wasmeval.exports, __wasmeval.import("./y"), [["*", "ns"]]);`, esm: true},
		{name: "unterminated", src: "const s = 'abc\nimport x from './y'", want: "const s = 'abc\nimport x from './y'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := rewriteModuleSyntax(tt.src, tt.module)
			if ms.src != tt.want || ms.esm != tt.esm {
				t.Errorf("rewrite(%q)\n got %q esm=%v\nwant %q esm=%v", tt.src, ms.src, ms.esm, tt.want, tt.esm)
			}
			if strings.Count(ms.src, "\n") != strings.Count(tt.src, "\n") && ms.src != tt.src {
				t.Errorf("line count changed: %q", ms.src)
			}
		})
	}
}

func TestModuleExportsRecorded(t *testing.T) {
	ms := rewriteModuleSyntax("let a = 1\nexport const { b, c: [d] } = o\nexport function f() {}\nexport { a as e }\nexport default class K {}", true)
	if len(ms.exportDecls) != 2 || len(ms.exportNames) != 1 || len(ms.exportDefaultDecl) != 1 {
		t.Fatalf("recorded %+v", ms)
	}
	for _, off := range ms.exportDecls {
		if w := ms.src[off : off+5]; w != "const" && w != "funct" {
			t.Errorf("declaration offset %d points at %q", off, w)
		}
	}
}

var fuzzSeeds = []string{
	"1 + 1", "let a = 1; await a", "import x, { y } from './z'; export default x", "`${`${1}`}`",
	"return 5", "class A { static #p = 1 }", "/[/]/.test(s)", "export * as q from 'r'", "import(", "export {",
	"a\n/b/g", "x = {import: 1}", "'unterminated", "/* open", "`open ${", "for await (const x of y) {}",
}

// FuzzCompileCell: no cell, however broken, may panic the host.
func FuzzCompileCell(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		compileCell(code)
	})
}

// FuzzCompileModule: nor may a module file.
func FuzzCompileModule(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		compileModule("/root/m.js", code, DefaultMemoryLimit)
	})
}
