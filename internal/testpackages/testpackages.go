// Package testpackages finds the folder of real pure-Python packages that
// `make py-test-packages` unpacks from Debian (sympy, mpmath, networkx,
// attrs, PyYAML), for the tests of the Python package layer (--packages).
package testpackages

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// dirName is the Makefile's PYPKG_DIR under its CACHE_ROOT; bump both
// when the package list changes.
const dirName = "py-test-packages-1"

// Dir returns the packages folder: $WASMEVAL_TEST_PACKAGES, or
// dist-packages under the Makefile's default build cache. Without it the
// test is skipped, or fails when WASMEVAL_REQUIRE_PYTHON is set as
// testenv.PythonRequired reads it (as under make test), saying which make
// target makes it.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("WASMEVAL_TEST_PACKAGES")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err == nil {
			dir = filepath.Join(cache, "wasmeval-build", dirName, "dist-packages")
		}
	}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(filepath.Dir(dir), ".complete")); err == nil {
			return dir
		}
		if _, err := os.Stat(filepath.Join(dir, "sympy", "__init__.py")); err == nil && os.Getenv("WASMEVAL_TEST_PACKAGES") != "" {
			return dir
		}
	}
	msg := "the test packages are missing (" + dir + "): run `make py-test-packages` (or set WASMEVAL_TEST_PACKAGES to a dist-packages folder with sympy, mpmath, networkx, attrs and PyYAML)"
	if testenv.PythonRequired() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
