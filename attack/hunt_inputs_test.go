package attack_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/llmhost"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestHuntLLMEndpoint: the answers of the host's own LLM endpoint
// (--llm-url) are input too: a reply of a GiB, one that drips a byte a
// second, chunks that never end, headers that never come, megabytes of
// headers, a redirect loop, redirects to a file: URL and to another host.
// Each llm() call fails in the guest with a clear error (or its cell is
// stopped by its time limit) in bounded time, the host's heap grows by
// less than 128 MiB, no host file and no key reach the guest or another
// host, and the session goes on.
func TestHuntLLMEndpoint(t *testing.T) {
	// Another loopback host, for redirects: the key must not follow.
	var elsewhereAuth sync.Map
	ln2, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereAuth.Store(r.Header.Get("Authorization"), true)
		w.Write([]byte(`{"choices":[{"message":{"content":"from elsewhere"}}]}`))
	}))
	other.Listener.Close()
	other.Listener = ln2
	other.Start()
	defer other.Close()

	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		flusher := w.(http.Flusher)
		switch name {
		case "gib":
			w.Header().Set("Content-Length", fmt.Sprint(1<<30))
			w.Write([]byte(`{"choices":[{"message":{"content":"`))
			chunk := []byte(strings.Repeat("a", 64<<10))
			for i := 0; i < (1<<30)/len(chunk); i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "chunks":
			w.Write([]byte(`{"choices":[{"message":{"content":"`))
			chunk := []byte(strings.Repeat("b", 4<<10))
			for {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				flusher.Flush()
			}
		case "drip":
			w.Write([]byte(`{`))
			flusher.Flush()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-stop:
					return
				case <-time.After(time.Second):
					w.Write([]byte(` `))
					flusher.Flush()
				}
			}
		case "silent":
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		case "headers":
			for i := range 12 {
				w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("h", 1<<20))
			}
			w.Write([]byte(`{"choices":[{"message":{"content":"big headers"}}]}`))
		case "loop":
			http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
		case "file":
			w.Header().Set("Location", "file:///etc/passwd")
			w.WriteHeader(http.StatusFound)
		case "elsewhere":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "echo-key":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"bad request for %s"}}`, r.Header.Get("Authorization"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(stop)

	var current atomic.Pointer[llmhost.Client]
	host := hostcalls.HostFuncs{LLMFunc: func(ctx context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
		return current.Load().LLM(ctx, r)
	}}
	sb, err := sandbox.New(context.Background(), sandbox.Options{Host: host, Languages: []string{"js"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	w := newWorld(t)
	s, err := sb.NewSession(context.Background(), sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())

	const call = `try { const a = await llm('hi'); print('ANSWER', a.length, a.slice(0, 40)) } catch (e) { print('ERR', e.message) }`
	for _, tc := range []struct {
		name    string
		timeout int
		want    string // in the output
		stopped bool   // the cell is stopped by its time limit instead
	}{
		{"a reply of a GiB", 30, "larger than 16 MiB", false},
		{"chunks that never end", 30, "larger than 16 MiB", false},
		{"a reply that drips a byte a second", 1, "", true},
		{"headers that never come", 1, "", true},
		{"12 MiB of headers", 30, "reply headers are larger than 10 MiB", false},
		{"a redirect loop", 30, "redirected more than 10 times", false},
		{"a redirect to a file: URL", 30, "not http or https", false},
		{"a redirect to another host", 30, "from elsewhere", false}, // without the key: checked below
		{"an error that echoes the key", 30, "ERR", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := map[string]string{
				"a reply of a GiB": "gib", "chunks that never end": "chunks", "a reply that drips a byte a second": "drip",
				"headers that never come": "silent", "12 MiB of headers": "headers", "a redirect loop": "loop",
				"a redirect to a file: URL": "file", "a redirect to another host": "elsewhere", "an error that echoes the key": "echo-key",
			}[tc.name]
			c, err := llmhost.New(llmhost.Options{URL: srv.URL + "/" + path + "/v1", APIKey: canaryKey})
			if err != nil {
				t.Fatal(err)
			}
			current.Store(c)
			peak := heapPeak()
			start := time.Now()
			out, status := eval(t, s, "js", call, tc.timeout)
			took := time.Since(start)
			grew := peak()
			t.Logf("%s after %v (heap +%d MiB): %.300q", status, took.Round(time.Millisecond), grew>>20, out)
			hard := time.Duration(sandbox.HardLimitFactor*tc.timeout)*time.Second + 10*time.Second
			if took > testenv.Stretch(hard) {
				t.Errorf("the cell took %v; its hard limit is %ds", took.Round(time.Millisecond), sandbox.HardLimitFactor*tc.timeout)
			}
			switch {
			case tc.stopped && status == ok:
				t.Errorf("the cell completed; want it stopped by its time limit: %q", out)
			case !tc.stopped && !strings.Contains(out, tc.want):
				t.Errorf("the output does not hold %q: %.500q", tc.want, out)
			}
			if grew > 128<<20 {
				t.Errorf("the host's heap grew by %d MiB for one llm() call", grew>>20)
			}
			for _, bad := range append(never, "root:x:") {
				if strings.Contains(out, bad) {
					t.Errorf("the guest read %q", bad)
				}
			}
			alive(t, s, "js")
		})
	}
	elsewhereAuth.Range(func(k, _ any) bool {
		if strings.Contains(k.(string), canaryKey) {
			t.Errorf("the LLM key followed a redirect to another host: %q", k)
		}
		return true
	})
}
