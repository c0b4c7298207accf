//go:build ignore

// train.go runs the profile's training workload in an instrumented
// python.wasm and writes its raw profile (README.md in this folder: run it
// in a copy of the checkout whose wasm/python/dist holds the instrumented
// module):
//
//	go run ./wasm/python/pgo/train.go ROOT CELLS OUT.profraw
//
// ROOT is the session's folder and must hold CPython's own test package
// (ROOT/test, from the pinned source): the cells of CELLS/*.py run first,
// in name order, then one cell per module of the test suite's --pgo set
// (Lib/test/libregrtest/pgo.py) that runs in the guest. Each cell runs on
// its own, so one that fails leaves the others' counts. OUT.profraw must be
// in ROOT: the guest writes it.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// The --pgo set of CPython 3.11 without what cannot run in the guest
// (test_embed, test_bz2, test_lzma: no subprocess, no _bz2 or _lzma;
// test_time: its import starts a subprocess).
var testModules = []string{
	"test_array", "test_base64", "test_binascii", "test_binop", "test_bisect",
	"test_bytes", "test_cmath", "test_codecs", "test_collections", "test_complex",
	"test_dataclasses", "test_datetime", "test_decimal", "test_difflib",
	"test_float", "test_fstring", "test_functools", "test_generators",
	"test_hashlib", "test_heapq", "test_int", "test_itertools", "test_json",
	"test_long", "test_math", "test_memoryview", "test_operator",
	"test_ordered_dict", "test_patma", "test_pickle", "test_pprint", "test_re",
	"test_set", "test_sqlite3", "test_statistics", "test_struct",
	"test_tabnanny", "test_unicode", "test_xml_etree", "test_xml_etree_c",
}

const testCell = `import unittest, io, time
_t = time.time()
try:
    _r = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(
        unittest.defaultTestLoader.loadTestsFromName('test.%[1]s'))
    print('%[1]s', _r.testsRun, 'run,', len(_r.failures) + len(_r.errors), 'failed,', len(_r.skipped), 'skipped', round(time.time() - _t, 1))
except BaseException as _e:
    print('%[1]s', 'not run:', type(_e).__name__, _e)
`

type sink struct{}

func (sink) Stdout(s string)               { os.Stderr.WriteString(s) }
func (sink) Stderr(s string)               { os.Stderr.WriteString(s) }
func (sink) Display(runtimes.Bundle, bool) {}
func (sink) Status(string, string)         {}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run train.go ROOT CELLS OUT.profraw")
		os.Exit(2)
	}
	root, dir, out := os.Args[1], os.Args[2], os.Args[3]
	ctx := context.Background()
	cache, err := os.MkdirTemp("", "wasmeval-pgo-cache-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(cache)
	// Without fuel: the instrumented module's code is what is measured,
	// the fuel checks are the host's.
	rt, err := python.New(ctx, python.Config{CacheDir: cache, NoFuel: true})
	if err != nil {
		fail(err)
	}
	inst, err := rt.NewInstance(ctx, runtimes.InstanceOptions{Root: root})
	if err != nil {
		fail(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	sort.Strings(files)
	var cells, names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail(err)
		}
		cells, names = append(cells, string(b)), append(names, filepath.Base(f))
	}
	for _, m := range testModules {
		cells, names = append(cells, fmt.Sprintf(testCell, m)), append(names, m)
	}
	for i, c := range cells {
		t := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		o, err := inst.Run(cctx, c, sink{})
		cancel()
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "== %s: failed=%v (%v)\n", names[i], o.Failed, time.Since(t).Round(time.Millisecond))
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		fail(err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		fail(fmt.Errorf("%s is not in ROOT", out))
	}
	o, err := inst.Run(ctx, fmt.Sprintf("import _wasmeval\nassert _wasmeval.profile_write(%q) == 0", rel), sink{})
	if err != nil || o.Failed {
		fail(fmt.Errorf("profile_write: %v %+v", err, o))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "train:", err)
	os.Exit(1)
}
