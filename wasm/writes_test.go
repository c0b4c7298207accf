package wasm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/wasm"
)

// requireWriteTracking fails the test when this machine's kernel cannot
// track writes: the test machines run Linux 6.7 or later, where a skip
// would hide a regression. WASMEVAL_NO_WRITE_TRACKING=1 says the machine
// is known not to (then the test checks the fallback's error instead).
func requireWriteTracking(t *testing.T, h *wasm.MemoryHandle, size uint32) bool {
	t.Helper()
	err := h.TrackWrites(size)
	if os.Getenv("WASMEVAL_NO_WRITE_TRACKING") == "1" {
		if err == nil {
			t.Fatal("WASMEVAL_NO_WRITE_TRACKING=1, but TrackWrites succeeded")
		}
		if _, werr := h.WrittenPages(4096); werr == nil {
			t.Fatal("WrittenPages without tracking: no error")
		}
		return false
	}
	if err != nil {
		t.Fatalf("TrackWrites: %v (set WASMEVAL_NO_WRITE_TRACKING=1 on a kernel older than 6.7)", err)
	}
	return true
}

// TestWrittenPages: WrittenPages lists exactly the pages written since
// they were last protected, on each engine: by the host's code, by the kernel (a
// read(2) into guest memory), by the guest's own code; over the image,
// past it, and past a growth; not the pages only read, not pages given
// back (Discard) since; the image's pages once, when first read.
func TestWrittenPages(t *testing.T) {
	bin, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1)
		(func (export "store") (param i32 i32) (i32.store8 (local.get 0) (local.get 1))))`)
	if err != nil {
		t.Fatal(err)
	}
	img := bytes.Repeat([]byte{'i'}, 4*4096)
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("from the kernel"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, engine := range wasm.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			im, err := wasm.NewImage(img)
			if err != nil {
				t.Fatal(err)
			}
			defer im.Close()
			c, err := wasm.CompileModule(ctx, engine, wasm.Config{}, bin, "t", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			h := &wasm.MemoryHandle{}
			mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), wasm.MemoryOptions{Limit: 1 << 20, Image: im, Handle: h})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			defer mod.Close(ctx)
			mem := mod.Memory()
			mem.WriteByte(0, 'w') // before tracking: not listed
			if !requireWriteTracking(t, h, mem.Size()) {
				return
			}
			want := func(what string, pages ...uint32) {
				t.Helper()
				got, err := h.WrittenPages(mem.Size())
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !slices.Equal(got, pages) && !(len(got) == 0 && len(pages) == 0) {
					t.Fatalf("%s: written pages %v, want %v", what, got, pages)
				}
				if err := h.ProtectAll(mem.Size()); err != nil {
					t.Fatalf("%s: ProtectAll: %v", what, err)
				}
			}
			want("right after TrackWrites")
			if !h.Owned(0) || h.Owned(1) {
				t.Fatal("Owned: page 0, written before tracking, must be owned; page 1 not")
			}
			for _, p := range []uint32{0, 1, 2, 6, 7} { // read only
				if _, ok := mem.ReadByte(p*4096 + 1); !ok {
					t.Fatal("read")
				}
			}
			// The image's pages read for the first time are listed once
			// (telling them from the guest's own would cost the scans a
			// cache miss a page); the zero page is not.
			want("after reads", 1, 2)
			for _, p := range []uint32{0, 1, 2, 6, 7} {
				mem.ReadByte(p*4096 + 2)
			}
			want("after reads again")
			mem.WriteByte(0*4096+5, 'x') // written before tracking, again
			mem.WriteByte(1*4096, 'x')   // the image's page, read before
			mem.WriteByte(3*4096, 'x')   // the image's page, untouched
			mem.WriteByte(6*4096, 'x')   // past the image, read before
			mem.WriteByte(9*4096, 'x')   // past the image, untouched
			want("after host writes", 0, 1, 3, 6, 9)
			want("a second time")
			// A page left unprotected is listed until protected.
			mem.WriteByte(4*4096, 'x')
			if got, _ := h.WrittenPages(mem.Size()); !slices.Equal(got, []uint32{4}) {
				t.Fatalf("written pages %v, want [4]", got)
			}
			mem.WriteByte(5*4096, 'x')
			want("a page not protected", 4, 5)
			want("after ProtectAll")
			fd, err := unix.Open(file, unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			dst, _ := mem.Read(10*4096+4090, 15) // across pages 10 and 11
			if n, err := unix.Pread(fd, dst, 0); n != 15 || err != nil {
				t.Fatalf("pread into guest memory: %d %v", n, err)
			}
			unix.Close(fd)
			want("after a read(2) into guest memory", 10, 11)
			if _, err := mod.ExportedFunction("store").Call(ctx, 12*4096+3, 7); err != nil {
				t.Fatal(err)
			}
			want("after the guest's store", 12)
			mem.WriteByte(2*4096, 'x')
			// Page 2 counts as the guest's since it was listed (read).
			if n, err := h.Discard(0, 3*4096); err != nil || n != 3*4096 {
				t.Fatalf("Discard: %d bytes, %v; want pages 0 to 2", n, err)
			}
			want("after Discard of written pages")
			var gone [][2]uint32
			if n, err := h.DiscardPages(0, 8*4096, func(first, end uint32) { gone = append(gone, [2]uint32{first, end}) }); err != nil || n != 4*4096 {
				t.Fatalf("Discard: %d bytes, %v; want pages 3 to 6", n, err)
			}
			if len(gone) != 1 || gone[0] != [2]uint32{3, 7} {
				t.Fatalf("DiscardPages reported %v given back, want [[3 7]]", gone)
			}
			if h.Owned(2) || h.Owned(3) || !h.Owned(9) {
				t.Fatal("Owned after Discard: pages 2 and 3 must not be owned, 9 must")
			}
			for p := uint32(0); p < 8; p++ {
				v, _ := mem.ReadByte(p * 4096)
				if w := map[bool]byte{true: 'i', false: 0}[p < 4]; v != w {
					t.Fatalf("discarded page %d reads %q, want %q", p, v, w)
				}
			}
			// Page 2, given back while unprotected, maps the image again:
			// read, it is listed once, like an image page read at first.
			want("after reading the discarded pages", 2)
			if v, _ := mem.ReadByte(1 * 4096); v != 'i' {
				t.Fatalf("a discarded page reads %q, want the image's", v)
			}
			mem.WriteByte(1*4096, 'y')
			want("a discarded page written again", 1)
			if _, ok := mem.Grow(1); !ok {
				t.Fatal("grow")
			}
			mem.WriteByte(17*4096, 'x')
			mem.WriteByte(1*4096, 'z')
			want("after a growth", 1, 17)
			if !h.Tracking() {
				t.Fatal("Tracking() is false")
			}
		})
	}
}
