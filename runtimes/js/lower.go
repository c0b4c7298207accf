package js

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/wasmeval/wasmeval/internal/goja/parser"
)

// Lowering syntax goja does not parse.
//
// goja parses ES2017 and much of later JavaScript, but not `for await`
// loops or async generators (`async function*`, `async *method()`), which
// agents reach for to read streams and paginate. A cell that may use them
// (lowerPattern, a cheap textual test: a false match only costs a
// transform) is passed through esbuild, which rewrites just those two
// features (Supported) into generators and promises, with its helpers
// (__forAwait, __asyncGenerator, ...) at the top, and leaves the rest as
// written; everything else runs as before.
//
// esbuild refuses top-level `return` in code with top-level `await` (it
// takes such code for a module), and a cell may have both, so the cell is
// given to esbuild as the body of a function, on the function's first line
// so that its lines keep their numbers:
//
//	async function __wasmevalCell() {<cell>
//	return await __wasmevalCellEnd();
//	}
//
// (the last statement shows the function ended where the cell did: see
// lowerEnd), and the wrapper's lines are blanked out of the output,
// leaving the helpers and the lowered body at the top level, where
// compileNamed hoists the body's declarations into the session as for any
// cell. Positions come back to the cell through esbuild's source map (the
// TypeScript path's tsMap), with the first line's columns moved back by
// the wrapper's length.
//
// The lowered loops keep their state in var declarations (iter, more,
// temp, error), which at the top of a cell would become globals of the
// session: each loop is put in a block whose let declarations hold them
// instead (scopeLoop). Where the output is not of the shape that expects,
// they stay vars, and two defences remain: esbuild names them apart from
// every name the cell uses and from those lowerReserved lists, so they do
// not overwrite a global of an earlier cell; and each gets an initializer
// (resetLoopState), since a global var keeps its value from one cell to
// the next and a loop would otherwise find the error an earlier cell's
// loop left and throw it again. esbuild's helpers (__forAwait, ...) are
// var declarations too: the prelude makes them non-enumerable globals
// first (web.js), so they stay out of Object.keys(globalThis).

// lowerPattern matches code that may use a `for await` loop or an async
// generator function or method.
var lowerPattern = regexp.MustCompile(`\bfor\s*await\b|\basync\s+function\s*\*|\basync\s*\*`)

// needsLowering reports whether code may need lowering before goja parses
// it.
func needsLowering(code string) bool {
	return (strings.Contains(code, "await") || strings.Contains(code, "*")) && lowerPattern.MatchString(code)
}

const (
	lowerFunc   = "__wasmevalCell"
	lowerPrefix = "async function " + lowerFunc + "() {"
	// lowerEnd is returned on a line of its own at the end of the
	// function's body: finding that line alone in esbuild's output shows
	// that the cell's last line is complete, and that its braces balance
	// (a stray } would have closed the function before it, and `return
	// await` is refused outside a function).
	lowerEnd    = "__wasmevalCellEnd"
	lowerSuffix = "\nreturn await " + lowerEnd + "();\n}\n"
)

// lowerReserved is a statement after the wrapper that names the
// variables the lowered loops would be called: esbuild names its own
// apart from every name the code refers to, and the statement is blanked
// out with the wrapper.
var lowerReserved = func() string {
	var names []string
	for _, base := range []string{"iter", "more", "temp", "error"} {
		names = append(names, base)
		for i := 2; i < 10; i++ {
			names = append(names, fmt.Sprintf("%s%d", base, i))
		}
	}
	return ";void [" + strings.Join(names, ", ") + "];\n"
}()

// lowerCell lowers the `for await` loops and async generators of a cell
// named name (with loader api.LoaderTS, a TypeScript cell, whose types go
// too) and returns the JavaScript and the map of its positions to the
// cell. A syntax error comes back as a codeError at the cell's position.
func lowerCell(code, name string, loader api.Loader, limit int64) (js string, tm *tsMap, cerr *codeError) {
	// esbuild's parser recurses in Go as goja's does: the same guard first.
	if err := checkNesting(code); err != nil {
		return "", nil, &codeError{file: name, src: code, line: 1, col: 1, msg: err.Error()}
	}
	if err := checkCompilerInput(code, limit, "lowers for await loops and async generators"); err != nil {
		return "", nil, &codeError{file: name, src: code, line: 1, col: 1, msg: err.Error(), kind: "RangeError"}
	}
	// Imports and exports inside the wrapper function would be syntax
	// errors: rewrite them first, as compileNamed would (it keeps the
	// lines; an import's own line may change its columns, and an error
	// there shows the rewritten line).
	src := rewriteModuleSyntax(code, false).src
	defer func() {
		if p := recover(); p != nil {
			js, tm = "", nil
			cerr = &codeError{file: name, src: code, line: 1, col: 1, msg: fmt.Sprintf("the compiler that lowers for await and async generators failed on this code: %v", p)}
		}
	}()
	opts := api.TransformOptions{
		Loader:    loader,
		Target:    api.ESNext,
		Supported: map[string]bool{"async-generator": false, "for-await": false},
		Sourcemap: api.SourceMapExternal,
		Charset:   api.CharsetUTF8,
	}
	if loader == api.LoaderTS {
		opts.TsconfigRaw = typeScriptOptions.TsconfigRaw
	}
	opts.Sourcefile = name
	wrapped := lowerPrefix + src + lowerSuffix + lowerReserved
	res := api.Transform(wrapped, opts)
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		ce := &codeError{file: name, src: src, line: 1, col: 1, msg: m.Text}
		if strings.HasPrefix(m.Text, "Top-level return cannot be used") {
			// The cell's own returns are inside the wrapper: this is
			// lowerSuffix's, outside it.
			ce.msg = "Unexpected \"}\": a } closes more than was opened"
		}
		if m.Location != nil {
			// esbuild's column counts bytes from 0.
			ce.line, ce.col = m.Location.Line, m.Location.Column+1
			if ce.line == 1 {
				ce.col = max(1, ce.col-len(lowerPrefix))
			}
			if n := strings.Count(src, "\n") + 1; ce.line > n {
				ce.line, ce.col = n, len(src)-strings.LastIndexByte(src, '\n')
			}
		}
		return "", nil, ce
	}
	out, err := unwrapLowered(string(res.Code))
	if err != nil {
		return "", nil, &codeError{file: name, src: src, line: 1, col: 1, msg: "lowering for await and async generators: " + err.Error()}
	}
	tm, err = newTSMap(out, src, res.Map)
	if err != nil {
		return "", nil, &codeError{file: name, src: src, line: 1, col: 1, msg: "the source map of lowering for await and async generators: " + err.Error()}
	}
	// The wrapper's text came before the cell's on its first line.
	for _, segs := range tm.segs {
		for i := range segs {
			if segs[i].srcLine == 0 {
				segs[i].srcCol = max(0, segs[i].srcCol-len(lowerPrefix))
			}
		}
	}
	resetLoopState(tm)
	return tm.gen, tm, nil
}

// lowerModule lowers the for await loops and async generators of src, a
// module's code after rewriteModuleSyntax, as lowerCell does a cell's: it
// returns the code goja is to parse and, when that is lowered, the map of
// its positions to src. The module's own function wraps the result, so
// esbuild's helpers are the module's locals.
func lowerModule(src, name string, limit int64) (string, *tsMap, *codeError) {
	if !needsLowering(src) {
		return src, nil, nil
	}
	js, tm, cerr := lowerCell(src, name, api.LoaderJS, limit)
	if cerr == nil {
		return js, tm, nil
	}
	// The pattern matched text that is no such syntax: goja's word
	// decides, as for cells (compileRun).
	if _, err := parser.ParseFile(nil, name, modulePrefix+src+"\n})", 0, parser.WithDisableSourceMaps); err == nil {
		return src, nil, nil
	}
	return "", nil, cerr
}

// loweredLoop matches the end of the declarations of a lowered for await
// loop and its condition, in esbuild's words:
//
//	for (var iter = __forAwait(x), more, temp, error; more = !(temp = await iter.next()).done; more = false)
var loweredLoop = regexp.MustCompile(`, ([\w$]+), ([\w$]+), ([\w$]+); ([\w$]+) = !\(([\w$]+) = await ([\w$]+)\.next\(\)\)\.done; ([\w$]+) = false\)`)

// resetLoopState gives the uninitialized state variables of each lowered
// for await loop in tm's code an initializer, so that a loop at the top
// level of a cell (where they are globals of the session) starts from
// none whatever an earlier cell's loop left.
func resetLoopState(tm *tsMap) {
	ms := loweredLoop.FindAllStringSubmatchIndex(tm.gen, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		group := func(k int) string { return tm.gen[m[2*k]:m[2*k+1]] }
		more, temp, iter, errName := group(1), group(2), group(6), group(3)
		if group(4) != more || group(7) != more || group(5) != temp {
			continue
		}
		scope := scopeLoop(tm.gen, m[0], iter, errName)
		// Right after each name, from the last so offsets stay good.
		if scope != nil {
			tm.insertAt(scope[1], " }")
		}
		for _, k := range []int{3, 2, 1} {
			tm.insertAt(m[2*k+1], " = void 0")
		}
		if scope != nil {
			// `for (var iter = ...` becomes `for (    iter = ...`: the
			// names are the block's (let), not the session's.
			b := []byte(tm.gen)
			copy(b[scope[2]:], "    ")
			tm.gen = string(b)
			tm.insertAt(scope[0], "{ let "+iter+", "+more+", "+temp+", "+errName+"; ")
		}
	}
}

// scopeLoop finds, around the lowered for await loop whose declarations
// end at off, where to open a block before its `try {` and close it after
// its last `}`, and where its `var ` is, so that its state variables can
// be the block's own (esbuild's shape: try { for (var iter = ...) {...} }
// catch (temp) { error = [temp]; } finally { try { ... } finally { if
// (error) throw error[0]; } }). It returns nil when the text around is not
// that shape; the variables then stay global, reset by their
// initializers.
func scopeLoop(gen string, off int, iter, errName string) []int {
	head := "for (var " + iter + " = __forAwait("
	forAt := strings.LastIndex(gen[:off], head)
	if forAt < 0 {
		return nil
	}
	tryAt := strings.LastIndex(gen[:forAt], "try {")
	if tryAt < 0 || strings.TrimSpace(gen[tryAt+len("try {"):forAt]) != "" {
		return nil
	}
	tail := regexp.MustCompile(`throw ` + regexp.QuoteMeta(errName) + `\[0\];\n[ \t]*\}\n[ \t]*\}`)
	end := tail.FindStringIndex(gen[off:])
	if end == nil {
		return nil
	}
	return []int{tryAt, off + end[1], forAt + len("for (")}
}

// insertAt inserts text (ASCII, no line break) into tm's generated code
// at byte offset off, moving the mappings after it on its line.
func (tm *tsMap) insertAt(off int, text string) {
	line := lineOf(tm.genLines, off)
	col := utf16Len(tm.gen[tm.genLines[line]:off])
	tm.gen = tm.gen[:off] + text + tm.gen[off:]
	for i := line + 1; i < len(tm.genLines); i++ {
		tm.genLines[i] += len(text)
	}
	if line < len(tm.segs) {
		for i := range tm.segs[line] {
			if tm.segs[line][i].genCol >= col {
				tm.segs[line][i].genCol += len(text)
			}
		}
	}
}

// unwrapLowered blanks the wrapper function's first and last lines, and
// what follows, out of esbuild's output, keeping every other byte where it
// is (the source map's positions stay right).
func unwrapLowered(out string) (string, error) {
	head := "\n" + lowerPrefix + "\n"
	start := strings.Index("\n"+out, head)
	if start < 0 {
		return "", fmt.Errorf("no %s in the output", lowerFunc)
	}
	bodyStart := start + len(head) - 1 // in out
	tail := "\n  return await " + lowerEnd + "();\n}\n"
	end := strings.LastIndex(out, tail)
	// What follows the function must be the reserved names' statement
	// alone: code after a stray } must not be blanked away.
	rest := ""
	if end >= 0 {
		rest = strings.TrimLeft(out[end+len(tail):], "; \n")
	}
	if end < bodyStart-1 || strings.Count(out, lowerEnd) != 1 ||
		!strings.HasPrefix(rest, "void [iter") || strings.Count(rest, ";") != 1 || !strings.HasSuffix(strings.TrimSpace(rest), "];") {
		return "", fmt.Errorf("the cell does not end where it should: a } closes more than was opened, or its last line is incomplete")
	}
	b := []byte(out)
	blankBytes(b[start : bodyStart-1])
	blankBytes(b[end+1:])
	return string(b), nil
}

// blankBytes replaces b's bytes with spaces, keeping its line breaks.
func blankBytes(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}

// checkCompilerInput refuses code longer than esbuild (which strips
// TypeScript's types and lowers for await loops and async generators) is
// given for a session whose memory limit is limit: a 2,048th of it, at
// least 16 KiB and at most 256 KiB (128 KiB at the default limit).
// esbuild parses and prints in native Go code where no interrupt or guard
// lands, in memory of up to about 2 KB a byte of code (nested arrow
// functions; 20-100 for ordinary code) and, for some errors, time
// quadratic in the code: 16,000 redeclarations of one name (160 KB)
// took 3.8 s, and 368 KB of them 9-13 s. what says what the compiler
// does, for the error.
func checkCompilerInput(code string, limit int64, what string) error {
	most := min(256<<10, max(16<<10, limit/2048))
	if int64(len(code)) <= most {
		return nil
	}
	return fmt.Errorf("memory limit: this code is %d KiB, and the compiler that %s takes at most %d KiB at the session's memory limit of %d MiB (it runs in native code that cannot be stopped); split it into smaller cells or modules", (len(code)+1023)>>10, what, most>>10, limit>>20)
}
