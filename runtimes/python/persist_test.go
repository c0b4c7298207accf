package python_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

func persist(t testing.TB, inst runtimes.Instance, cache *python.StateCache) ([]byte, []python.Frame) {
	t.Helper()
	index, frames, err := inst.(*python.Instance).PersistState(context.Background(), cache)
	if err != nil {
		t.Fatal(err)
	}
	return index, frames
}

func frameBytes(frames []python.Frame) (n int) {
	for _, f := range frames {
		n += len(f.Data)
	}
	return n
}

// newFrames returns the frames of b that are not in a (by their bytes'
// address: a frame kept is handed back as the very same slice).
func newFrames(a, b []python.Frame) []python.Frame {
	old := map[*byte]bool{}
	for _, f := range a {
		old[&f.Data[0]] = true
	}
	var out []python.Frame
	for _, f := range b {
		if !old[&f.Data[0]] {
			out = append(out, f)
		}
	}
	return out
}

// TestPersistRestore: a state persisted from one instance restores into a
// new instance (another root) with its globals, imports and functions; the
// original goes on apart.
func TestPersistRestore(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "import json\nshared = {'n': 1, 'big': 'x' * 300000}\ndef bump():\n    shared['n'] += 1\n    return shared['n']")
	// Persisted twice through one cache: the second time only the changed
	// pages are compressed again, and the state is still whole.
	var cache python.StateCache
	persist(t, inst, &cache)
	run(t, inst, "shared['later'] = [i * i for i in range(5000)]")
	index, frames := persist(t, inst, &cache)
	if n := frameBytes(frames); n == 0 || n > 8<<20 {
		t.Fatalf("state of %d bytes", n)
	}
	root2 := t.TempDir()
	cp, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: root2}, index, frames, nil)
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

// TestPersistWritesOnlyChanges: after a light cell, a persist hands back
// every frame it made before as it was and one new frame of the pages the
// cell changed, a small part of the state; a frame's Sum is its bytes'
// SHA-256.
func TestPersistWritesOnlyChanges(t *testing.T) {
	inst, _ := newInstance(t)
	run(t, inst, "x = 0\nnames = [str(i) for i in range(1000)]")
	var cache python.StateCache
	_, first := persist(t, inst, &cache)
	run(t, inst, "x += 1")
	_, second := persist(t, inst, &cache)
	added := newFrames(first, second)
	if len(added) != 1 || len(second) > len(first)+1 {
		t.Fatalf("a persist after a light cell made %d new frames (%d frames before, %d after), want one more", len(added), len(first), len(second))
	}
	if n, all := frameBytes(added), frameBytes(second); n*3 > all {
		t.Fatalf("a persist after a light cell wrote %d of %d bytes: not only what changed", n, all)
	}
	for i, f := range second {
		if sha256.Sum256(f.Data) != f.Sum {
			t.Fatalf("frame %d: Sum is not its bytes' SHA-256", i)
		}
	}
}

// TestRestoreSeedsCache: a StateCache given to RestoreInstance makes the
// restored instance's first persist as cheap as its source's would have
// been (the loaded frames kept, only the changed pages compressed), and
// that state restores whole again.
func TestRestoreSeedsCache(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "n = 0\nd = {i: str(i) for i in range(2000)}")
	index, frames := persist(t, inst, nil)
	var cache python.StateCache
	cp, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()}, index, frames, &cache)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(context.Background())
	run(t, cp, "n += 1")
	index2, frames2 := persist(t, cp, &cache)
	added := newFrames(frames, frames2)
	if n, all := frameBytes(added), frameBytes(frames2); len(added) > 1 || n*3 > all {
		t.Fatalf("the first persist after a restore compressed %d of %d bytes in %d new frames: it did everything again", n, all, len(added))
	}
	again, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()}, index2, frames2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	if rec, o := run(t, again, "print(n, len(d), d[1999])"); o.Failed || rec.out.String() != "1 2000 1999\n" {
		t.Fatalf("restored twice: %q", rec.out.String())
	}
}

// TestRestoreRefusesBadState: a state that is not one, or is cut, or
// holds more memory than the session may have, or whose frame is damaged
// or missing, is refused with an error saying so; nothing starts.
func TestRestoreRefusesBadState(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "y = list(range(100000))")
	index, frames := persist(t, inst, nil)
	last := len(frames) - 1
	damaged := func() []python.Frame {
		c := append([]python.Frame(nil), frames...)
		d := append([]byte(nil), c[last].Data...)
		d[len(d)-1] ^= 0xff
		c[last].Data = d
		c[last].Sum = sha256.Sum256(d)
		return c
	}
	for _, tc := range []struct {
		name   string
		index  []byte
		frames []python.Frame
		limit  int64
		want   string
	}{
		{"garbage", []byte("not a state at all"), frames, 0, "malformed"},
		{"another version", append([]byte("wepy\x03\x00\x00\x00"), index[8:]...), frames, 0, "has version 3; this build reads version 4"},
		{"cut", index[:len(index)/2], frames, 0, "restore"},
		{"over the limit", index, frames, 8 << 20, "over the session's limit"},
		{"a frame damaged", index, damaged(), 0, "does not decompress"},
		{"a frame missing", index, frames[:last], 0, "frames"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.RestoreInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), MemoryLimitBytes: tc.limit}, tc.index, tc.frames, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
