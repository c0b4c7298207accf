package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
