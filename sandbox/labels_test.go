package sandbox_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestLabelsAndLanguagesSurviveARestart: a session's labels come back
// with it from the store, and its listed languages name js as soon as it
// is loaded (its JavaScript state waits in the journal for its first JS
// cell), not only once a JS cell has run; a save before that keeps js in
// the stored list.
func TestLabelsAndLanguagesSurviveARestart(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	st := dirStore(t)
	ws := t.TempDir()
	m1 := storeManager(t, ws, st)
	id, err := m1.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := m1.Session("alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if !sess.SetLabel("code_context.language", "js") {
		t.Fatal("a short label was refused")
	}
	if sess.SetLabel("big", strings.Repeat("x", sandbox.MaxLabelBytes)) {
		t.Fatal("a label past MaxLabelBytes was kept")
	}
	evalText(t, m1, "alice", id, "js", "globalThis.kept = 41")
	evalText(t, m1, "alice", id, "py", "x = 1")
	m1.Close(ctx)

	m2 := storeManager(t, ws, st)
	sess, err = m2.Session("alice", id) // loads it
	if err != nil {
		t.Fatal(err)
	}
	info, err := m2.Info(ctx, "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Languages, []string{"js", "py"}) {
		t.Fatalf("loaded session's languages %q, want [js py]: its JS state is live (journaled)", info.Languages)
	}
	if got := sess.Label("code_context.language"); got != "js" {
		t.Fatalf("label after a restart = %q, want js", got)
	}
	if got := sess.Label("big"); got != "" {
		t.Fatalf("the refused label came back: %d bytes", len(got))
	}
	// A Python eval saves the session before any JS cell ran: js stays listed.
	evalText(t, m2, "alice", id, "py", "x += 1")
	m2.Close(ctx)

	m3 := storeManager(t, ws, st)
	if _, err := m3.Session("alice", id); err != nil {
		t.Fatal(err)
	}
	info, err = m3.Info(ctx, "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Languages, []string{"js", "py"}) {
		t.Fatalf("after a Python-only eval and a second restart: languages %q, want [js py]", info.Languages)
	}
	if got := evalText(t, m3, "alice", id, "js", "print(kept + 1)").Content[0].Text; got != "42" {
		t.Fatalf("JS state after two restarts: %q, want 42", got)
	}
	if got := evalText(t, m3, "alice", id, "py", "print(x)").Content[0].Text; got != "2" {
		t.Fatalf("Python state after two restarts: %q, want 2", got)
	}
}
