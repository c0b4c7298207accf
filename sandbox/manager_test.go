package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

func newManager(t *testing.T, o sandbox.ManagerOptions) *sandbox.Manager {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	m, err := sandbox.NewManager(sb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	return m
}

func jsEval(t *testing.T, m *sandbox.Manager, owner, id, code string) string {
	t.Helper()
	res, err := m.Eval(context.Background(), owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].Text
}

func TestManagerSessions(t *testing.T) {
	ws := t.TempDir()
	m := newManager(t, sandbox.ManagerOptions{Workspace: ws, IdleTimeout: -1})
	ctx := context.Background()
	a, err := m.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Create(ctx, "bob")
	if a == b {
		t.Fatal("two sessions share an id")
	}
	jsEval(t, m, "alice", a, "var secret = 'a-only'")
	if got := jsEval(t, m, "alice", a, "secret"); got != "'a-only'" {
		t.Fatalf("state not kept: %q", got)
	}
	if got := jsEval(t, m, "bob", b, "typeof secret"); got != "'undefined'" {
		t.Fatalf("sessions share state: %q", got)
	}
	// Another owner cannot see or delete alice's session.
	if _, err := m.Eval(ctx, "bob", a, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1"}}}); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatalf("bob evaluated in alice's session: %v", err)
	}
	if err := m.Delete(ctx, "bob", a); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatalf("bob deleted alice's session: %v", err)
	}
	// Each session has its own folder under the workspace; Delete removes it.
	if _, err := os.Stat(filepath.Join(ws, a)); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, "alice", a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, a)); !os.IsNotExist(err) {
		t.Fatalf("folder kept after delete: %v", err)
	}
	if _, err := m.Eval(ctx, "alice", a, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1"}}}); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatalf("deleted session still answers: %v", err)
	}
}

func TestManagerEvictsOldestWhenFull(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{MaxSessions: 2, IdleTimeout: -1})
	ctx := context.Background()
	first, _ := m.Create(ctx, "o")
	second, _ := m.Create(ctx, "o")
	jsEval(t, m, "o", first, "1") // first is now the most recently used
	third, _ := m.Create(ctx, "o")
	if m.Len() != 2 {
		t.Fatalf("len = %d, want 2", m.Len())
	}
	if _, err := m.Session("o", second); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatal("the least recently used session was not evicted")
	}
	for _, id := range []string{first, third} {
		if _, err := m.Session("o", id); err != nil {
			t.Fatalf("session %s evicted: %v", id, err)
		}
	}
}

func TestManagerIdleSweep(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{IdleTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	id, _ := m.Create(ctx, "o")
	time.Sleep(100 * time.Millisecond)
	if n := m.Sweep(ctx); n != 1 {
		t.Fatalf("swept %d sessions, want 1", n)
	}
	if _, err := m.Session("o", id); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatal("idle session kept")
	}
}

func TestManagerBusySessionNotEvicted(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{IdleTimeout: 10 * time.Millisecond})
	ctx := context.Background()
	id, _ := m.Create(ctx, "o")
	done := make(chan string)
	go func() {
		res, err := m.Eval(ctx, "o", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "await new Promise(r => setTimeout(r, 300)); 'finished'"}}})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Content[0].Text
	}()
	time.Sleep(100 * time.Millisecond)
	if n := m.Sweep(ctx); n != 0 {
		t.Fatalf("a session running a cell was evicted (%d)", n)
	}
	if got := <-done; !strings.Contains(got, "finished") {
		t.Fatalf("cell: %q", got)
	}
}

// newFakeManager returns a manager of sessions on the fake runtimes.
func newFakeManager(t *testing.T, o sandbox.ManagerOptions) *sandbox.Manager {
	t.Helper()
	fakes(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	m, err := sandbox.NewManager(sb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	return m
}

func fakeEval(t *testing.T, m *sandbox.Manager, owner, id, code string) {
	t.Helper()
	res, err := m.Eval(context.Background(), owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete {
		t.Fatalf("%q: %s %q", code, c.Status, c.Output)
	}
}

func mustCreate(t *testing.T, m *sandbox.Manager, owner string) string {
	t.Helper()
	id, err := m.Create(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// held reports which of ids owner still holds.
func held(m *sandbox.Manager, owner string, ids ...string) []bool {
	var out []bool
	for _, id := range ids {
		_, err := m.Session(owner, id)
		out = append(out, err == nil)
	}
	return out
}

// hangIn starts a cell that runs until the test ends, making id busy.
func hangIn(t *testing.T, m *sandbox.Manager, owner, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		m.Eval(ctx, owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "hang"}}})
	}()
	<-started
	time.Sleep(50 * time.Millisecond) // until the manager counts it busy
}

// TestManagerOwnerQuota: an owner past its cap evicts its own least
// recently used session, never another owner's; with all its sessions
// busy it is refused.
func TestManagerOwnerQuota(t *testing.T) {
	m := newFakeManager(t, sandbox.ManagerOptions{MaxSessionsPerOwner: 2, IdleTimeout: -1})
	bob := mustCreate(t, m, "bob") // the oldest session of all
	a1, a2 := mustCreate(t, m, "alice"), mustCreate(t, m, "alice")
	fakeEval(t, m, "alice", a1, "set k v") // a2 is now alice's least recently used
	a3 := mustCreate(t, m, "alice")
	if got := held(m, "alice", a1, a2, a3); !slices.Equal(got, []bool{true, false, true}) {
		t.Errorf("alice holds %v of a1, a2, a3; want a2 evicted", got)
	}
	if got := held(m, "bob", bob); !got[0] {
		t.Error("alice's creates evicted bob's session")
	}
	if n := m.OwnerLen("alice"); n != 2 {
		t.Errorf("alice holds %d sessions, want 2", n)
	}
	// Forks count against the same cap (a3 has no state yet: it can be
	// copied).
	a4, err := m.Fork(context.Background(), "alice", a3)
	if err != nil {
		t.Fatal(err)
	}
	if got := held(m, "alice", a1, a3, a4); !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("after a fork alice holds %v of a1, a3, a4; want a1 evicted", got)
	}
	// Every session of alice busy: nothing of hers can go, nobody else's
	// may, so the create is refused.
	hangIn(t, m, "alice", a3)
	hangIn(t, m, "alice", a4)
	if _, err := m.Create(context.Background(), "alice"); !errors.Is(err, sandbox.ErrTooManySessions) || !strings.Contains(err.Error(), "2 sessions") {
		t.Errorf("create with every session busy: %v, want ErrTooManySessions", err)
	}
	if got := held(m, "bob", bob); !got[0] {
		t.Error("a refused create evicted bob's session")
	}
	mustCreate(t, m, "bob") // bob has his own quota
}

// TestManagerGlobalCapOwnerFirst: at the manager's cap, the session
// evicted is one of the owner holding the most, even when another owner's
// is older.
func TestManagerGlobalCapOwnerFirst(t *testing.T) {
	m := newFakeManager(t, sandbox.ManagerOptions{MaxSessions: 4, IdleTimeout: -1})
	alice := mustCreate(t, m, "alice") // the least recently used of all
	time.Sleep(time.Millisecond)
	b := []string{mustCreate(t, m, "bob"), mustCreate(t, m, "bob"), mustCreate(t, m, "bob")}
	mustCreate(t, m, "carol")
	if got := held(m, "alice", alice); !got[0] {
		t.Error("bob holds three sessions, alice one; alice's was evicted")
	}
	if got := held(m, "bob", b...); !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("bob holds %v; want his oldest evicted", got)
	}
	if m.Len() != 4 {
		t.Errorf("len %d, want 4", m.Len())
	}
}

// TestManagerMemoryBudget: over the budget the manager first trims idle
// sessions, then evicts by bytes: the largest idle session of the owner
// holding the most, never a busy one. (The sessions' 5 MB memory limit is
// what a running one reserves: with the default 256 MiB, the busy b3
// would leave no room in a 100 MiB budget for b1's eval.)
func TestManagerMemoryBudget(t *testing.T) {
	const mb = 1 << 20
	m := newFakeManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 100 * mb, TrimIdleAfter: -1, IdleTimeout: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 5 * mb}})
	ctx := context.Background()
	a := mustCreate(t, m, "alice")
	b1, b2, b3 := mustCreate(t, m, "bob"), mustCreate(t, m, "bob"), mustCreate(t, m, "bob")
	fakeEval(t, m, "alice", a, "hold 45000000\ngarbage 30000000")
	fakeEval(t, m, "bob", b1, "hold 20000000")
	fakeEval(t, m, "bob", b2, "hold 30000000")
	fakeEval(t, m, "bob", b3, "hold 1000")
	m.Sweep(ctx) // measures b3 before it gets busy
	hangIn(t, m, "bob", b3)
	m.Sweep(ctx)
	// 125 MB: trimming alice's garbage gives 95 MB, enough; nobody goes.
	if got := held(m, "bob", b1, b2, b3); !slices.Equal(got, []bool{true, true, true}) || !held(m, "alice", a)[0] {
		t.Fatalf("bob holds %v, alice %v; want all kept once trimmed", got, held(m, "alice", a))
	}
	if got := m.ResidentBytes(); got != 95001000 {
		t.Errorf("resident %d after trimming, want 95001000", got)
	}
	// Bob grows to 70 MB (40 + 30 + the busy b3), alice holds 45: 115 MB
	// with nothing left to trim. Bob's largest idle session (b1) goes, not
	// alice's, though hers is the largest session and the least recently
	// used.
	fakeEval(t, m, "bob", b1, "hold 40000000")
	m.Sweep(ctx)
	if got := held(m, "bob", b1, b2, b3); !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("bob holds %v of b1, b2, b3; want b1 (his largest) evicted", got)
	}
	if !held(m, "alice", a)[0] {
		t.Error("alice's session was evicted, though bob held the most")
	}
	if got := m.ResidentBytes(); got > 100*mb {
		t.Errorf("resident %d, over the budget", got)
	}
}

// TestManagerTrimsIdle: a session idle past TrimIdleAfter is trimmed once.
func TestManagerTrimsIdle(t *testing.T) {
	m := newFakeManager(t, sandbox.ManagerOptions{TrimIdleAfter: 50 * time.Millisecond, IdleTimeout: -1})
	id := mustCreate(t, m, "o")
	fakeEval(t, m, "o", id, "hold 1000\ngarbage 5000")
	sess, _ := m.Session("o", id)
	if got := sess.ResidentBytes(); got != 6000 {
		t.Fatalf("resident %d, want 6000", got)
	}
	time.Sleep(100 * time.Millisecond)
	m.Sweep(context.Background())
	if got := m.ResidentBytes(); got != 1000 {
		t.Errorf("resident %d after an idle trim, want 1000", got)
	}
}

// TestManagerMemoryBudgetPython: real Python sizes. A session holding
// 100 MiB live goes over a 64 MiB budget and is evicted; a small one of
// another owner stays.
func TestManagerMemoryBudgetPython(t *testing.T) {
	testenv.RequirePython(t)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 64 << 20, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 192 << 20}})
	ctx := context.Background()
	small, big := mustCreate(t, m, "alice"), mustCreate(t, m, "bob")
	py := func(owner, id, code string) {
		t.Helper()
		res, err := m.Eval(ctx, owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete {
			t.Fatalf("%s %q", c.Status, c.Output)
		}
	}
	py("alice", small, "x = 1")
	py("bob", big, "keep = b'x' * (100 << 20)")
	countedOrEvicted(t, m, "bob", big, 100<<20)
	m.Sweep(ctx)
	if !held(m, "alice", small)[0] || held(m, "bob", big)[0] {
		t.Errorf("alice holds %v, bob %v; want bob's 100 MiB session evicted", held(m, "alice", small), held(m, "bob", big))
	}
	if got := m.ResidentBytes(); got > 64<<20 {
		t.Errorf("resident %d after the sweep, over the budget", got)
	}
}

// TestManagerMemoryBudgetJS: JavaScript sessions count in the byte budget
// (their VM's measured size): one holding 80 MiB of live strings goes over
// a 64 MiB budget and is evicted; a small one of another owner stays.
func TestManagerMemoryBudgetJS(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 64 << 20, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 128 << 20}})
	ctx := context.Background()
	small, big := mustCreate(t, m, "alice"), mustCreate(t, m, "bob")
	jsEval(t, m, "alice", small, "globalThis.x = 1")
	// 80 distinct strings of 1 MiB each, kept in a global.
	if out := jsEval(t, m, "bob", big, "globalThis.keep = []; for (let i = 0; i < 80; i++) keep.push(String(i).padEnd(1 << 20, 'x')); keep.length"); !strings.Contains(out, "80") {
		t.Fatalf("the big cell: %q", out)
	}
	countedOrEvicted(t, m, "bob", big, 80<<20)
	m.Sweep(ctx)
	if !held(m, "alice", small)[0] || held(m, "bob", big)[0] {
		t.Errorf("alice holds %v, bob %v; want bob's 80 MiB session evicted", held(m, "alice", small), held(m, "bob", big))
	}
	if got := m.ResidentBytes(); got > 64<<20 {
		t.Errorf("resident %d after the sweep, over the budget", got)
	}
}

// TestResidentBytesCountsKeptOutputs: the full text of cut outputs that a
// session keeps for output(id) (up to 64 MiB a session) counts in its
// resident bytes, so the byte budget sees a session that printed a lot.
func TestResidentBytesCountsKeptOutputs(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: -1, IdleTimeout: -1, TrimIdleAfter: -1})
	id := mustCreate(t, m, "alice")
	for range 6 { // each cell's output is kept up to 8 MiB
		jsEval(t, m, "alice", id, "for (let i = 0; i < 10; i++) console.log(String(i).padEnd(1 << 20, 'x'))")
	}
	sess, _ := m.Session("alice", id)
	if got := residentAtLeast(sess, 48<<20); got < 48<<20 {
		t.Errorf("a session keeping 48 MiB of cut outputs counts %d bytes", got)
	}
}

// countedOrEvicted fails t unless owner's session id counts at least n
// resident bytes, or is evicted, within 5 s. The manager's own sweep after
// an eval measures an idle session and evicts it when the budget is short,
// so by the time the test looks the session may be gone (closed, it counts
// 0): an eviction the budget made is the count at work.
func countedOrEvicted(t *testing.T, m *sandbox.Manager, owner, id string, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sess, err := m.Session(owner, id)
		if err != nil {
			return // evicted by the manager's sweep
		}
		got := sess.ResidentBytes()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			if held(m, owner, id)[0] {
				t.Fatalf("a session holding %d MiB counts %d bytes", n>>20, got)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// residentAtLeast returns sess.ResidentBytes once it is at least n, or
// after 5 s: while the manager's sweep measures the session (after each
// eval) ResidentBytes returns the last measurement.
func residentAtLeast(sess *sandbox.Session, n int64) int64 {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := sess.ResidentBytes()
		if got >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}
