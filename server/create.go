package server

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wasmeval/wasmeval/sandbox"
)

// createBody is the optional body of POST /v1/sessions.
type createBody struct {
	// Env is set in the session's guest environment, over the default one
	// and the operator's --env: names are letters, digits and '_', values
	// strings.
	Env map[string]string `json:"env"`
}

// decodeCreate reads the body of POST /v1/sessions: empty, or
// {"env": {"NAME": "VALUE", ...}}. It returns the environment to set (nil
// for none), or an error that says what is wrong.
func decodeCreate(body []byte) (map[string]string, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var b createBody
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf(`the body is not {"env": {"NAME": "VALUE", ...}} (or empty): %v`, err)
	}
	if dec.More() {
		return nil, fmt.Errorf(`the body has more than one JSON value; send one object {"env": {...}}`)
	}
	if err := sandbox.CheckEnv(b.Env); err != nil {
		return nil, fmt.Errorf("env: %v", err)
	}
	return b.Env, nil
}
