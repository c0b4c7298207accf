package python_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestPersistRestore: a state persisted from one instance restores into a
// new instance (another root) with its globals, imports and functions; the
// original goes on apart.
func TestPersistRestore(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "import json\nshared = {'n': 1, 'big': 'x' * 300000}\ndef bump():\n    shared['n'] += 1\n    return shared['n']")
	p := inst.(interface {
		PersistState(context.Context, *python.StateCache) ([]byte, error)
	})
	// Persisted twice through one cache: the second time only the changed
	// groups are compressed again, and the state is still whole.
	var cache python.StateCache
	if _, err := p.PersistState(context.Background(), &cache); err != nil {
		t.Fatal(err)
	}
	run(t, inst, "shared['later'] = [i * i for i in range(5000)]")
	state, err := p.PersistState(context.Background(), &cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(state) == 0 || len(state) > 8<<20 {
		t.Fatalf("state of %d bytes", len(state))
	}
	root2 := t.TempDir()
	cp, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: root2}, state)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(context.Background())
	if rec, o := run(t, cp, "import os\nprint(bump(), len(shared['big']), sum(shared['later']), json.dumps([1]), os.getcwd() == "+"'"+root2+"'"+")"); o.Failed || rec.out.String() != "2 300000 41654167500 [1] True\n" {
		t.Fatalf("restored: %q", rec.out.String())
	}
	if rec, _ := run(t, inst, "print(bump())"); rec.out.String() != "2\n" {
		t.Fatalf("original after persist: %q", rec.out.String())
	}
	k1, err := r.StateKey()
	if err != nil || !strings.HasPrefix(k1, "py-") {
		t.Fatalf("StateKey: %q, %v", k1, err)
	}
	if k2, _ := r.StateKey(); k2 != k1 {
		t.Fatalf("StateKey changed: %q then %q", k1, k2)
	}
}

// TestRestoreRefusesBadState: a state that is not one, or is cut, or
// holds more memory than the session may have, is refused with an error
// saying so; nothing starts.
func TestRestoreRefusesBadState(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "y = list(range(100000))")
	state, err := inst.(interface {
		PersistState(context.Context, *python.StateCache) ([]byte, error)
	}).PersistState(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		state []byte
		limit int64
		want  string
	}{
		{"garbage", []byte("not a state at all"), 0, "malformed"},
		{"cut", state[:len(state)/2], 0, "restore"},
		{"over the limit", state, 8 << 20, "over the session's limit"},
		{"a frame damaged", flipLast(state), 0, "does not decompress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), MemoryLimitBytes: tc.limit}, tc.state)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// flipLast returns b with its last byte changed (inside the last group's
// zstd frame).
func flipLast(b []byte) []byte {
	c := append([]byte(nil), b...)
	c[len(c)-1] ^= 0xff
	return c
}
