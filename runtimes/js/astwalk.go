package js

import (
	"reflect"

	"github.com/wasmeval/wasmeval/internal/goja/file"
)

// The passes over a cell's syntax tree (hoist.go, relational.go,
// source.go, growth.go) walk it by reflection rather than by a switch over
// goja's node types: a pass then reaches every node of every kind, also of
// kinds a newer goja adds. checkDepth (source.go) keeps a walk of its own:
// it must not recurse, the tree not yet being known to be shallow; so does
// liveImports (livebind.go), whose scopes end as its walk leaves them.

var (
	idxType  = reflect.TypeFor[file.Idx]()
	fileType = reflect.TypeFor[*file.File]()
)

// walkAST walks the syntax tree at root: its pointers, interfaces,
// structs and slices, down to the leaves (positions, names, operators).
// A node (pointer) that two parents share, as a binding is both in its
// statement and in its scope's declaration list, is walked once; nil
// pointers and interfaces and the source (*file.File) are not walked.
//
// pre, if not nil, is called with each place but a struct or a slice
// before what it holds is walked, and post after; pre returning false
// skips both. pre may set a settable place: the walk goes on into its new
// value. What post sets is not walked.
func walkAST(root any, pre func(v reflect.Value) bool, post func(v reflect.Value)) {
	seen := make(map[any]struct{})
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
			return
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
			return
		case reflect.Pointer:
			if v.IsNil() || v.Type() == fileType {
				return
			}
			key := v.Interface()
			if _, ok := seen[key]; ok {
				return
			}
			seen[key] = struct{}{}
		case reflect.Interface:
			if v.IsNil() {
				return
			}
		}
		if pre != nil && !pre(v) {
			return
		}
		if k := v.Kind(); k == reflect.Pointer || k == reflect.Interface {
			walk(v.Elem())
		}
		if post != nil {
			post(v)
		}
	}
	walk(reflect.ValueOf(root))
}
