package attack_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestHuntServeTapeDownloads: a session's tape (serve --record-dir) is as
// long as its guest makes it: random bytes are recorded as read, so a
// cell that reads 64 MiB of them makes a tape of 85 MiB in a second,
// whatever its disk quota. Eight downloads of it at once, as its tenant
// may ask, are streamed: the server's heap grows by far less than the
// tape (it grew by eight tapes when each download was a copy in memory).
// Another tenant still gets 404.
func TestHuntServeTapeDownloads(t *testing.T) {
	h := startHuntServerWith(t, sandbox.ManagerOptions{RecordDir: t.TempDir()})

	id := h.create(aliceToken)
	if code, body := h.eval(aliceToken, id, `let n = 0; for (let i = 0; i < 1024; i++) n += crypto.getRandomValues(new Uint8Array(65536)).length; print(n)`); code != 200 || !strings.Contains(body, "67108864") {
		t.Fatalf("the cell that reads randomness: %d %.300s", code, body)
	}
	if code, _ := h.do(bobToken, "GET", "/v1/sessions/"+id+"/tape", ""); code != http.StatusNotFound {
		t.Errorf("another tenant's GET of the tape: %d, want 404", code)
	}
	get := func() (int64, error) {
		req, _ := http.NewRequest("GET", h.url+"/v1/sessions/"+id+"/tape", nil)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		resp, err := (&http.Client{Timeout: testenv.Stretch(120 * time.Second)}).Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, &http.ProtocolError{ErrorString: resp.Status}
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.ContentLength != n {
			t.Errorf("Content-Length %d, body %d bytes", resp.ContentLength, n)
		}
		return n, err
	}
	peak := heapPeak()
	var wg sync.WaitGroup
	sizes := make([]int64, 8)
	for i := range sizes {
		wg.Go(func() {
			n, err := get()
			if err != nil {
				t.Errorf("download %d: %v", i, err)
			}
			sizes[i] = n
		})
	}
	wg.Wait()
	grew := peak()
	t.Logf("eight downloads of a %d MiB tape: the heap grew by %d MiB", sizes[0]>>20, grew>>20)
	if sizes[0] < 64<<20 {
		t.Fatalf("the tape is %d bytes; want the 64 MiB of randomness in it", sizes[0])
	}
	if grew > 2*sizes[0] {
		t.Errorf("the server's heap grew by %d MiB for eight downloads of a %d MiB tape", grew>>20, sizes[0]>>20)
	}
	h.alive(aliceToken, id)
}
