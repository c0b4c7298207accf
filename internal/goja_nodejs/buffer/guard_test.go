package buffer

import (
	"runtime"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja"
)

func newBufferVM(t *testing.T) *goja.Runtime {
	t.Helper()
	vm := goja.New()
	module := vm.NewObject()
	_ = module.Set("exports", vm.NewObject())
	Require(vm, module)
	if err := vm.Set("Buffer", module.Get("exports").ToObject(vm).Get("Buffer")); err != nil {
		t.Fatal(err)
	}
	return vm
}

// TestBufferAnnouncesAllocations: Buffer's functions tell the runtime's
// allocation guard at least what they allocate, before they do, and a
// guard that throws stops them with an error the script catches; they
// announced nothing, so a session's guard never saw them (FORK.md item 4).
func TestBufferAnnouncesAllocations(t *testing.T) {
	vm := newBufferVM(t)
	if _, err := vm.RunString(`
var ascii = 'x'.repeat(4e6), wide = '\u00e9'.repeat(2e6), cjk = '\u4e2d'.repeat(2e6);
var buf = Buffer.alloc(4e6, 'ab'), bad = Buffer.alloc(4e6, 255), wideBuf = Buffer.from(wide);
var hexText = buf.toString('hex'), b64 = buf.toString('base64');
`); err != nil {
		t.Fatal(err)
	}
	cases := []string{
		"Buffer.alloc(8e6)",
		"Buffer.alloc(4e6, 'ab')",
		"Buffer.from(ascii)",
		"Buffer.from(wide)",
		"Buffer.from(cjk)",
		"Buffer.from(hexText, 'hex')",
		"Buffer.from(b64, 'base64')",
		"Buffer.from(buf)",
		"Buffer.from({ length: 4e6 })",
		"Buffer.concat([buf, buf])",
		"buf.toString('hex')",
		"buf.toString('base64')",
		"buf.toString()",
		"bad.toString()",
		"wideBuf.toString()",
		"Buffer.alloc(8e6).write(cjk)",
	}
	var asked int64
	room := int64(-1)
	vm.SetAllocGuard(func(n int64) {
		asked += n
		if room >= 0 && n > room {
			panic(vm.NewGoError(errRefused))
		}
	})
	for _, code := range cases {
		asked = 0
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		v, err := vm.RunString(code)
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		runtime.KeepAlive(v)
		took := int64(m1.TotalAlloc - m0.TotalAlloc)
		t.Logf("%s: took %d, announced %d", code, took, asked)
		if asked < took*9/10 { // a tenth for the VM's own
			t.Errorf("%s: announced %d bytes and took %d", code, asked, took)
		}
	}
	room = 1 << 20
	for _, code := range cases {
		v, err := vm.RunString("try { " + code + "; 'made' } catch (e) { String(e) }")
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(); got != "GoError: refused" {
			t.Errorf("%s with 1 MiB of room: %s, want the guard's error", code, got)
		}
	}
}

var errRefused = refusedError{}

type refusedError struct{}

func (refusedError) Error() string { return "refused" }
