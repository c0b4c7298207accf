package testenv_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	artifact "github.com/wasmeval/wasmeval/wasm/python"
)

// recorder is a testing.TB that records whether it skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = true
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	runtime.Goexit()
}

func run(f func(tb testing.TB)) (skipped, failed bool) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.skipped, r.failed
}

func TestNotBuilt(t *testing.T) {
	notBuilt := fmt.Errorf("sandbox: cell 0: py runtime: %w", artifact.ErrNotBuilt)
	tests := []struct {
		name, env  string
		err        error
		skip, fail bool
	}{
		{"nil", "", nil, false, false},
		{"not built", "", notBuilt, true, false},
		{"not built, required", "1", notBuilt, false, true},
		{"not built, required by any value", "yes", notBuilt, false, true},
		{"not built, 0 is not required", "0", notBuilt, true, false},
		{"the message, across a process", "1", errors.New(`{"error": "python runtime not built: run make"}`), false, true},
		{"another failure", "", errors.New("python: trap"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(testenv.RequirePythonEnv, tt.env)
			skip, fail := run(func(tb testing.TB) { testenv.NotBuilt(tb, tt.err) })
			if skip != tt.skip || fail != tt.fail {
				t.Errorf("skipped %v, failed %v; want %v, %v", skip, fail, tt.skip, tt.fail)
			}
		})
	}
}

// TestRequirePythonUnderMake: with WASMEVAL_REQUIRE_PYTHON set (make test),
// the artifact must be there.
func TestRequirePythonUnderMake(t *testing.T) {
	if err := testenv.PythonAvailable(); testenv.PythonRequired() && err != nil {
		t.Fatalf("%s is set but: %v", testenv.RequirePythonEnv, err)
	}
}
