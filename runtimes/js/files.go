package js

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dop251/goja"
)

// The file helpers of DESIGN.md that this runtime has so far: read, write
// and append, on text files inside the session root. Each path is relative
// to the root, or absolute and inside it; the os.Root refuses `..` and
// symbolic links that lead out.

// rootRel maps a guest path to a path relative to the root, or throws.
func (in *instance) rootRel(fn string, v goja.Value) string {
	if in.root == nil {
		panic(in.vm.NewTypeError(fn + ": this session has no root directory"))
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		panic(in.vm.NewTypeError(fn + ": the path must be a string"))
	}
	p := v.String()
	if !strings.HasPrefix(p, "/") {
		p = path.Join(in.rootPath, p)
	}
	rel, err := filepath.Rel(in.rootPath, filepath.FromSlash(path.Clean(p)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		in.throwFS(fn, v.String(), errors.New("the path is outside the session root "+in.rootPath))
	}
	return filepath.ToSlash(rel)
}

func (in *instance) throwFS(fn, p string, err error) {
	code := "EACCES"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = "ENOENT"
	case errors.Is(err, fs.ErrExist):
		code = "EEXIST"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	obj, e := in.vm.New(in.vm.Get("Error"), in.vm.ToValue(fn+"("+quoteJS(p)+"): "+err.Error()))
	if e != nil {
		panic(in.vm.NewTypeError(err.Error()))
	}
	_ = obj.Set("code", code)
	_ = obj.Set("path", p)
	panic(obj)
}

func quoteJS(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
}

func (in *instance) readFile(call goja.FunctionCall) goja.Value {
	p := call.Argument(0)
	rel := in.rootRel("read", p)
	st, err := in.root.Stat(rel)
	if err != nil {
		in.throwFS("read", p.String(), err)
	}
	if st.Size() > in.memLimit/4 {
		in.throwFS("read", p.String(), errors.New("the file is too large for the session's memory limit"))
	}
	data, err := in.root.ReadFile(rel)
	if err != nil {
		in.throwFS("read", p.String(), err)
	}
	return in.vm.ToValue(string(data))
}

func (in *instance) writeFile(flag int, fn string) func(call goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		p := call.Argument(0)
		rel := in.rootRel(fn, p)
		text := call.Argument(1).String()
		if dir := path.Dir(rel); dir != "." {
			if err := in.root.MkdirAll(dir, 0o755); err != nil {
				in.throwFS(fn, p.String(), err)
			}
		}
		f, err := in.root.OpenFile(rel, flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			in.throwFS(fn, p.String(), err)
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			in.throwFS(fn, p.String(), err)
		}
		return goja.Undefined()
	}
}
