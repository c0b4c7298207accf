package js

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/wasmeval/wasmeval/internal/goja/file"
)

// TypeScript cells.
//
// A TypeScript cell is a JavaScript cell with its types stripped. esbuild's
// Transform (loader ts) strips them and leaves the syntax as written
// (target esnext): a ts cell runs what the same js cell would, top-level
// await and return included, and goes through compileNamed like one, so
// its declarations are hoisted into the session's globals and ts and js
// cells share one state. Imports are kept as written (verbatimModuleSyntax):
// in a notebook an import that this cell does not use is there for the
// next one; `import type` is still dropped.
//
// Positions: esbuild reprints the code, so every position in the parsed
// output is moved to the TypeScript source through the source map esbuild
// returns, and the program's file is the TypeScript text. Stack traces,
// error.stack, compile errors and syntax errors then give the TypeScript
// line and column, under the cell's own name. (goja's own source-map
// support would do the lookup at run time, but it turns the file name into
// a URL, and "<cell-2>" would show as "%3Ccell-2%3E".)

// typeScriptOptions are esbuild's: strip types, keep the syntax.
var typeScriptOptions = api.TransformOptions{
	Loader:      api.LoaderTS,
	Target:      api.ESNext,
	Sourcemap:   api.SourceMapExternal,
	Charset:     api.CharsetUTF8,
	TsconfigRaw: `{"compilerOptions": {"verbatimModuleSyntax": true}}`,
}

type typeScriptKey struct{}

// WithTypeScript returns a context under which Run takes the cell for
// TypeScript (on) or JavaScript (off): a TypeScript cell has its types
// stripped and runs as a JavaScript cell in the same VM, sharing the
// session's globals with JavaScript cells; its errors and stack traces
// give positions in the TypeScript source. The sandbox sets it for every
// cell it runs here ("ts" on, "js" off), so that a cell nested in another
// does not inherit the other's language.
func WithTypeScript(ctx context.Context, on bool) context.Context {
	return context.WithValue(ctx, typeScriptKey{}, on)
}

func isTypeScript(ctx context.Context) bool {
	on, _ := ctx.Value(typeScriptKey{}).(bool)
	return on
}

// compileRun compiles the code of the cell Run is about to run: it counts
// the cell and names it <cell-N>, as Python names its cells, and strips
// the types of a TypeScript cell first.
func (in *instance) compileRun(ctx context.Context, code string) (*compiledCell, *codeError) {
	in.cellNo++
	name := fmt.Sprintf("<cell-%d>", in.cellNo)
	ts := isTypeScript(ctx)
	if needsLowering(code) { // for await, async generators: lower.go
		loader := api.LoaderJS
		if ts {
			loader = api.LoaderTS
		}
		js, tm, cerr := lowerCell(code, name, loader, in.memLimit)
		if cerr == nil {
			return compileNamed(js, name, tm, in.memLimit)
		}
		if ts {
			return nil, cerr
		}
		// The pattern matched text that is no such syntax (in a string,
		// say) in code esbuild does not take and goja may: goja's word
		// decides, and when it refuses too, esbuild's error is the one
		// about the syntax the cell does use.
		if cell, gerr := compileNamed(code, name, nil, in.memLimit); gerr == nil {
			return cell, nil
		}
		return nil, cerr
	}
	if !ts {
		return compileNamed(code, name, nil, in.memLimit)
	}
	js, tm, cerr := transformTypeScript(code, name, in.memLimit)
	if cerr != nil {
		return nil, cerr
	}
	return compileNamed(js, name, tm, in.memLimit)
}

// transformTypeScript strips the types of a TypeScript cell named name and
// returns the JavaScript and the map of its positions to the TypeScript
// source. A syntax error comes back as a codeError at its TypeScript
// position.
func transformTypeScript(code, name string, limit int64) (js string, tm *tsMap, cerr *codeError) {
	// esbuild's parser recurses in Go as goja's does: the same guard first.
	if err := checkNesting(code); err != nil {
		return "", nil, &codeError{file: name, src: code, line: 1, col: 1, msg: err.Error()}
	}
	if err := checkCompilerInput(code, limit, "strips TypeScript's types"); err != nil {
		return "", nil, &codeError{file: name, src: code, line: 1, col: 1, msg: err.Error(), kind: "RangeError"}
	}
	defer func() {
		if p := recover(); p != nil {
			js, tm = "", nil
			cerr = &codeError{file: name, src: code, line: 1, col: 1, msg: fmt.Sprintf("the TypeScript compiler failed on this code: %v", p)}
		}
	}()
	opts := typeScriptOptions
	opts.Sourcefile = name
	res := api.Transform(code, opts)
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		ce := &codeError{file: name, src: code, line: 1, col: 1, msg: m.Text}
		if m.Location != nil {
			// esbuild's column counts bytes from 0.
			ce.line, ce.col = m.Location.Line, m.Location.Column+1
		}
		return "", nil, ce
	}
	tm, err := newTSMap(string(res.Code), code, res.Map)
	if err != nil {
		return "", nil, &codeError{file: name, src: code, line: 1, col: 1, msg: "the TypeScript compiler's source map: " + err.Error()}
	}
	return string(res.Code), tm, nil
}

// tsMap maps positions in the JavaScript that esbuild made of a TypeScript
// cell to the TypeScript source.
type tsMap struct {
	gen, source        string
	genLines, srcLines []int // byte offsets of the lines' starts
	// segs are the source map's segments, per generated line, in the
	// order of their columns.
	segs [][]segment
}

// segment is one mapping of a source map; columns count UTF-16 code units
// from 0, as source maps do.
type segment struct {
	genCol, srcLine, srcCol int
}

// newTSMap decodes a version 3 source map of gen, made from source. Its
// segments are decoded here rather than with a source map library: a
// position inside a segment (a goja node often starts between two of
// esbuild's mappings) needs the segment's generated column, which those
// libraries keep to themselves.
func newTSMap(gen, source string, sourceMap []byte) (*tsMap, error) {
	var sm struct {
		Version  int    `json:"version"`
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(sourceMap, &sm); err != nil {
		return nil, err
	}
	if sm.Version != 3 {
		return nil, fmt.Errorf("version %d, not 3", sm.Version)
	}
	tm := &tsMap{gen: gen, source: source, genLines: lineStarts(gen), srcLines: lineStarts(source)}
	var srcIdx, srcLine, srcCol, nameIdx int
	for _, line := range strings.Split(sm.Mappings, ";") {
		var segs []segment
		genCol := 0
		for _, s := range strings.Split(line, ",") {
			if s == "" {
				continue
			}
			fields, err := decodeVLQ(s)
			if err != nil {
				return nil, err
			}
			genCol += fields[0]
			if len(fields) < 4 {
				continue // a generated column with no source
			}
			srcIdx += fields[1]
			srcLine += fields[2]
			srcCol += fields[3]
			if len(fields) > 4 {
				nameIdx += fields[4]
			}
			if srcIdx == 0 && srcLine >= 0 && srcCol >= 0 {
				segs = append(segs, segment{genCol: genCol, srcLine: srcLine, srcCol: srcCol})
			}
		}
		sort.SliceStable(segs, func(i, j int) bool { return segs[i].genCol < segs[j].genCol })
		tm.segs = append(tm.segs, segs)
	}
	return tm, nil
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeVLQ decodes one segment's base64 VLQ fields.
func decodeVLQ(s string) ([]int, error) {
	var out []int
	value, shift := 0, 0
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return nil, fmt.Errorf("bad mapping character %q", s[i])
		}
		value += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			if shift > 30 {
				return nil, fmt.Errorf("mapping value too large")
			}
			continue
		}
		n := value >> 1
		if value&1 != 0 {
			n = -n
		}
		out = append(out, n)
		value, shift = 0, 0
	}
	if shift != 0 {
		return nil, fmt.Errorf("truncated mapping")
	}
	return out, nil
}

func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 0-based line of offset in a text with these line
// starts.
func lineOf(starts []int, offset int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > offset }) - 1
}

// lineText returns line i of s, without its line break.
func lineText(s string, starts []int, i int) string {
	end := len(s)
	if i+1 < len(starts) {
		end = starts[i+1] - 1
	}
	return strings.TrimSuffix(s[starts[i]:end], "\r")
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // an invalid byte is U+FFFD: one unit
	}
	return n
}

// utf16Offset returns the byte offset in s of the UTF-16 column col,
// clamped to the length of s.
func utf16Offset(s string, col int) int {
	n := 0
	for i, r := range s {
		if n >= col {
			return i
		}
		n += utf16.RuneLen(r)
	}
	return len(s)
}

// offset maps a byte offset in the generated code to one in the source.
// A position between mappings keeps its distance from the mapping before
// it, within the source line.
func (tm *tsMap) offset(genOff int) int {
	genOff = min(max(genOff, 0), len(tm.gen))
	line := lineOf(tm.genLines, genOff)
	col := utf16Len(tm.gen[tm.genLines[line]:genOff])
	var seg segment
	found := false
	delta := 0
	if line < len(tm.segs) {
		segs := tm.segs[line]
		i := sort.Search(len(segs), func(i int) bool { return segs[i].genCol > col }) - 1
		switch {
		case i >= 0:
			seg, found, delta = segs[i], true, col-segs[i].genCol
		case len(segs) > 0:
			seg, found = segs[0], true
		}
	}
	for l := min(line, len(tm.segs)) - 1; !found && l >= 0; l-- {
		if n := len(tm.segs[l]); n > 0 {
			seg, found = tm.segs[l][n-1], true
		}
	}
	if !found || seg.srcLine >= len(tm.srcLines) {
		return 0
	}
	text := lineText(tm.source, tm.srcLines, seg.srcLine)
	return tm.srcLines[seg.srcLine] + utf16Offset(text, seg.srcCol+delta)
}

// position maps a 1-based line and byte column of the generated code to
// the source's.
func (tm *tsMap) position(line, col int) (int, int) {
	line = min(max(line, 1), len(tm.genLines))
	off := tm.genLines[line-1] + max(col, 1) - 1
	src := tm.offset(off)
	sl := lineOf(tm.srcLines, src)
	return sl + 1, src - tm.srcLines[sl] + 1
}

// mapError moves a parse error in the generated code to the source.
func (tm *tsMap) mapError(ce *codeError) *codeError {
	if ce == nil {
		return nil
	}
	out := *ce
	out.line, out.col = tm.position(ce.line, ce.col)
	out.src = tm.source
	return &out
}

// remap moves every position of a tree parsed from the generated code to
// the source, and returns the source's file for the program.
func (tm *tsMap) remap(root any, name string) *file.File {
	mapPositions(root, func(idx int64) int64 {
		// An Idx is a byte offset plus the file's base, 1.
		return int64(tm.offset(int(idx)-1)) + 1
	})
	return file.NewFile(name, tm.source, 1)
}
