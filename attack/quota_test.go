package attack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/wasm"
)

// TestForkQuotaIsTheRootQuota: a fork's copy is counted by the disk
// quota's one rule (wasm.RootQuota), not a copy of it: a fork whose caps
// are exactly what the quota counts in the source root fits, one byte or
// one entry less does not. The root mixes what the rule counts
// differently: folders, a hard link (each link counts), a sparse file (at
// its logical size), a symbolic link (its target's length) and an empty
// file.
func TestForkQuotaIsTheRootQuota(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	// The world's operator links lead out and its pipe cannot be copied:
	// this root is the guest's own making.
	root := filepath.Join(w.base, "src")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := sharedSandbox(t).NewSession(ctx, sessionOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	out, status := eval(t, s, "py", `import os
os.makedirs('d/e', exist_ok=True)
open('d/a', 'wb').write(b'x' * 1000)
os.link('d/a', 'd/e/hard')
f = open('sparse', 'wb'); f.seek(3 << 20); f.write(b'y'); f.close()
os.symlink('e/hard', 'd/ln')
open('empty', 'w').close()
print('made')`, 10)
	if status != ok {
		t.Fatalf("making the root: %s %s", status, out)
	}
	q, err := wasm.NewRootQuota(root, 1<<50, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	bytes, files := q.Usage()
	if bytes != 2000+(3<<20)+1+int64(len("e/hard")) || files != 7 {
		t.Fatalf("the quota counts %d bytes in %d entries; the rule says %d in 7", bytes, files, 2000+(3<<20)+1+len("e/hard"))
	}
	for _, tc := range []struct {
		name         string
		bytes, files int64
		fits         bool
	}{
		{"exactly the count", bytes, files, true},
		{"a byte less", bytes - 1, files, false},
		{"an entry less", bytes, files - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			cp, err := s.Fork(ctx, sandbox.SessionOptions{Root: dst, MemoryLimitBytes: memoryCap,
				DiskQuotaBytes: tc.bytes, DiskQuotaFiles: tc.files})
			if cp != nil {
				defer cp.Close(ctx)
			}
			switch {
			case tc.fits && err != nil:
				t.Fatalf("a fork with the source's own count as its quota: %v", err)
			case !tc.fits && !errors.Is(err, wasm.ErrDiskQuota):
				t.Fatalf("a fork past its quota: %v, want a disk quota error", err)
			case tc.fits:
				cq, err := wasm.NewRootQuota(dst, 1<<50, 1<<40)
				if err != nil {
					t.Fatal(err)
				}
				if b, f := cq.Usage(); b != bytes || f != files {
					t.Errorf("the copy holds %d bytes in %d entries, the source %d in %d", b, f, bytes, files)
				}
				alive(t, cp, "py")
			}
		})
	}
}
