package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/server"
)

// TestCreateSessionEnv: POST /v1/sessions with {"env": {...}} sets the
// session's guest environment; a bad body or variable is a 400 saying what
// is wrong, and makes no session.
func TestCreateSessionEnv(t *testing.T) {
	ts := newServer(t, server.Config{})
	r := do(t, "POST", ts.URL+"/v1/sessions", tokenA, map[string]any{"env": map[string]string{"PROJECT": "wasmeval", "MY_API_KEY": "mine"}})
	wantStatus(t, r, http.StatusCreated)
	var v struct{ ID string }
	r.json(t, &v)
	res := ts.eval(t, tokenA, v.ID, cells("js", `print(process.env.PROJECT, process.env.MY_API_KEY, process.env.HOME === process.cwd())`))
	if got := output(res); got != "wasmeval mine true\n" {
		t.Errorf("output %q", got)
	}
	other := ts.create(t, tokenA) // an empty body: no env of the other session's
	if got := output(ts.eval(t, tokenA, other, cells("js", `print(process.env.PROJECT)`))); got != "undefined\n" {
		t.Errorf("a session created without env sees %q", got)
	}
	for _, tt := range []struct{ body, want string }{
		{`{"env": {"A-B": "x"}}`, `env: the variable name "A-B" has '-'`},
		{`{"env": {"A": 1}}`, `the body is not {"env": {"NAME": "VALUE", ...}} (or empty)`},
		{`{"environment": {}}`, `unknown field "environment"`},
		{`[1]`, `the body is not {"env"`},
	} {
		r := do(t, "POST", ts.URL+"/v1/sessions", tokenA, tt.body)
		wantStatus(t, r, http.StatusBadRequest)
		if msg := r.errorMessage(t); !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.body, msg, tt.want)
		}
	}
	if n := ts.mgr.Len(); n != 2 {
		t.Errorf("%d sessions; want the 2 created", n)
	}
}
