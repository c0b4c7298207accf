package sandbox_test

import (
	"context"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// BenchmarkPersistEval: what saving a light session costs after each eval
// (target: at most 2 ms). Each op is one eval of a trivial Python cell
// (x += 1) through a Manager, which saves the session before it answers:
// its changed pages compressed, its root walked, the record written. The
// cost of the save is an op's time less store=none's (no store).
// store=memory keeps records in a map, so it times wasmeval's own work;
// store=dir-nosync writes a dir store unsynced (dir:///path?sync=none:
// safe from a killed process, not from a machine crash); store=dir writes
// and syncs it (the disk's sync latency included: about 4 ms per sync on
// the development VM, two per save).
func BenchmarkPersistEval(b *testing.B) {
	testenv.RequirePython(b)
	dir := func(b *testing.B) *store.Dir {
		st, err := store.OpenDir(filepath.Join(b.TempDir(), "store"))
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	for _, tc := range []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"store=none", func(b *testing.B) store.Store { return nil }},
		{"store=memory", func(b *testing.B) store.Store { return &memStore{} }},
		{"store=dir-nosync", func(b *testing.B) store.Store { return dir(b).NoSync() }},
		{"store=dir", func(b *testing.B) store.Store { return dir(b) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			sb, err := sandbox.New(ctx, sandbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close(ctx)
			mo := sandbox.ManagerOptions{Workspace: b.TempDir(), IdleTimeout: -1, TrimIdleAfter: -1}
			if st := tc.open(b); st != nil {
				mo.Store = st
			}
			m, err := sandbox.NewManager(sb, mo)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(ctx)
			id, err := m.Create(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			py := func(code string) {
				if _, err := m.Eval(ctx, "bench", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}}); err != nil {
					b.Fatal(err)
				}
			}
			py("x = 0\nnames = [str(i) for i in range(1000)]\nopen('notes.txt', 'w').write('hello')")
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				py("x += 1")
			}
			// On a loaded machine an op's wall time is mostly waiting for
			// a core; the process's CPU time per op says what it costs.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// memStore is a Store in memory, for benchmarks: it keeps the last state
// saved per id (files not merged).
type memStore struct {
	mu sync.Mutex
	m  map[string]*store.State
}

func (s *memStore) Save(ctx context.Context, st *store.State, epoch int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*store.State{}
	}
	s.m[st.ID] = st
	return nil
}

func (s *memStore) Load(ctx context.Context, id, artifact string) (*store.State, error) {
	return nil, store.ErrNotFound
}
func (s *memStore) Delete(ctx context.Context, id string) error { return nil }
func (s *memStore) List(ctx context.Context) ([]string, error)  { return nil, nil }
func (s *memStore) Ping(ctx context.Context) error              { return nil }
func (s *memStore) Close() error                                { return nil }

// BenchmarkResume: loading a light session from a dir store into a
// manager that does not hold it, as a restarted process or another node
// does (the target for a resume: 50 ms at the median): its record
// read and checked, its files written to a fresh folder, its Python
// memory restored over the template. Each op unloads the session first
// (not timed).
func BenchmarkResume(b *testing.B) {
	testenv.RequirePython(b)
	ctx := context.Background()
	st, err := store.OpenDir(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close(ctx)
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: b.TempDir(), IdleTimeout: -1, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	id, err := m.Create(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Eval(ctx, "bench", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x = 0\nnames = [str(i) for i in range(1000)]\nopen('notes.txt', 'w').write('hello')"}}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m.Unload(ctx, id)
		b.StartTimer()
		if _, err := m.Session("bench", id); err != nil {
			b.Fatal(err)
		}
	}
}
