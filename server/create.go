package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// createBody is the optional body of POST /v1/sessions.
type createBody struct {
	// Env is set in the session's guest environment, over the default one
	// and the operator's --env: names are letters, digits and '_', values
	// strings.
	Env map[string]string `json:"env"`
	// Python is the session's Python backend, "wasm" or "jupyter", where
	// the operator lets sessions choose (--python-backend-choice); empty
	// means the operator's --python-backend.
	Python string `json:"python"`
}

// decodeCreate reads the body of POST /v1/sessions: empty, or
// {"env": {"NAME": "VALUE", ...}}. It returns the environment to set (nil
// for none), or an error that says what is wrong.
func decodeCreate(body []byte) (map[string]string, error) {
	o, err := decodeCreateOptions(body)
	return o.Env, err
}

// decodeCreateOptions reads the body of POST /v1/sessions: empty, or
// {"env": {...}, "python": "wasm" or "jupyter"}, both optional.
func decodeCreateOptions(body []byte) (sandbox.CreateOptions, error) {
	var none sandbox.CreateOptions
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return none, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var b createBody
	if err := dec.Decode(&b); err != nil {
		return none, fmt.Errorf(`the body is not {"env": {"NAME": "VALUE", ...}} (or empty), with "python": "wasm" or "jupyter" if the session picks its Python backend: %v`, err)
	}
	if dec.More() {
		return none, fmt.Errorf(`the body has more than one JSON value; send one object {"env": {...}}`)
	}
	if err := sandbox.CheckEnv(b.Env); err != nil {
		return none, fmt.Errorf("env: %v", err)
	}
	if b.Python != "" && !slices.Contains(sandbox.PythonBackends(), b.Python) {
		return none, fmt.Errorf("python: %q is not a Python backend; use %s", b.Python, strings.Join(sandbox.PythonBackends(), " or "))
	}
	return sandbox.CreateOptions{Env: b.Env, PythonBackend: b.Python}, nil
}

// createRefused answers a session creation that the manager refused for
// what the body asked (a backend the operator does not offer), and says
// whether it did.
func createRefused(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, sandbox.ErrBadPythonBackend) {
		return false
	}
	writeError(w, http.StatusBadRequest, "invalid_request", "python: "+strings.TrimPrefix(err.Error(), sandbox.ErrBadPythonBackend.Error()+": "))
	return true
}
