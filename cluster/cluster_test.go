//go:build linux

package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestThreeNodesBehindHAProxy is issue 16's integration test: PostgreSQL,
// three `wasmeval serve` nodes and HAProxy (round robin) on loopback; 50
// sessions of 20 evals each spread over the nodes, every eval checking
// the session's state (a Python counter and a file it appends to); one
// node killed with SIGKILL a third of the way in. No completed eval may be
// lost, no output may come from another session, and another token gets
// 404 for every session through any node. -short runs 12 sessions of 8.
func TestThreeNodesBehindHAProxy(t *testing.T) {
	testenv.RequirePython(t)
	sessions, evals := 50, 20
	if testing.Short() {
		sessions, evals = 12, 8
	}
	const ttl = 2 * time.Second
	pg := testenv.StartPostgres(t)
	wasmevalBin(t)
	nodes := make([]*node, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i] = startNode(t, fmt.Sprintf("node%d", i+1), pg.URL, ttl)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	lb := newClient(startHAProxy(t, nodes))
	ctx := context.Background()

	type session struct {
		id, mark  string
		confirmed int // the counter as of the last answered eval
		ambiguous int // evals that failed since, which may or may not have run
	}
	ss := make([]*session, sessions)
	for i := range ss {
		id, a := lb.create(ctx, tokenA)
		if id == "" {
			t.Fatalf("create %d: %d %s %v", i, a.status, a.body, a.err)
		}
		ss[i] = &session{id: id, mark: fmt.Sprintf("s%02d", i)}
	}
	// Every session holds a lease on the node that made it: round robin
	// spreads them over all three.
	owned := 0.0
	for _, n := range nodes {
		o := metric(t, newClient(n.addr), "wasmeval_sessions_owned")
		if o == 0 {
			t.Errorf("%s owns no session after %d creates through round robin", n.name, sessions)
		}
		owned += o
	}
	if int(owned) != sessions {
		t.Errorf("the nodes own %v sessions, want %d", owned, sessions)
	}
	// Each node lists every session of the token, whichever node holds it.
	for _, n := range nodes {
		if got := listedIDs(t, newClient(n.addr), tokenA); len(got) != sessions {
			t.Errorf("%s lists %d sessions of token A, want %d", n.name, len(got), sessions)
		}
	}
	if got := listedIDs(t, lb, tokenB); len(got) != 0 {
		t.Errorf("token B lists %d sessions, want none", len(got))
	}
	// An MCP client's code context through the balancer.
	checkMCPThroughBalancer(t, lb.base[len("http://"):])

	var (
		completed atomic.Int64
		failures  atomic.Int64 // answers other than 200 (retried)
		killOnce  sync.Once
		killed    = nodes[1]
		mu        sync.Mutex
		problems  []string
	)
	problem := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 30 {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	total := int64(sessions * (evals + 1))
	step := func(s *session, code string, check func(out string) bool) bool {
		deadline := time.Now().Add(90 * time.Second)
		for attempt := 0; ; attempt++ {
			res, a := lb.eval(ctx, tokenA, s.id, "py", code)
			if a.status == http.StatusOK && res != nil {
				out := output(res)
				if res.Details.IsError || !check(out) {
					problem("session %s (%s): the eval after counter %d (+%d unsure) answered %q (error %v)",
						s.mark, s.id, s.confirmed, s.ambiguous, out, res.Details.IsError)
					return false
				}
				if n := completed.Add(1); n >= total/3 {
					killOnce.Do(func() {
						t.Logf("SIGKILL %s after %d evals", killed.name, n)
						killed.kill()
					})
				}
				return true
			}
			failures.Add(1)
			s.ambiguous++
			if a.status == http.StatusNotFound || a.status == http.StatusBadRequest || a.status == http.StatusUnauthorized {
				problem("session %s (%s): %d %s", s.mark, s.id, a.status, a.body)
				return false
			}
			if time.Now().After(deadline) {
				problem("session %s (%s): no answer within 90s, last %d %s %v", s.mark, s.id, a.status, a.body, a.err)
				return false
			}
			time.Sleep(time.Duration(100+50*min(attempt, 10)) * time.Millisecond)
		}
	}
	// Each worker takes every eighth session and moves them forward one
	// eval at a time, so that the kill lands in the middle of every
	// session's run.
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []*session
			for i := w; i < len(ss); i += workers {
				mine = append(mine, ss[i])
			}
			for _, s := range mine {
				ok := step(s, fmt.Sprintf("counter = 0\nopen('log.txt', 'w').close()\nprint(%q, counter, 0)", s.mark),
					func(out string) bool { return out == s.mark+" 0 0\n" })
				if !ok {
					return
				}
			}
			for e := 1; e <= evals; e++ {
				for _, s := range mine {
					code := fmt.Sprintf("counter += 1\nwith open('log.txt', 'a') as f:\n    f.write(f'{counter}\\n')\n"+
						"print(%q, counter, len(open('log.txt').read().split()))", s.mark)
					ok := step(s, code, func(out string) bool {
						var mark string
						var c, lines int
						if n, _ := fmt.Sscanf(out, "%s %d %d\n", &mark, &c, &lines); n != 3 || mark != s.mark || c != lines ||
							fmt.Sprintf("%s %d %d\n", mark, c, lines) != out {
							return false // another session's output, or memory and files apart
						}
						// The counter moves by one, or by up to one more per
						// eval that failed since (it may have run before
						// its node died); never back.
						if c < s.confirmed+1 || c > s.confirmed+1+s.ambiguous {
							return false
						}
						s.confirmed, s.ambiguous = c, 0
						return true
					})
					if !ok {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d evals answered, %d failed answers retried", completed.Load(), failures.Load())
	if !killed.exited() {
		t.Errorf("%s was never killed", killed.name)
	}

	// Isolation across nodes: the other token gets 404 for every session,
	// through the balancer and from each live node directly.
	for _, s := range ss {
		for _, c := range []*client{lb, newClient(nodes[0].addr), newClient(nodes[2].addr)} {
			if _, a := c.eval(ctx, tokenB, s.id, "py", "print(counter)"); a.status != http.StatusNotFound {
				t.Errorf("token B's eval of %s through %s: %d %s", s.mark, c.base, a.status, a.body)
			}
		}
	}
	// After the kill too, every session is listed.
	listed := map[string]bool{}
	for _, id := range listedIDs(t, lb, tokenA) {
		listed[id] = true
	}
	for _, s := range ss {
		if !listed[s.id] {
			t.Errorf("after the run, session %s (%s) is not listed", s.mark, s.id)
		}
	}
	// The killed node's sessions were taken over by the others.
	takeovers := metric(t, newClient(nodes[0].addr), "wasmeval_session_takeovers_total") +
		metric(t, newClient(nodes[2].addr), "wasmeval_session_takeovers_total")
	if takeovers == 0 {
		t.Error("no session was taken over from the killed node")
	}
	t.Logf("takeovers: %v", takeovers)
}
