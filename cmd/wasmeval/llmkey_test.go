package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmeval/wasmeval/internal/llmhost"
)

// TestEvalLLMWithoutKey: with --llm-url but no WASMEVAL_LLM_API_KEY,
// llm() fails before any request, with a message naming the variable.
func TestEvalLLMWithoutKey(t *testing.T) {
	t.Setenv(llmhost.KeyEnv, "")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
	}))
	defer srv.Close()
	cell, _ := json.Marshal(map[string]any{"cells": []map[string]string{{"language": "js",
		"code": "try { await llm('hi') } catch (e) { print(e.message) }"}}})
	code, stdout, stderr := run(t, context.Background(), string(cell)+"\n", "eval", "--cwd", t.TempDir(), "--llm-url", srv.URL+"/v1")
	if code != exitOK {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	res := results(t, stdout)
	if len(res) != 1 || !strings.Contains(summary(res[0]), "llm: no API key for the LLM endpoint: the host must set WASMEVAL_LLM_API_KEY") {
		t.Errorf("results %v", res)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the endpoint got %d requests without a key; want none", n)
	}
}
