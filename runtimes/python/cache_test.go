package python

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
	"github.com/wasmeval/wasmeval/wasm/fuel"
)

func testCache(t *testing.T) diskCache {
	t.Helper()
	c := openCache(Config{CacheDir: t.TempDir(), KeyFile: filepath.Join(t.TempDir(), "key")})
	if c.key == nil {
		t.Fatal("no cache key")
	}
	return c
}

// fakeTemplate is a runtime whose template is b, for the cache functions.
func fakeTemplate(t *testing.T, b []byte, flags [4]uint32) *Runtime {
	t.Helper()
	im, err := wasm.NewImage(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Close() })
	return &Runtime{template: wasm.SnapshotFromImage(im), flags: flags}
}

// A template snapshot becomes every session's first state: a cached one
// that anyone but this user's wasmeval wrote (checksums recomputed, files
// swapped, metadata edited) must be rejected.
func TestTemplateCacheRejectsForgeries(t *testing.T) {
	img := bytes.Repeat([]byte("template"), 4096)
	flags := [4]uint32{16, 20, 24, 28}
	for _, tc := range []struct {
		name   string
		forge  func(c diskCache, base string)
		accept bool
	}{
		{"as saved", func(diskCache, string) {}, true},
		{"image rewritten", func(c diskCache, base string) {
			evil := bytes.Repeat([]byte("EVILEVIL"), 4096)
			os.WriteFile(base+".mem", evil, 0o644)
		}, false},
		{"image rewritten, old-style checksum fixed", func(c diskCache, base string) {
			evil := bytes.Repeat([]byte("EVILEVIL"), 4096)
			os.WriteFile(base+".mem", evil, 0o644)
			meta, _ := json.Marshal(map[string]any{"size": len(evil), "crc32c": crc32.Checksum(evil, crc32.MakeTable(crc32.Castagnoli)), "flags": flags})
			os.WriteFile(base+".json", meta, 0o644)
		}, false},
		{"flags edited", func(c diskCache, base string) {
			var meta templateMeta
			raw, _ := os.ReadFile(base + ".json")
			json.Unmarshal(raw, &meta)
			meta.Flags[0] = 4
			raw, _ = json.Marshal(meta)
			os.WriteFile(base+".json", raw, 0o644)
		}, false},
		{"another key's MAC", func(c diskCache, base string) {
			evil := bytes.Repeat([]byte("EVILEVIL"), 4096)
			os.WriteFile(base+".mem", evil, 0o644)
			other := wasm.NewCacheKey(bytes.Repeat([]byte{9}, wasm.CacheKeySize))
			mac := other.ImageMAC(filepath.Base(base), evil, templateExtra(uint64(len(evil)), flags))
			raw, _ := json.Marshal(templateMeta{Size: uint64(len(evil)), Flags: flags, MAC: string(bytesToHex(mac))})
			os.WriteFile(base+".json", raw, 0o644)
		}, false},
		{"another template's files", func(c diskCache, base string) {
			// An authentic template of another key, moved under this name.
			other := fakeTemplate(t, bytes.Repeat([]byte("OTHER..."), 4096), flags)
			other.saveTemplate(c, "other")
			otherBase := filepath.Join(c.dir, "python-template-other")
			os.Rename(otherBase+".mem", base+".mem")
			os.Rename(otherBase+".json", base+".json")
		}, false},
		{"image a symlink", func(c diskCache, base string) {
			elsewhere := filepath.Join(t.TempDir(), "mem")
			raw, _ := os.ReadFile(base + ".mem")
			os.WriteFile(elsewhere, raw, 0o644)
			os.Remove(base + ".mem")
			os.Symlink(elsewhere, base+".mem")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCache(t)
			fakeTemplate(t, img, flags).saveTemplate(c, "k")
			base := filepath.Join(c.dir, "python-template-k")
			tc.forge(c, base)
			r := &Runtime{}
			ok := r.loadTemplate(c, "k")
			if ok != tc.accept {
				t.Fatalf("loadTemplate = %v, want %v", ok, tc.accept)
			}
			if !ok {
				return
			}
			defer r.template.Close()
			got, err := r.template.Bytes()
			if err != nil || !bytes.Equal(got, img) || r.flags != flags {
				t.Fatalf("loaded template differs: %v", err)
			}
		})
	}
}

func bytesToHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// The fuel-instrumented module is compiled to native code: a cached one
// that is not authentic is ignored and made again.
func TestInstrumentCacheRejectsForgeries(t *testing.T) {
	// A module with one function that loops, so the pass has work to do.
	bin := []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type () -> ()
		0x02, 0x11, 0x01, 0x08, 'w', 'a', 's', 'm', 'e', 'v', 'a', 'l', 0x04, 'f', 'u', 'e', 'l', 0x00, 0x00, // import wasmeval.fuel
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x01,
		0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
	}
	want, err := fuel.Instrument(bin, fuelOptions)
	if err != nil {
		t.Fatal(err)
	}
	c := testCache(t)
	got, err := c.instrument(bin)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("instrument: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(c.dir, "python-fuel-*.wasm"))
	if len(files) != 1 {
		t.Fatalf("cached modules: %v", files)
	}
	path := files[0]
	if got, err := c.instrument(bin); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("instrument from the cache: %v", err)
	}
	evil := append(bytes.Clone(bin), "evil"...)
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"old format: module and its CRC-32C", binary.LittleEndian.AppendUint32(bytes.Clone(evil), crc32.Checksum(evil, crc32.MakeTable(crc32.Castagnoli)))},
		{"MAC under another key", append(bytes.Clone(evil), wasm.NewCacheKey(bytes.Repeat([]byte{9}, wasm.CacheKeySize)).MAC(filepath.Base(path), evil)...)},
		{"MAC of another file name", append(bytes.Clone(evil), c.key.MAC("python-fuel-other.wasm", evil)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(path, tc.file, 0o644)
			got, err := c.instrument(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("a forged instrumented module was used")
			}
			if got, err := c.key.ReadFile(path, filepath.Base(path)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the cache entry was not made again: %v", err)
			}
		})
	}
}

// End to end: a runtime whose cached template was rewritten (with the old
// checksum fixed up) does not load it; it boots CPython, works, and
// replaces the entry.
func TestNewIgnoresForgedTemplate(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	cfg := Config{CacheDir: t.TempDir(), KeyFile: filepath.Join(t.TempDir(), "key")}
	r, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close(ctx)
	mems, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "python-template-*.mem"))
	if len(mems) != 1 {
		t.Fatalf("cached templates: %v", mems)
	}
	st, _ := os.Stat(mems[0])
	zero := make([]byte, st.Size())
	os.WriteFile(mems[0], zero, 0o644)
	base := strings.TrimSuffix(mems[0], ".mem")
	raw, _ := os.ReadFile(base + ".json")
	var meta map[string]any
	json.Unmarshal(raw, &meta)
	meta["crc32c"] = crc32.Checksum(zero, crc32.MakeTable(crc32.Castagnoli))
	raw, _ = json.Marshal(meta)
	os.WriteFile(base+".json", raw, 0o644)

	r, err = New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	inst, err := r.NewInstance(ctx, runtimes.InstanceOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	var out strings.Builder
	o, err := inst.Run(ctx, "print(6 * 7)", &logSink{&out})
	if err != nil || o.Failed || strings.TrimSpace(out.String()) != "42" {
		t.Fatalf("run: %v, %+v, %q", err, o, out.String())
	}
	if b, _ := os.ReadFile(mems[0]); bytes.Equal(b, zero) {
		t.Fatal("the forged template was left in the cache")
	}
}
