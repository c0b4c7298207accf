package python

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
	artifact "github.com/wasmeval/wasmeval/wasm/python"
)

// TestStartEntryRoundTrip: a start entry reads back as written, and a
// cut or padded one is refused.
func TestStartEntryRoundTrip(t *testing.T) {
	a := artifactFiles{
		bin:    []byte("\x00asm\x01\x00\x00\x00module"),
		data:   []wasm.Segment{{Offset: 1024, Data: []byte("hello")}, {Offset: 7, Data: []byte{}}},
		stdlib: []byte("PK zip"),
		key:    "0123456789abcdef",
		digest: [32]byte{1, 2, 3},
	}
	b := encodeStart(a)
	got, err := decodeStart(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("got %+v\nwant %+v", got, a)
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(bytes.Clone(b), 0), b[:40], []byte("wasmeval python start v0\n")} {
		if _, err := decodeStart(bad); err == nil {
			t.Errorf("decodeStart accepted %d bytes of a %d-byte entry", len(bad), len(b))
		}
	}
}

// TestStartFromCache: a second Runtime of the same cache starts from the
// start entry the first left (no fuel pass, no decompression: the
// instrumented module's cache file is not even read), runs cells as the
// first does, and an entry someone else wrote (an invalid MAC) is made
// again instead of used.
func TestStartFromCache(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	cfg := Config{CacheDir: t.TempDir(), KeyFile: filepath.Join(t.TempDir(), "key")}
	run := func() {
		t.Helper()
		r, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		// The heap's place comes with the template (templateMeta.Heap),
		// and is where a scan of the image finds it.
		b, release, err := r.template.View()
		if err != nil {
			t.Fatal(err)
		}
		want := findHeapState(b)
		release()
		r.heapOnce.Do(func() { t.Error("the heap's place was not known from the template's making") })
		if r.heap != want || want.addr == 0 {
			t.Errorf("heap %+v; a scan of the template finds %+v", r.heap, want)
		}
		inst, err := r.NewInstance(ctx, runtimes.InstanceOptions{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close(ctx)
		var sink abiSink
		res, err := inst.Run(ctx, "print(6 * 7)", &sink)
		if err != nil || res.Failed || sink.stdout.String() != "42\n" {
			t.Fatalf("run: %v, %+v, output %q %q", err, res, sink.stdout.String(), sink.stderr.String())
		}
	}
	run()
	entries, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "python-start-*.bin"))
	fuels, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "python-fuel-*.wasm"))
	if len(entries) != 1 || len(fuels) != 1 {
		t.Fatalf("start entries %v, fuel modules %v: want one of each", entries, fuels)
	}
	// Without the fuel module's file, a start from the entry needs none.
	if err := os.Remove(fuels[0]); err != nil {
		t.Fatal(err)
	}
	run()
	if _, err := os.Stat(fuels[0]); err == nil {
		t.Fatal("the second start ran the fuel pass: it did not start from the entry")
	}
	// A forged entry (its MAC wrong) is not used but made again.
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(entries[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(entries[0] + ".stamp")
	run()
	if _, err := os.Stat(fuels[0]); err != nil {
		t.Fatal("a forged entry was used: the start did not make the module again")
	}
	c := openCache(cfg)
	if _, err := c.key.ReadFile(entries[0], filepath.Base(entries[0])); err != nil {
		t.Fatalf("the forged entry was not made again: %v", err)
	}
}

// TestTemplateHeapAuthenticated: the heap's place saved with a template is
// covered by its MAC: trimming writes by it, so an edited one is refused.
func TestTemplateHeapAuthenticated(t *testing.T) {
	c := testCache(t)
	img := bytes.Repeat([]byte("template"), 4096)
	fakeTemplate(t, img, [4]uint32{1, 2, 3, 4}).saveTemplate(c, "k")
	if !(&Runtime{}).loadTemplate(c, "k") {
		t.Fatal("the template as saved was refused")
	}
	base := filepath.Join(c.dir, "python-template-k")
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var meta templateMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	meta.Heap += 64
	raw, _ = json.Marshal(meta)
	if err := os.WriteFile(base+".json", raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if (&Runtime{}).loadTemplate(c, "k") {
		t.Fatal("a template whose heap place was edited was loaded")
	}
}

// TestArtifactSumMemo: the artifact's hash remembered for the executable
// is the hash itself, and a memo someone edited is not believed.
func TestArtifactSumMemo(t *testing.T) {
	testenv.RequirePython(t)
	// A memo is taken of an executable whose ctime is 2 s old: this
	// test binary may be newer.
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	if age := time.Since(time.Unix(st.Ctim.Unix())); age < 3*time.Second {
		time.Sleep(3*time.Second - age)
	}
	c := testCache(t)
	want := artifact.Sum()
	for i := range 2 { // made, then (once the memo is taken) remembered
		if got := c.artifactSum(); got != want {
			t.Fatalf("artifactSum %d = %q, want %q", i, got, want)
		}
	}
	memo := filepath.Join(c.dir, "python-start-exe.memo")
	if _, err := os.Stat(memo); err != nil {
		t.Fatalf("no memo was taken: %v", err)
	}
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	// A memo of another key: as if someone else wrote it.
	other := wasm.NewCacheKey(bytes.Repeat([]byte{3}, wasm.CacheKeySize))
	other.SaveMemo(memo, "python artifact sum", exe, []byte("0000000000000000"))
	if _, err := os.Stat(memo); err != nil {
		t.Fatalf("no memo: %v", err)
	}
	if got := c.artifactSum(); got != want {
		t.Fatalf("artifactSum = %q with a forged memo, want %q", got, want)
	}
}
