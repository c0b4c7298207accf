package python_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

type seeded struct{ r *rand.ChaCha8 }

func (s seeded) Read(p []byte) (int, error) { return s.r.Read(p) }

// TestInjectedClockAndRandom: the guest's wall clock and randomness come
// from the session options, so two sessions given the same ones agree.
func TestInjectedClockAndRandom(t *testing.T) {
	r := runtimeForTest(t)
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	outputs := make([]string, 2)
	for i := range outputs {
		inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{
			Root: t.TempDir(),
			Now:  func() time.Time { return start },
			Rand: seeded{rand.NewChaCha8([32]byte{1, 2, 3})},
		})
		if err != nil {
			t.Fatal(err)
		}
		rec, o := run(t, inst, "import time, random, os\nprint(time.time(), random.random(), os.urandom(4).hex())")
		inst.Close(context.Background())
		if o.Failed {
			t.Fatal(rec.out.String())
		}
		outputs[i] = rec.out.String()
	}
	if outputs[0] != outputs[1] {
		t.Fatalf("sessions with the same clock and seed differ:\n%s%s", outputs[0], outputs[1])
	}
	if want := "1893553445.0 "; outputs[0][:len(want)] != want {
		t.Fatalf("time.time() did not come from the injected clock: %s", outputs[0])
	}
}

// TestCompilationCacheCorrupt: a corrupt or half-written cache costs a
// recompile, never a failed start; processes may share the cache.
func TestCompilationCacheCorrupt(t *testing.T) {
	runtimeForTest(t) // skips when the artifact is missing
	dir := t.TempDir()
	ctx := context.Background()
	// Two runtimes filling the same empty cache at once.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := python.New(ctx, python.Config{CacheDir: dir})
			if err == nil {
				r.Close(ctx)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent start: %v", err)
		}
	}
	// Corrupt every cached file.
	n := 0
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			for i := len(b) / 2; i < len(b) && i < len(b)/2+64; i++ {
				b[i] ^= 0xff
			}
			os.WriteFile(p, b, 0o644)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no cache files were written")
	}
	r, err := python.New(ctx, python.Config{CacheDir: dir})
	if err != nil {
		t.Fatalf("start with a corrupt cache: %v", err)
	}
	defer r.Close(ctx)
	inst, err := r.NewInstance(ctx, runtimes.InstanceOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	if rec, o := run(t, inst, "print(6 * 7)"); o.Failed || rec.out.String() != "42\n" {
		t.Fatalf("got %q", rec.out.String())
	}
}

// TestCachePruned: cached templates and modules unused for two weeks are
// removed when a new template is saved; the ones in use stay.
func TestCachePruned(t *testing.T) {
	runtimeForTest(t)
	dir := t.TempDir()
	old := time.Now().Add(-15 * 24 * time.Hour)
	for _, name := range []string{"python-template-stale.json", "python-template-stale.mem", "python-fuel-stale.wasm", "python-start-stale.bin"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	r, err := python.New(context.Background(), python.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r.Close(context.Background())
	all, _ := filepath.Glob(filepath.Join(dir, "python-*"))
	var left []string
	for _, f := range all {
		if strings.Contains(f, "stale") {
			t.Errorf("%s was not pruned", f)
		}
		if !strings.HasSuffix(f, ".stamp") && !strings.HasSuffix(f, ".memo") { // a stamp or memo may come with them
			left = append(left, f)
		}
	}
	if len(left) != 4 { // this runtime's template (.json, .mem), module and start entry
		t.Errorf("cache holds %v, want this runtime's four files", left)
	}
}
