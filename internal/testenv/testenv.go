// Package testenv says what wasmeval's tests may skip. It is for tests
// only.
//
// The Python halves of the tests need the CPython artifact (make python).
// Without it they skip, unless WASMEVAL_REQUIRE_PYTHON is set (as
// `make test` does): then a missing artifact fails the test, so that a
// broken build cannot pass by skipping.
package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	artifact "github.com/wasmeval/wasmeval/wasm/python"
)

// RequirePythonEnv is the variable that turns a missing CPython artifact
// from a skip into a failure.
const RequirePythonEnv = "WASMEVAL_REQUIRE_PYTHON"

// PythonRequired reports whether WASMEVAL_REQUIRE_PYTHON is set to
// anything but "" or "0": one reading for every package.
func PythonRequired() bool {
	v := strings.TrimSpace(os.Getenv(RequirePythonEnv))
	return v != "" && v != "0"
}

// PythonAvailable returns nil when the binary embeds the CPython artifact,
// and an error wrapping ErrNotBuilt (or why it cannot be read) otherwise.
func PythonAvailable() error {
	_, err := artifact.Wasm()
	return err
}

// RequirePython skips tb when the CPython artifact is not built, or fails
// it when WASMEVAL_REQUIRE_PYTHON is set. An artifact that is there but
// cannot be read always fails.
func RequirePython(tb testing.TB) {
	tb.Helper()
	NotBuilt(tb, PythonAvailable())
}

// NotBuilt handles an error from running Python code: nil does nothing;
// a missing artifact skips tb (or fails it when WASMEVAL_REQUIRE_PYTHON is
// set); anything else fails tb. Use it where a test learns that Python is
// missing from an error rather than up front.
func NotBuilt(tb testing.TB, err error) {
	tb.Helper()
	switch {
	case err == nil:
	case !IsNotBuilt(err):
		tb.Fatalf("the Python runtime cannot run: %v", err)
	case PythonRequired():
		tb.Fatalf("%v, and %s is set: build the CPython artifact (make python) before these tests", err, RequirePythonEnv)
	default:
		tb.Skipf("skipped: %v (set %s=1 to make this a failure)", err, RequirePythonEnv)
	}
}

// IsNotBuilt reports whether err says that the CPython artifact is
// missing: it wraps ErrNotBuilt, or (having crossed a process or a JSON
// answer) carries its message.
func IsNotBuilt(err error) bool {
	return err != nil && (errors.Is(err, artifact.ErrNotBuilt) || strings.Contains(err.Error(), artifact.ErrNotBuilt.Error()))
}

// BuildCache is the folder where make keeps what the tests need besides
// the Go modules (npm packages, Debian packages): name under
// $XDG_CACHE_HOME/wasmeval-build, or ~/.cache/wasmeval-build, as the
// Makefile's CACHE_ROOT.
func BuildCache(name string) string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "wasmeval-build", name)
}
