package python

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/runtimes"
)

// abiGuest is a wasm module that imports the host module "wasmeval" as the
// shim does and exports a wrapper for each import, so that a test can pass
// any values the shim never would (a compromised guest could): pointers
// outside memory, huge lengths, unknown ids.
func abiGuest() []byte {
	const i32 = 0x7f
	sig := func(params, results int) []byte {
		b := []byte{0x60, byte(params)}
		for range params {
			b = append(b, i32)
		}
		b = append(b, byte(results))
		for range results {
			b = append(b, i32)
		}
		return b
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section := func(id byte, body []byte) []byte {
		return append([]byte{id, byte(len(body)&0x7f | 0x80), byte(len(body) >> 7)}, body...)
	}
	imports := []struct {
		name            string
		params, results int
	}{{"emit", 3, 0}, {"call_start", 2, 1}, {"call_wait", 0, 1}, {"call_result_len", 1, 1}, {"call_result", 2, 0}}
	types, imps, funcs, exps, code := []byte{byte(len(imports))}, []byte{byte(len(imports))}, []byte{byte(len(imports))}, []byte{byte(len(imports) + 1)}, []byte{byte(len(imports))}
	for i, im := range imports {
		types = append(types, sig(im.params, im.results)...)
		imps = append(append(append(imps, name("wasmeval")...), name(im.name)...), 0x00, byte(i))
		funcs = append(funcs, byte(i))
		exps = append(append(exps, name(im.name)...), 0x00, byte(len(imports)+i))
		body := []byte{0x00} // no locals
		for p := range im.params {
			body = append(body, 0x20, byte(p)) // local.get p
		}
		body = append(body, 0x10, byte(i), 0x0b) // call import i; end
		code = append(append(code, byte(len(body))), body...)
	}
	exps = append(append(exps, name("memory")...), 0x02, 0x00)
	mod := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	mod = append(mod, section(1, types)...)
	mod = append(mod, section(2, imps)...)
	mod = append(mod, section(3, funcs)...)
	mod = append(mod, section(5, []byte{0x01, 0x00, 0x01})...) // one memory of 1 page
	mod = append(mod, section(7, exps)...)
	mod = append(mod, section(10, code)...)
	return mod
}

type abiSink struct{ stdout, stderr strings.Builder }

func (s *abiSink) Stdout(t string)               { s.stdout.WriteString(t) }
func (s *abiSink) Stderr(t string)               { s.stderr.WriteString(t) }
func (s *abiSink) Display(runtimes.Bundle, bool) {}
func (s *abiSink) Status(string, string)         {}

// TestHostABIBadArguments calls every import of the host module with values
// the shim never passes. Each must be refused (or answered with an error),
// never followed out of the guest's memory, and never make the host
// allocate what the guest asked for instead of what it has.
func TestHostABIBadArguments(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := hostModule(rt).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, abiGuest(), wazero.NewModuleConfig().WithName("guest"))
	if err != nil {
		t.Fatal(err)
	}
	mod.Memory().Write(0, []byte("hello"))

	sink := &abiSink{}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := &Instance{sink: sink, runCtx: runCtx, opts: runtimes.InstanceOptions{
		Call: func(ctx context.Context, req []byte) []byte { return []byte(`{"ok":"` + string(req) + `"}`) },
	}}
	defer func() {
		if in.calls != nil {
			in.calls.close()
		}
	}()
	callCtx := context.WithValue(ctx, instKey{}, in)
	call := func(fn string, args ...uint64) []uint64 {
		t.Helper()
		res, err := mod.ExportedFunction(fn).Call(callCtx, args...)
		if err != nil {
			t.Fatalf("%s%v: %v", fn, args, err)
		}
		return res
	}
	i32 := func(v []uint64) int32 { return api.DecodeI32(v[0]) }

	t.Run("emit", func(t *testing.T) {
		call("emit", emitStdout, 0, 5)
		for _, a := range [][2]uint64{{0xffff_fff0, 100}, {0, 0xffff_ffff}, {0xffff_ffff, 2}, {65530, 7}} {
			call("emit", emitStdout, a[0], a[1])
			call("emit", emitDisplay, a[0], a[1])
			call("emit", emitStatus, a[0], a[1])
		}
		call("emit", 42, 0, 5)          // an unknown kind: ignored
		call("emit", emitDisplay, 0, 5) // not JSON
		call("emit", emitStatus, 0, 5)  // not JSON: ignored
		if sink.stdout.String() != "hello" {
			t.Fatalf("stdout %q, want only the one good emit", sink.stdout.String())
		}
		if n := strings.Count(sink.stderr.String(), "outside its 65536 bytes of memory; dropped"); n != 12 {
			t.Fatalf("stderr %q: want 12 notes of emits outside memory, got %d", sink.stderr.String(), n)
		}
		if !strings.Contains(sink.stderr.String(), "bad display bundle") {
			t.Fatalf("stderr %q: no note of the bad bundle", sink.stderr.String())
		}
		// No instance in the context (a call outside a cell): ignored.
		if _, err := mod.ExportedFunction("emit").Call(ctx, emitStdout, 0, 5); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("calls", func(t *testing.T) {
		if id := i32(call("call_wait")); id != -2 {
			t.Fatalf("call_wait with none in flight = %d, want -2", id)
		}
		if id := i32(call("call_start", 0xffff_fff0, 100)); id != -1 {
			t.Fatalf("call_start outside memory = %d, want -1", id)
		}
		if id := i32(call("call_start", 65530, 7)); id != -1 {
			t.Fatalf("call_start across the end of memory = %d, want -1", id)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		huge := i32(call("call_start", 0, 0xffff_ffff))
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Fatalf("a call_start claiming 4 GiB made the host allocate %d MiB", grew>>20)
		}
		if huge >= 0 {
			// Refused with an answer: it must say why.
			if got := i32(call("call_wait")); got != huge {
				t.Fatalf("call_wait = %d, want %d", got, huge)
			}
			n := i32(call("call_result_len", uint64(huge)))
			if n <= 0 || n > 4096 {
				t.Fatalf("answer of the huge request: %d bytes", n)
			}
			call("call_result", uint64(huge), 1024)
			b, _ := mod.Memory().Read(1024, uint32(n))
			if !strings.Contains(string(b), "larger than") {
				t.Fatalf("answer of the huge request: %s", b)
			}
		}

		good := i32(call("call_start", 0, 5))
		if good < 0 || i32(call("call_wait")) != good {
			t.Fatalf("a good call: id %d", good)
		}
		if n := i32(call("call_result_len", 12345)); n != 0 {
			t.Fatalf("call_result_len of an unknown id = %d, want 0", n)
		}
		call("call_result", 12345, 0)                  // unknown id: nothing
		call("call_result", uint64(good), 0xffff_fff0) // outside memory: dropped, no write
		if b, _ := mod.Memory().Read(0, 5); string(b) != "hello" {
			t.Fatalf("memory changed: %q", b)
		}
		if n := i32(call("call_result_len", uint64(good))); n != 0 {
			t.Fatalf("the answer is still held after it was taken: %d bytes", n)
		}
	})

	// The calls outside a cell (no running context) are refused.
	t.Run("outside a cell", func(t *testing.T) {
		idle := &Instance{sink: sink}
		idleCtx := context.WithValue(ctx, instKey{}, idle)
		if res, err := mod.ExportedFunction("call_start").Call(idleCtx, 0, 5); err != nil || api.DecodeI32(res[0]) != -1 {
			t.Fatalf("call_start outside a cell: %v %v", res, err)
		}
		if res, err := mod.ExportedFunction("call_wait").Call(idleCtx); err != nil || api.DecodeI32(res[0]) != -2 {
			t.Fatalf("call_wait outside a cell: %v %v", res, err)
		}
	})
}
