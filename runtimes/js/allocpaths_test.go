package js_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestNativeAllocationPathsAreRefused: the built-ins that make a big list
// or text in one native call from a small argument (a regexp's matches,
// the keys of a typed array, a list of arguments from an array-like, a
// typed array's join, a parse of eval'd code) are refused before they
// make it, with a RangeError the cell catches, and the host's heap stays
// near the session's limit; before, each went on to 0.3-2 GB in a 64 MiB
// session, then the monitor interrupted the cell (internal/goja/FORK.md,
// item 4).
func TestNativeAllocationPathsAreRefused(t *testing.T) {
	const limit = 64 << 20
	bombs := []struct{ name, code string }{
		{"regexp replace", "const s = 'x'.repeat(8 << 20); s.replace(/x/g, 'y')"},
		{"regexp match", "const s = 'x'.repeat(8 << 20); s.match(/x/g)"},
		{"regexp split", "const s = 'x'.repeat(8 << 20); s.split(/(?:)/)"},
		{"regexp2 replace", "const s = 'x'.repeat(4 << 20); s.replace(/x(?=x)/g, 'y')"},
		{"keys of a typed array", "Object.keys(new Uint8Array(8e6))"},
		{"ownKeys of a typed array", "Reflect.ownKeys(new Uint8Array(8e6))"},
		{"entries of a typed array", "Object.entries(new Uint8Array(2e6))"},
		{"descriptors of a typed array", "Object.getOwnPropertyDescriptors(new Uint8Array(2e6))"},
		{"assign from a typed array", "Object.assign({}, new Uint8Array(8e6))"},
		{"fill of an array-like", "Array.prototype.fill.call({ length: 3e6 }, 0)"},
		{"String.raw", "String.raw({ raw: { length: 1e7 } })"},
		{"eval of a dense literal", "eval('[' + '0,'.repeat(3e6) + ']')"},
		{"new Function", "new Function('return [' + '0,'.repeat(3e6) + ']')"},
	}
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: limit})
			s.ok("globalThis.kept = 'still here'")
			stop := heapPeak()
			got := result(s, "(() => { try { "+b.code+"; return 'made' } catch (e) { return (e instanceof RangeError) + ' ' + e.message } })()")
			peak := stop()
			t.Logf("heap peak +%d MiB: %s", peak>>20, firstLine(got))
			// The refusal (a RangeError the cell catches) is what the
			// hooks give (internal/goja's TestAllocGuardCoversEveryPath
			// checks each one without a monitor). Here the memory
			// monitor may stop the cell first (uncatchable) when its
			// estimate counts garbage that a GC has not yet freed (the
			// steps of a builder let through below the limit, and in a
			// whole-package run earlier tests' garbage): either stops the
			// bomb, and the heap's bound below is what matters.
			monitor := strings.Contains(got, "the cell failed") && strings.Contains(got, "memory limit exceeded")
			if !strings.HasPrefix(got, "'true memory limit") && !monitor {
				t.Errorf("%s: %s, want the cell to catch a RangeError 'memory limit...' (or the memory monitor to stop it)", b.code, got)
			}
			// What the cell made before (its argument) and the garbage of
			// steps that were let through.
			if bound := int64(2 * limit); peak > bound {
				t.Errorf("the heap grew by %d MiB, more than %d MiB", peak>>20, bound>>20)
			}
			runtime.GC()
			if got, _ := s.ok("kept"); got != "'still here'" {
				t.Errorf("after the bomb: kept = %s", got)
			}
		})
	}
}
