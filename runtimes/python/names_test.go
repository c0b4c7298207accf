package python_test

import (
	"os"
	"strconv"
	"testing"
)

// TestNamesMatchNative: module-level names through the paths that
// names-wasmeval.patch adds to LOAD_NAME and STORE_NAME (a hit at the first probe
// read, or an existing name's value replaced, in place; a builtin found at
// its first probe once the namespace's shows the name is not there) and
// FOR_ITER's prediction of STORE_NAME behave as in Debian's python3.11: the
// benchmark's loop and unpacking, rebinding seen by functions' LOAD_GLOBAL,
// globals() and locals() and dict views, the same object stored again
// (reference counts), del and rebinding, names stored while the dict
// resizes, keys equal to a name but not the same object, str subclass keys
// (a general table), dict subclass and non-dict namespaces through exec,
// locals apart from globals, GC tracking of an untracked namespace, builtins
// as a dict or a mapping, builtins named by module-level code (shadowed by a
// global, by a key equal but not identical, added to and removed from
// builtins), NameError messages and suggestions, class bodies (and
// __prepare__), a finaliser that rebinds a name as it is replaced, 2- and
// 4-byte index tables, and sys.settrace line events in a module-level for
// loop (on from the start and switched on in the middle).
func TestNamesMatchNative(t *testing.T) {
	src, err := os.ReadFile("testdata/names.py")
	if err != nil {
		t.Fatal(err)
	}
	matchesNative(t, "exec(compile("+strconv.Quote(string(src))+", '<names>', 'exec'), {'__name__': '__names__'})\n",
		"loop 4498500 2999", "same object 1", "finaliser rebound by __del__", "many names 50000", "settrace midway [", "done")
}
