package python_test

import (
	"strings"
	"testing"
)

// TestHugeEmits: a display bundle or a status event is decoded whole by
// the host, so one larger than its cap is dropped with a note (not decoded
// into a multiple of its size); the cell goes on.
func TestHugeEmits(t *testing.T) {
	inst, _ := newInstance(t)
	tests := []struct{ name, code, want string }{
		{"display", "display('x' * (40 << 20))\nprint('after')", "a display bundle of 40 MiB was dropped: one display may carry 32 MiB"},
		{"result", "'y' * (40 << 20)", "a display bundle of 40 MiB was dropped"},
		{"status", "import _wasmeval, json\n_wasmeval.emit(5, json.dumps({'kind': 'log', 'message': 'z' * (2 << 20)}))\nprint('after')", "a status event of 2048 KiB was dropped: one event may carry 1024 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, o := run(t, inst, tc.code)
			out := r.out.String()
			if len(out) > 1000 {
				t.Fatalf("%d bytes of output: the big payload got through", len(out))
			}
			if o.Failed || !strings.Contains(out, tc.want) || len(r.display)+len(r.result) != 0 {
				t.Fatalf("%+v %q (%d displays)", o, out, len(r.display)+len(r.result))
			}
		})
	}
	if r, o := run(t, inst, "display('small')\nprint('ok')"); o.Failed || r.out.String() != "ok\n" || len(r.display) != 1 {
		t.Fatalf("after: %+v %q %v", o, r.out.String(), r.display)
	}
}
