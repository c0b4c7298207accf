package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestStoreFlag: --store's default follows --workspace, "none" turns it
// off, and a URL of no known store is refused naming the flag and the
// right form.
func TestStoreFlag(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		flag, workspace, want string
	}{
		{"", "", ""},
		{"", ws, "dir://" + ws + "/.store"},
		{"none", ws, ""},
		{"dir:///elsewhere", ws, "dir:///elsewhere"},
	} {
		f := storeFlags{url: tc.flag}
		if got, err := f.storeURL(tc.workspace); err != nil || got != tc.want {
			t.Errorf("--store %q --workspace %q: %q, %v; want %q", tc.flag, tc.workspace, got, err, tc.want)
		}
	}
	t.Setenv("WASMEVAL_TOKENS", "t")
	var out, errb bytes.Buffer
	code := doMain(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--store", "ftp://x/y"}, strings.NewReader(""), &out, &errb)
	if code != exitInvalid || !strings.Contains(errb.String(), "--store") || !strings.Contains(errb.String(), "dir:///path") {
		t.Fatalf("--store ftp://x/y: exit %d, %s", code, errb.String())
	}
	out.Reset()
	doMain(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &out, &errb)
	if !strings.Contains(out.String(), "\n  --store URL") {
		t.Error("serve --help does not explain --store")
	}
}

// TestJSJournalFlag: --js-journal sets the journal's cap (0 and none keep
// none, no flag the default), refuses what is not a size, and none makes a
// restarted serve reset a session's JavaScript state, saying so, where
// the default brings it back (TestServeSurvivesSIGKILL).
func TestJSJournalFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{nil, 0},
		{[]string{"--js-journal", "64MiB"}, 64 << 20},
		{[]string{"--js-journal", "none"}, -1},
		{[]string{"--js-journal", "0"}, -1},
	} {
		var f storeFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		var mo sandbox.ManagerOptions
		f.apply(&mo)
		if mo.JSJournalBytes != tc.want {
			t.Errorf("%q: JSJournalBytes %d, want %d", tc.args, mo.JSJournalBytes, tc.want)
		}
	}
	t.Setenv("WASMEVAL_TOKENS", "t")
	var out, errb bytes.Buffer
	code := doMain(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--js-journal", "lots"}, strings.NewReader(""), &out, &errb)
	if code != exitInvalid || !strings.Contains(errb.String(), "js-journal") || !strings.Contains(errb.String(), "512MiB") {
		t.Fatalf("--js-journal lots: exit %d, %s", code, errb.String())
	}

	testenv.RequirePython(t)
	const token = "journal-token"
	ws := t.TempDir()
	p := startServe(t, token, "--workspace", ws, "--js-journal", "none")
	var created struct{ ID string }
	if st := p.Post(t, token, "/v1/sessions", "", &created); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	p.eval(t, token, created.ID, "js", "var j = 5")
	p.Stop(t)
	p = startServe(t, token, "--workspace", ws, "--js-journal", "none")
	js := p.eval(t, token, created.ID, "js", "typeof j")
	if js.Content[0].Text != "'undefined'" || len(js.Details.StatusEvents) == 0 || !strings.Contains(js.Details.StatusEvents[0].Message, "JavaScript") {
		t.Fatalf("JavaScript after a restart without a journal: %+v; want it reset, with a note saying so", js)
	}
}

// serveProcess is a `wasmeval serve` process on a loopback port.
type serveProcess struct{ *testenv.Serve }

// startServe starts the wasmeval binary as `serve args...` with token and
// waits until it listens.
func startServe(t *testing.T, token string, args ...string) *serveProcess {
	t.Helper()
	return &serveProcess{testenv.StartServeBinary(t, wasmevalBinary(t), []string{"WASMEVAL_TOKENS=" + token}, args...)}
}

type evalAnswer struct {
	Content []struct{ Text string }
	Details struct {
		IsError      bool
		StatusEvents []struct{ Kind, Message string }
		Meta         struct {
			Truncated []struct{ OutputID string }
		}
	}
}

func (p *serveProcess) eval(t *testing.T, token, id, lang, code string) evalAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": lang, "code": code}}})
	var a evalAnswer
	if st := p.Post(t, token, "/v1/sessions/"+id+"/eval", string(body), &a); st != http.StatusOK || a.Details.IsError {
		t.Fatalf("eval %q: %d %+v\n%s", code, st, a, p.Log())
	}
	return a
}

// TestServeSurvivesSIGKILL: a `wasmeval serve --workspace W` killed with
// SIGKILL, once after three evals and once with a cell in flight, comes
// back on the same workspace with every session as of its last
// completed eval: Python variables, files, cut outputs, and JavaScript
// state, rebuilt from its journal. Another token still gets 404.
func TestServeSurvivesSIGKILL(t *testing.T) {
	testenv.RequirePython(t)
	const token, other = "store-token", "other-token"
	ws := t.TempDir()
	p := startServe(t, token+","+other, "--workspace", ws)
	var created struct{ ID string }
	if st := p.Post(t, token, "/v1/sessions", "", &created); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	id := created.ID
	var idle struct{ ID string }
	p.Post(t, token, "/v1/sessions", "", &idle) // never evaluated: found too
	p.eval(t, token, id, "py", "x = 1\nopen('f.txt', 'w').write('a')")
	p.eval(t, token, id, "js", "var j = 5")
	cut := p.eval(t, token, id, "py", "x += 1\nopen('f.txt', 'a').write('b')\nprint('row\\n' * 5000)")
	if len(cut.Details.Meta.Truncated) != 1 {
		t.Fatalf("the long output was not cut: %+v", cut.Details.Meta)
	}
	outID := cut.Details.Meta.Truncated[0].OutputID
	p.Cmd.Process.Kill() // SIGKILL
	p.Stop(t)

	p = startServe(t, token+","+other, "--workspace", ws)
	if got := p.eval(t, token, id, "py", "print(x, open('f.txt').read())").Content[0].Text; got != "2 ab" {
		t.Fatalf("after SIGKILL and restart: %q\n%s", got, p.Log())
	}
	req, _ := http.NewRequest("GET", "http://"+p.Addr+"/v1/sessions/"+id+"/outputs/"+outID, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(full), "row") != 5000 {
		t.Fatalf("output %s after the restart: %d, %d rows", outID, resp.StatusCode, strings.Count(string(full), "row"))
	}
	js := p.eval(t, token, id, "js", "j + 1")
	if js.Content[0].Text != "6" || len(js.Details.StatusEvents) != 0 {
		t.Fatalf("JavaScript after the restart: %+v", js)
	}
	if got := p.eval(t, token, idle.ID, "py", "print('idle ok')").Content[0].Text; got != "idle ok" {
		t.Fatalf("the session never evaluated: %q", got)
	}
	if st := p.Post(t, other, "/v1/sessions/"+id+"/eval", `{"cells":[{"language":"py","code":"x"}]}`, nil); st != http.StatusNotFound {
		t.Fatalf("another token's eval: %d, want 404", st)
	}

	// A cell in flight when the process dies is lost, and only it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := `{"cells":[{"language":"py","code":"x = 100\nopen('f.txt', 'a').write('LOST')\nimport time\ntime.sleep(60)"}]}`
		req, _ := http.NewRequest("POST", "http://"+p.Addr+"/v1/sessions/"+id+"/eval", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(ws, id, "f.txt")); strings.Contains(string(b), "LOST") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long cell did not start")
		}
	}
	p.Cmd.Process.Kill()
	p.Stop(t)
	<-done
	p = startServe(t, token+","+other, "--workspace", ws)
	if got := p.eval(t, token, id, "py", "print(x, open('f.txt').read())").Content[0].Text; got != "2 ab" {
		t.Fatalf("after SIGKILL mid-cell: %q, want the state before that cell", got)
	}
}
