package sandbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

func TestWithEventFunc(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	sess, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	var got []sandbox.Event
	ctx := sandbox.WithEventFunc(context.Background(), func(ev sandbox.Event) { got = append(got, ev) })
	req := sandbox.Request{Cells: []sandbox.Cell{
		{Language: "js", Code: "print('a')"},
		{Language: "js", Code: "console.error('b'); log('c'); 1+1"},
	}}
	if _, err := sess.Eval(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := []sandbox.Event{
		{Cell: 0, Kind: sandbox.EventStdout, Text: "a\n"},
		{Cell: 1, Kind: sandbox.EventStderr, Text: "b\n"},
		{Cell: 1, Kind: sandbox.EventStatus, Status: "log", Text: "c"},
		{Cell: 1, Kind: sandbox.EventResult},
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %d", got, len(want))
	}
	for i := range want {
		g := got[i]
		if g.Cell != want[i].Cell || g.Kind != want[i].Kind || g.Status != want[i].Status || (g.Kind != sandbox.EventResult && g.Text != want[i].Text) {
			t.Errorf("event %d = %+v, want %+v", i, g, want[i])
		}
	}
	if got[3].Bundle["text/plain"] != "2" {
		t.Errorf("result bundle %v, want text/plain 2", got[3].Bundle)
	}
	// Without the func, nothing is observed and Eval works as before.
	got = nil
	if _, err := sess.Eval(context.Background(), req); err != nil || got != nil {
		t.Errorf("Eval without EventFunc: %v, events %v", err, got)
	}
}

func TestManagerForkAndOwnerLen(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx := context.Background()
	id, _ := m.Create(ctx, "alice")
	m.Create(ctx, "bob")
	if _, err := m.Fork(ctx, "bob", id); !errors.Is(err, sandbox.ErrNoSession) {
		t.Errorf("fork by another owner: %v, want ErrNoSession", err)
	}
	cp, err := m.Fork(ctx, "alice", id) // no state yet: only files
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Session("alice", cp); err != nil {
		t.Errorf("the copy is not alice's: %v", err)
	}
	if a, b := m.OwnerLen("alice"), m.OwnerLen("bob"); a != 2 || b != 1 {
		t.Errorf("OwnerLen alice %d bob %d, want 2 and 1", a, b)
	}
}
