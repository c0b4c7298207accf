package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/llmhost"
	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestServeJSTimersWallClock: under `serve --workspace` (a dir store) a
// JavaScript timer fires while a host call is in flight, as in node: a
// race between llm() on a slow loopback endpoint and a 100 ms timer is won
// by the timer. After SIGKILL and a restart, twice, the session's
// JavaScript state comes back rebuilt from its journal (the winners, and
// the interval's ticks the wall clock decided), without asking the
// endpoint again.
func TestServeJSTimersWallClock(t *testing.T) {
	testenv.RequirePython(t)
	const token = "clock-token"
	t.Setenv(llmhost.KeyEnv, "sk-test")
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "slow answer"}}}})
	}))
	defer srv.Close()
	ws := t.TempDir()
	args := []string{"--workspace", ws, "--llm-url", srv.URL + "/v1", "--llm-model", "m"}
	p := startServe(t, token, args...)
	var created struct{ ID string }
	if st := p.Post(t, token, "/v1/sessions", "", &created); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	id := created.ID
	const race = `var winners = globalThis.winners || [];
winners.push(await Promise.race([llm('q').then(() => 'llm'), new Promise(r => setTimeout(() => r('timer'), 100))]));
var ticks = 0; const iv = setInterval(() => ticks++, 40); await llm('again'); clearInterval(iv);
print(winners.at(-1), ticks > 3)`
	const probe = "print(winners.join(','), ticks)"
	for move := 0; move < 2; move++ {
		if got := p.eval(t, token, id, "js", race).Content[0].Text; got != "timer true" {
			t.Fatalf("move %d: the race printed %q, want the timer to win while llm() is slow\n%s", move, got, p.Log())
		}
		want := p.eval(t, token, id, "js", probe).Content[0].Text
		p.Cmd.Process.Kill() // SIGKILL
		p.Stop(t)
		before := asked.Load()

		p = startServe(t, token, args...)
		got := p.eval(t, token, id, "js", probe)
		if got.Content[0].Text != want || len(got.Details.StatusEvents) != 0 || !strings.HasPrefix(want, "timer") {
			t.Fatalf("move %d: after SIGKILL and a restart %+v, want %q\n%s", move, got, want, p.Log())
		}
		if n := asked.Load() - before; n != 0 {
			t.Fatalf("move %d: the rebuild asked the endpoint %d times; its answers are in the journal", move, n)
		}
	}
}
