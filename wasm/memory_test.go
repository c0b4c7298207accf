package wasm_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm"
)

// memModule has one page of memory, exported as "memory", and no data.
var memModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: 1 page, no maximum
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export memory
}

func instantiate(t testing.TB, o wasm.MemoryOptions) (api.Module, *wasm.MemoryHandle) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	h := &wasm.MemoryHandle{}
	o.Handle = h
	if o.Limit == 0 {
		o.Limit = 1 << 20
	}
	mod, err := rt.InstantiateWithConfig(wasm.WithMemory(ctx, o), memModule, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Release)
	return mod, h
}

// TestMemoryOutlivesClose: a module that closes itself (WASI proc_exit does,
// from inside a call) leaves its memory mapped until the handle's Release,
// so host code still holding it reads instead of faulting.
func TestMemoryOutlivesClose(t *testing.T) {
	mod, h := instantiate(t, wasm.MemoryOptions{})
	mem := mod.Memory()
	mem.WriteUint32Le(100, 0xfeed)
	if err := mod.CloseWithExitCode(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if v, ok := mem.ReadUint32Le(100); !ok || v != 0xfeed {
		t.Fatalf("after close: %#x %v", v, ok)
	}
	mem.WriteUint32Le(104, 1) // a late interrupt flag write
	h.Release()
	h.Release() // idempotent
	if _, err := h.DirtyPages(4096); err == nil {
		t.Fatal("DirtyPages after Release: no error")
	}
}

// TestDiscard: discarded pages read as the image (or zero past it) again
// and are no longer counted as written; DiscardClean drops only the written
// pages that hold what a discard would give back.
func TestDiscard(t *testing.T) {
	img := bytes.Repeat([]byte{'i'}, 2*4096)
	im, err := wasm.NewImage(img)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	mod, h := instantiate(t, wasm.MemoryOptions{Image: im})
	mem := mod.Memory()
	page := func(p uint32) []byte { b, _ := mem.Read(p*4096, 4096); return b }
	mem.Write(0, bytes.Repeat([]byte{'w'}, 4096))    // page 0: differs from the image
	mem.Write(4096, bytes.Repeat([]byte{'i'}, 4096)) // page 1: the image's own content
	mem.Write(2*4096, make([]byte, 4096))            // page 2: zeros past the image
	mem.Write(3*4096, []byte{1})                     // page 3: not zero
	if d, _ := h.DirtyPages(mem.Size()); len(d) != 4 {
		t.Fatalf("dirty pages %v, want 0-3", d)
	}
	n, err := h.DiscardClean(mem.Size())
	if err != nil || n != 2*4096 {
		t.Fatalf("DiscardClean: %d %v, want pages 1 and 2", n, err)
	}
	if d, _ := h.DirtyPages(mem.Size()); len(d) != 2 || d[0] != 0 || d[1] != 3 {
		t.Fatalf("dirty pages after DiscardClean %v, want [0 3]", d)
	}
	if page(1)[0] != 'i' || page(2)[0] != 0 || page(0)[0] != 'w' || page(3)[0] != 1 {
		t.Fatal("DiscardClean changed what the memory holds")
	}
	// Discard gives back only whole pages inside the range.
	var gone [][2]uint32
	if n, err := h.DiscardPages(100, 4*4096, func(first, end uint32) { gone = append(gone, [2]uint32{first, end}) }); err != nil || n != 3*4096 {
		t.Fatalf("Discard: %d %v, want pages 1-3", n, err)
	}
	if len(gone) != 1 || gone[0] != [2]uint32{1, 4} {
		t.Fatalf("DiscardPages reported %v given back, want [[1 4]]", gone)
	}
	if page(0)[0] != 'w' || page(3)[0] != 0 {
		t.Fatal("Discard: page 0 must stay, page 3 must read zero")
	}
	if _, err := h.Discard(0, 1<<40); err == nil {
		t.Fatal("Discard past the memory: no error")
	}
	if _, err := h.Discard(^uint64(0)-10, 100); err == nil {
		t.Fatal("Discard with an overflowing range: no error")
	}
}

func TestHostPages(t *testing.T) {
	var p wasm.HostPages
	b, err := p.Resize(10 << 20)
	if err != nil || len(b) != 10<<20 {
		t.Fatal(len(b), err)
	}
	b[len(b)-1] = 1
	if b, _ = p.Resize(9 << 20); p.Cap() != 10<<20 {
		t.Fatalf("a slightly smaller size mapped anew: cap %d", p.Cap())
	}
	if b, _ = p.Resize(1 << 20); p.Cap() > 2<<20 || len(b) != 1<<20 {
		t.Fatalf("a much smaller size kept the large buffer: cap %d", p.Cap())
	}
	p.Release()
	if p.Cap() != 0 {
		t.Fatal("Release kept the buffer")
	}
}

// TestHostPagesGrow: Grow keeps the content and does not remap for a
// small step.
func TestHostPagesGrow(t *testing.T) {
	var p wasm.HostPages
	defer p.Release()
	b, err := p.Grow(3 * 4096)
	if err != nil || len(b) < 3*4096 {
		t.Fatal(len(b), err)
	}
	for i := range b {
		b[i] = byte(i / 4096)
	}
	n := len(b)
	if b, err = p.Grow(n - 1); err != nil || len(b) != n {
		t.Fatalf("Grow to less than the buffer: %d %v", len(b), err)
	}
	if b, err = p.Grow(40 * 4096); err != nil || len(b) < 40*4096 || p.Cap() != len(b) {
		t.Fatal(len(b), p.Cap(), err)
	}
	for i := range n {
		if b[i] != byte(i/4096) {
			t.Fatalf("byte %d lost in Grow: %d", i, b[i])
		}
	}
	b[len(b)-1] = 1
}
