// Package server is wasmeval's HTTP face for untrusted agents: sessions
// over a JSON API with bearer-token auth, Server-Sent Events streaming,
// limits and Prometheus metrics. `wasmeval serve` runs it; /openapi.json
// (docs/openapi.json) describes the endpoints.
//
// Every session belongs to the token that created it: the owner is a hash
// of the token, and any other token gets 404 for it.
//
// # Host calls
//
// While an eval streams (Accept: text/event-stream), each tool, llm and
// agent call of its guest becomes an SSE event named "call" with a
// CallEvent ({"callId","kind","request"}), which the client answers with
// POST /v1/sessions/{id}/calls/{callId} and a CallAnswer ({"result": ...}
// or {"error": {"message"}}) within Config.CallTimeout; another token, or a
// call already answered or given up, gets 404. Evals that do not stream and
// /v1/run use Config.Host, the operator's backends.
package server
