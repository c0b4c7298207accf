// Package server is wasmeval's HTTP face for untrusted agents: sessions
// over a JSON API with bearer-token auth, Server-Sent Events streaming,
// limits and Prometheus metrics. `wasmeval serve` runs it; /openapi.json
// (docs/openapi.json) describes the endpoints.
//
// Every session belongs to the token that created it: the owner is a hash
// of the token, and any other token gets 404 for it.
package server
