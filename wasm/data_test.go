package wasm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmeval/wasmeval/wasm"
)

// A module with one page of memory (exported as "memory") and the data
// segment "abc" at offset 16.
var dataModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: 1 page
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export memory
	0x0b, 0x09, 0x01, 0x00, 0x41, 0x10, 0x0b, 0x03, 'a', 'b', 'c', // data
}

func TestStripData(t *testing.T) {
	stripped, segs, err := wasm.StripData(dataModule)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 1 || segs[0].Offset != 16 || string(segs[0].Data) != "abc" {
		t.Fatalf("segments = %+v", segs)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, stripped)
	if err != nil {
		t.Fatalf("stripped module: %v", err)
	}
	mem := mod.Memory()
	if b, _ := mem.Read(16, 3); string(b) != "\x00\x00\x00" {
		t.Fatalf("the stripped module still writes its data: %q", b)
	}
	if err := wasm.ApplyData(mem, segs); err != nil {
		t.Fatal(err)
	}
	if b, _ := mem.Read(16, 3); string(b) != "abc" {
		t.Fatalf("after ApplyData: %q", b)
	}
	if err := wasm.ApplyData(mem, []wasm.Segment{{Offset: 65535, Data: []byte("xy")}}); err == nil {
		t.Fatal("an out-of-bounds segment was applied")
	}
}

func TestStripDataErrors(t *testing.T) {
	passive := append([]byte(nil), dataModule[:25]...)
	passive = append(passive, 0x0b, 0x06, 0x01, 0x01, 0x03, 'a', 'b', 'c')
	for _, tc := range []struct {
		name string
		bin  []byte
		want string
	}{
		{"not wasm", []byte("hello, world"), "not a WebAssembly module"},
		{"truncated section", dataModule[:len(dataModule)-2], "overruns"},
		{"passive segment", passive, "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := wasm.StripData(tc.bin)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestStripDataLyingCount: a data section whose segment count is far more
// than its bytes can hold is refused before anything is allocated for it.
func TestStripDataLyingCount(t *testing.T) {
	mod := append([]byte(nil), dataModule[:len(dataModule)-11]...)
	mod = append(mod, 0x0b, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f) // data: 2^32-1 segments
	if _, _, err := wasm.StripData(mod); err == nil || !strings.Contains(err.Error(), "cannot fit") {
		t.Fatalf("StripData = %v, want a refusal of the count", err)
	}
}
