package js

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/prelude"
)

// TestPrimordialNamesResolve: every P.Name the prelude's files read is
// either taken by the generated program (primordials.go) or set by the
// prelude itself (P.SafeMap = ..., in inspect.js): the program takes only
// the names the sources read, so a name it cannot place would be undefined
// where the prelude calls it.
func TestPrimordialNamesResolve(t *testing.T) {
	src, err := primordialsSource()
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("WASMEVAL_DUMP_PRIMORDIALS"); path != "" {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	used, err := primordialNamesUsed()
	if err != nil {
		t.Fatal(err)
	}
	if len(used) < 100 {
		t.Fatalf("the prelude reads %d primordials, want the 100 and more it reads", len(used))
	}
	inspect, err := prelude.JS.ReadFile("js/inspect.js")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bP\.([A-Za-z_$][A-Za-z0-9_$]*) = `).FindAllStringSubmatch(string(inspect), -1) {
		own[m[1]] = true
	}
	vm := goja.New()
	prg, err := vm.RunString(src)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := goja.AssertFunction(prg)
	internal := vm.NewObject()
	if _, err := fn(goja.Undefined(), vm.NewObject(), internal); err != nil {
		t.Fatal(err)
	}
	P := vm.NewObject()
	take, _ := goja.AssertFunction(internal.Get("takePrimordials"))
	helpers, err := vm.RunString(`[(f) => Function.prototype.call.bind(f), (f, self) => f.bind(self)]`)
	if err != nil {
		t.Fatal(err)
	}
	h := helpers.(*goja.Object)
	if _, err := take(goja.Undefined(), P, h.Get("0"), h.Get("1")); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, name := range used {
		if v := P.Get(name); (v == nil || goja.IsUndefined(v)) && !own[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the prelude reads these primordials, which neither the program takes nor inspect.js sets: %s", strings.Join(missing, ", "))
	}
	// A few that must be what they say.
	for code, want := range map[string]string{
		"P.ArrayPrototypeJoin(a, '+')":                      "1+2",
		"P.MapPrototypeGetSize(new Map([[1, 2]]))":          "1",
		"P.SymbolIterator === Symbol.iterator":              "true",
		"P.TypedArrayPrototypeGetLength(new Uint8Array(4))": "4",
		"P.ObjectKeys({ x: 1 })[0]":                         "x",
		"P.PromiseResolve(1) instanceof Promise":            "true",
		"typeof P.String":                                   "string",
	} {
		f, err := vm.RunString("(P, a) => (" + code + ")")
		if err != nil {
			t.Fatal(err)
		}
		g, _ := goja.AssertFunction(f)
		v, err := g(goja.Undefined(), P, vm.NewArray(1, 2))
		if err != nil {
			t.Errorf("%s: %v", code, err)
		} else if v.String() != want && !(want == "string" && v.String() == "function") {
			t.Errorf("%s = %s, want %s", code, v, want)
		}
	}
}
