package sandbox

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/wasmeval/wasmeval/store"
)

// TestJSJournalFramesStayFew: a journal of many cells is a few frames (a
// store's record names each), merged by concatenation, entries in order,
// each frame named by its bytes' SHA-256.
func TestJSJournalFramesStayFew(t *testing.T) {
	var frames []store.Frame
	var all []byte
	for i := range 1000 {
		data := fmt.Appendf(nil, "entry %04d;", i)
		if i%97 == 0 {
			data = bytes.Repeat(data, 50) // now and then a large one
		}
		all = append(all, data...)
		frames = mergeFrames(append(frames, store.Frame{Sum: sha256.Sum256(data), Data: data}))
		if len(frames) > 20 {
			t.Fatalf("after %d entries the journal is %d frames", i+1, len(frames))
		}
	}
	var got []byte
	for _, f := range frames {
		if sha256.Sum256(f.Data) != f.Sum {
			t.Fatal("a merged frame's Sum is not its bytes' SHA-256")
		}
		got = append(got, f.Data...)
	}
	if !bytes.Equal(got, all) {
		t.Fatal("the merged frames do not hold the entries in order")
	}
	t.Logf("1000 entries: %d frames", len(frames))
}
