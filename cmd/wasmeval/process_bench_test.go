package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// BenchmarkProcessEvalPrint1 runs a whole `wasmeval eval` process for one
// `print(1)` cell with a warm compilation cache (target ≤ 300 ms), against a
// native `python3.11 -c 'print(1)'` process in the same run.
func BenchmarkProcessEvalPrint1(b *testing.B) {
	testenv.RequirePython(b)
	bin := filepath.Join(b.TempDir(), "wasmeval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cwd := b.TempDir()
	req := `{"cells":[{"language":"py","code":"print(1)"}]}` + "\n"
	runOnce := func() {
		cmd := exec.Command(bin, "eval", "--cwd", cwd)
		cmd.Stdin = strings.NewReader(req)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("wasmeval eval: %v: %s", err, out)
		}
		if !strings.Contains(string(out), `"text":"1\n"`) && !strings.Contains(string(out), `"text":"1"`) {
			b.Fatalf("unexpected result: %s", out)
		}
	}
	runOnce() // warm the compilation cache

	var native time.Duration
	if py, err := exec.LookPath("/usr/bin/python3.11"); err == nil {
		const n = 10
		t := time.Now()
		for range n {
			if err := exec.Command(py, "-c", "print(1)").Run(); err != nil {
				b.Fatal(err)
			}
		}
		native = time.Since(t) / n
	}
	b.ResetTimer()
	for b.Loop() {
		runOnce()
	}
	if native > 0 {
		per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(float64(native.Nanoseconds()), "native-ns/op")
		b.ReportMetric(per/float64(native.Nanoseconds()), "x-native")
	}
}
