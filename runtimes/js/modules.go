package js

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/file"
	"github.com/wasmeval/wasmeval/internal/goja/parser"
)

// require and import load files inside the session root and nothing else:
// every path goes through the instance's os.Root, which refuses `..` and
// symbolic links that lead outside it. A bare specifier names a built-in
// module (node.go) or a package in a node_modules folder between the
// requiring file and the root (npm.go).
//
// A module is cached with the modification time and size of its file and
// loaded again when either changes, so that a cell sees the file as it is
// now.

// moduleExtensions are tried, in order, after the specifier as written.
var moduleExtensions = []string{".js", ".json", ".mjs", ".cjs"}

const modulePrefix = "(function (exports, require, module, __filename, __dirname, __wasmeval) {"

type moduleRecord struct {
	module  *goja.Object
	modTime time.Time
	size    int64
}

// rethrow continues, in JavaScript, an error that a call from a native
// function into JavaScript returned. Only values goja recovers may be
// panicked with: anything else would take the host down.
func (in *instance) rethrow(err error) {
	ex, ie, so := gojaError(err)
	switch {
	case ie != nil:
		panic(ie)
	case so != nil:
		panic(so)
	case ex != nil:
		panic(ex)
	}
	panic(in.vm.NewGoError(err))
}

// requireError throws a JavaScript Error with Node's code for a module that
// cannot be found.
func (in *instance) requireError(code, format string, args ...any) {
	obj := in.vm.NewError("Error", fmt.Sprintf(format, args...))
	setOwn(obj, "code", in.vm.ToValue(code))
	panic(obj)
}

// requireFunc returns the require function of code in dir.
func (in *instance) requireFunc(dir string) *goja.Object {
	req := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return in.require(dir, call.Argument(0))
	}).(*goja.Object)
	_ = req.Set("resolve", func(call goja.FunctionCall) goja.Value {
		spec := in.specifier(call.Argument(0))
		if name, ok := builtinName(spec); ok {
			in.checkBuiltin(spec, name)
			return in.vm.ToValue(spec)
		}
		abs, _ := in.resolve(dir, spec, requireConditions)
		return in.vm.ToValue(abs)
	})
	_ = req.Set("cache", in.vm.NewObject())
	return req
}

// helpersFor returns the __wasmeval object of code in dir whose exports
// object is exports: a cell's.
func (in *instance) helpersFor(dir string, exports goja.Value) goja.Value {
	return in.helpersForFile(path.Join(dir, "<cell>"), exports)
}

// helpersForFile returns the __wasmeval object of the file filename.
func (in *instance) helpersForFile(filename string, exports goja.Value) goja.Value {
	dir := path.Dir(filename)
	imp := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return in.load(dir, call.Argument(0), importConditions)
	})
	meta := in.vm.NewObject()
	_ = meta.Set("url", (&url.URL{Scheme: "file", Path: filename}).String())
	_ = meta.Set("filename", filename)
	_ = meta.Set("dirname", dir)
	_ = meta.Set("resolve", func(call goja.FunctionCall) goja.Value {
		spec := in.specifier(call.Argument(0))
		if _, ok := builtinName(spec); ok {
			return in.vm.ToValue(spec)
		}
		abs, _ := in.resolve(dir, spec, importConditions)
		return in.vm.ToValue((&url.URL{Scheme: "file", Path: abs}).String())
	})
	v, err := in.hooks.helpers(goja.Undefined(), imp, exports, meta)
	if err != nil {
		in.rethrow(err)
	}
	return v
}

// specifier checks require's argument and returns it as a string.
func (in *instance) specifier(specV goja.Value) string {
	if goja.IsUndefined(specV) || goja.IsNull(specV) {
		in.requireError("ERR_INVALID_ARG_TYPE", `The "id" argument must be of type string. Received %s`, specV)
	}
	spec := specV.String()
	if spec == "" {
		in.requireError("ERR_INVALID_ARG_VALUE", "The argument 'id' must be a non-empty string. Received ''")
	}
	return spec
}

// resolve finds the file a specifier names, relative to dir: a path, or a
// package in node_modules (with the export conditions given). It returns
// the absolute path and the path relative to the root.
func (in *instance) resolve(dir, spec string, conds []string) (abs, rel string) {
	relative := spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") ||
		strings.HasPrefix(spec, "/")
	if in.root == nil {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': this session has no root directory", spec)
	}
	if !relative {
		return in.resolvePackage(dir, spec, conds)
	}
	p := spec
	if !strings.HasPrefix(p, "/") {
		p = path.Join(dir, p)
	}
	p = path.Clean(p)
	r, ok := in.relToRoot(p)
	if !ok {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': %s is outside the session root %s", spec, p, in.rootPath)
	}
	if rel, found := in.resolveFile(spec, r); found {
		return path.Join(in.rootPath, rel), rel
	}
	in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s' (looked for %s in the session root)", spec, p)
	return "", ""
}

// relToRoot returns the root-relative, slash-separated form of the clean
// absolute path p, if p is the root or inside it.
func (in *instance) relToRoot(p string) (string, bool) {
	r, err := filepath.Rel(in.rootPath, filepath.FromSlash(p))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// resolveFile finds the file that the root-relative path r names, Node's
// LOAD_AS_FILE then LOAD_AS_DIRECTORY: r itself, r with an extension, the
// file package.json's main names, r/index with an extension. found is false
// when none exists; another error (a link out of the root) throws.
func (in *instance) resolveFile(spec, r string) (rel string, found bool) {
	var firstErr error
	try := func(c string) bool {
		st, err := in.root.Stat(c)
		if err == nil && st.Mode().IsRegular() {
			return true
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) && firstErr == nil {
			firstErr = err
			var pe *fs.PathError
			if errors.As(err, &pe) {
				firstErr = pe.Err
			}
		}
		return false
	}
	candidates := []string{r}
	for _, ext := range moduleExtensions {
		candidates = append(candidates, r+ext)
	}
	for _, c := range candidates {
		if try(c) {
			return c, true
		}
	}
	if main := in.packageMain(r); main != "" {
		m := path.Join(r, main)
		if m == r || strings.HasPrefix(m, r+"/") {
			for _, c := range append([]string{m}, withExtensions(m)...) {
				if try(c) {
					return c, true
				}
			}
			for _, ext := range moduleExtensions {
				if c := path.Join(m, "index"+ext); try(c) {
					return c, true
				}
			}
		}
	}
	for _, ext := range moduleExtensions {
		if c := path.Join(r, "index"+ext); try(c) {
			return c, true
		}
	}
	if firstErr != nil {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': %v", spec, firstErr)
	}
	return "", false
}

func withExtensions(p string) []string {
	out := make([]string, len(moduleExtensions))
	for i, ext := range moduleExtensions {
		out[i] = p + ext
	}
	return out
}

// require loads a module with require's export conditions and returns its
// exports.
func (in *instance) require(dir string, specV goja.Value) goja.Value {
	return in.load(dir, specV, requireConditions)
}

// load loads a module (a built-in one, a file or a package's) and returns
// its exports.
func (in *instance) load(dir string, specV goja.Value, conds []string) goja.Value {
	spec := in.specifier(specV)
	if name, ok := builtinName(spec); ok {
		return in.builtin(spec, name)
	}
	abs, rel := in.resolve(dir, spec, conds)
	st, err := in.root.Stat(rel)
	if err != nil {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': %v", specV, err)
	}
	if rec, ok := in.modules[abs]; ok && rec.modTime.Equal(st.ModTime()) && rec.size == st.Size() {
		return rec.module.Get("exports")
	}
	if st.Size() > in.memLimit/4 {
		in.requireError("ERR_FS_FILE_TOO_LARGE", "Cannot load '%s': the file is %d bytes, too large for the session's memory limit", specV, st.Size())
	}
	data, err := in.root.ReadFile(rel)
	if err != nil {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': %v", specV, err)
	}
	vm := in.vm
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", abs)
	_ = module.Set("filename", abs)
	_ = module.Set("path", path.Dir(abs))
	_ = module.Set("loaded", false)
	rec := &moduleRecord{module: module, modTime: st.ModTime(), size: st.Size()}
	in.modules[abs] = rec
	ok := false
	defer func() {
		if !ok {
			delete(in.modules, abs)
		}
	}()

	if strings.HasSuffix(abs, ".json") {
		v, err := in.hooks.jsonParse(goja.Undefined(), vm.ToValue(string(data)))
		if err != nil {
			if ex, _, _ := gojaError(err); ex != nil {
				if obj, isObj := ex.Value().(*goja.Object); isObj {
					_ = obj.Set("message", abs+": "+obj.Get("message").String())
				}
			}
			in.rethrow(err)
		}
		_ = module.Set("exports", v)
	} else {
		fn, cerr := compileModule(abs, string(data), in.memLimit, in.parseCost())
		if cerr != nil {
			panic(vm.NewError("SyntaxError", fmt.Sprintf("%s (%s:%d:%d)", cerr.msg, abs, cerr.line, cerr.col)))
		}
		v, err := vm.RunProgram(fn)
		if err != nil {
			in.rethrow(err)
		}
		call, _ := goja.AssertFunction(v)
		dirname := path.Dir(abs)
		_, err = call(exports, exports, in.requireFunc(dirname), module, vm.ToValue(abs), vm.ToValue(dirname),
			in.helpersForFile(abs, exports))
		if err != nil {
			in.rethrow(err)
		}
	}
	_ = module.Set("loaded", true)
	ok = true
	return module.Get("exports")
}

// compileModule compiles a file as the function that runs it, Node's
// CommonJS wrapper:
//
//	(function (exports, require, module, __filename, __dirname, __wasmeval) {<file>
//	})
//
// An ES module (one with import or export declarations, rewritten by
// rewriteModuleSyntax) is strict, and gets a last statement that defines a
// getter on exports for each of its exported names. Positions are shifted
// back by the wrapper's length, so stacks show the file's own lines and
// columns.
func compileModule(name, text string, limit int64, extra ...parser.Option) (*goja.Program, *codeError) {
	// Before anything recurses over the code: see source.go.
	if err := checkNesting(text); err != nil {
		return nil, &codeError{file: name, src: text, line: 1, col: 1, msg: err.Error()}
	}
	ms := rewriteModuleSyntax(text, true)
	src := ms.src
	// code is what goja parses: src, or src with its for await loops and
	// async generators lowered (lower.go), whose positions tm maps back.
	code, tm, cerr := lowerModule(src, name, limit)
	if cerr != nil {
		return nil, cerr
	}
	fixErr := func(ce *codeError) *codeError { return ce }
	// srcOffset is the offset in src of position idx of the parsed code.
	srcOffset := func(idx file.Idx) int { return int(idx) - 1 - len(modulePrefix) }
	if tm != nil {
		fixErr = tm.mapError
		srcOffset = func(idx file.Idx) int { return tm.offset(int(idx) - 1 - len(modulePrefix)) }
	}
	opts := append(extra, parser.WithDisableSourceMaps)
	suffix := "\n})"
	if ms.esm {
		prog, err := parser.ParseFile(nil, name, modulePrefix+code+suffix, 0, opts...)
		if err != nil {
			return nil, fixErr(parseError(err, name, code, 0, len(modulePrefix)))
		}
		var getters []string
		for _, local := range ms.exportDefaultDecl {
			getters = append(getters, `"default": () => `+local)
		}
		body := prog.Body[0].(*ast.ExpressionStatement).Expression.(*ast.FunctionLiteral).Body.List
		for _, off := range ms.exportDecls {
			for _, st := range body {
				at := srcOffset(st.Idx0())
				if tm != nil {
					// Lowered code's statements map to their source
					// only about (`async function* f` became `function
					// f`): the first that starts on the declaration's
					// line, at it or after it.
					if at < off || at > len(src) || strings.Contains(src[off:at], "\n") {
						continue
					}
				} else if at != off {
					continue
				}
				for _, n := range declaredNames(st) {
					getters = append(getters, strconv.Quote(n)+": () => "+n)
				}
				if tm != nil {
					break
				}
			}
		}
		for _, p := range ms.exportNames {
			getters = append(getters, strconv.Quote(p[1])+": () => "+p[0])
		}
		suffix = "\n;__wasmeval.exportLocals(__wasmeval.exports, {" + strings.Join(getters, ", ") + "});\n})"
	}
	prog, err := parser.ParseFile(nil, name, modulePrefix+code+suffix, 0, opts...)
	if err != nil {
		return nil, fixErr(parseError(err, name, code, 0, len(modulePrefix)))
	}
	if err := guardProgram(prog); err != nil {
		return nil, &codeError{file: name, src: src, line: 1, col: 1, msg: err.Error()}
	}
	if len(prog.Body) > 0 {
		if es, ok := prog.Body[0].(*ast.ExpressionStatement); ok {
			if fn, ok := es.Expression.(*ast.FunctionLiteral); ok && ms.esm {
				hoistExportLocals(fn.Body)
				liveImports(fn, ms.imports)
			}
		}
	}
	shiftPositions(prog, -len(modulePrefix))
	if tm != nil {
		prog.File = tm.remap(prog, name)
	} else {
		prog.File = file.NewFile(name, src+suffix, 1)
	}
	prg, err := goja.CompileAST(prog, ms.esm)
	if err != nil {
		return nil, compileError(err, name, src)
	}
	return prg, nil
}

// declaredNames returns the names a declaration statement binds.
func declaredNames(st ast.Statement) []string {
	var names []string
	var target func(e ast.Expression)
	target = func(e ast.Expression) {
		switch t := e.(type) {
		case *ast.Identifier:
			names = append(names, t.Name.String())
		case *ast.Binding:
			target(t.Target)
		case *ast.AssignExpression:
			target(t.Left)
		case *ast.ArrayPattern:
			for _, el := range t.Elements {
				if el != nil {
					target(el)
				}
			}
			if t.Rest != nil {
				target(t.Rest)
			}
		case *ast.ObjectPattern:
			for _, p := range t.Properties {
				switch p := p.(type) {
				case *ast.PropertyShort:
					names = append(names, p.Name.Name.String())
				case *ast.PropertyKeyed:
					target(p.Value)
				}
			}
			if t.Rest != nil {
				target(t.Rest)
			}
		}
	}
	switch s := st.(type) {
	case *ast.VariableStatement:
		for _, b := range s.List {
			target(b.Target)
		}
	case *ast.LexicalDeclaration:
		for _, b := range s.List {
			target(b.Target)
		}
	case *ast.FunctionDeclaration:
		names = append(names, s.Function.Name.Name.String())
	case *ast.ClassDeclaration:
		if s.Class.Name != nil {
			names = append(names, s.Class.Name.Name.String())
		}
	}
	return names
}
