package testpackages

import (
	"path/filepath"
	"runtime"
	"testing"
)

// recorder is a testing.TB that notes whether Dir skipped or failed, and
// stops the goroutine there as the real ones do.
type recorder struct {
	testing.TB
	got string
}

func (r *recorder) Helper()             {}
func (r *recorder) Fatal(...any)        { r.got = "fail"; runtime.Goexit() }
func (r *recorder) Skip(...any)         { r.got = "skip"; runtime.Goexit() }
func (r *recorder) Logf(string, ...any) {}

// TestMissingPackagesFollowRequirePython: with the packages missing, Dir
// fails wherever testenv.PythonRequired says the Python halves must not
// skip (any value but "" and "0"), and skips otherwise. It read the
// variable apart ("1" only), so WASMEVAL_REQUIRE_PYTHON=yes skipped here
// and failed elsewhere (issue 9).
func TestMissingPackagesFollowRequirePython(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"1", "fail"}, {"yes", "fail"}, {"true", "fail"},
		{"", "skip"}, {"0", "skip"},
	} {
		t.Setenv("WASMEVAL_TEST_PACKAGES", filepath.Join(t.TempDir(), "dist-packages"))
		t.Setenv("WASMEVAL_REQUIRE_PYTHON", tc.env)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Dir(r)
		}()
		<-done
		if r.got != tc.want {
			t.Errorf("WASMEVAL_REQUIRE_PYTHON=%q, packages missing: Dir did %q, want %q", tc.env, r.got, tc.want)
		}
	}
}
