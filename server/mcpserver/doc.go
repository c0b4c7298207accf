// Package mcpserver is wasmeval's Model Context Protocol server, built on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). It serves the
// tools of wasmeval's profiles (package profiles) over any MCP transport:
//
//	eval                 the cell request of docs/design.md ({"cells": [...]}) in
//	                     this connection's own session; the result's content as
//	                     MCP content (text, and images as image content), its
//	                     details as the structured result
//	python               the Jupyter-backed python tool's {"cells", "timeout",
//	                     "cwd", "reset", "kernelMode"} in the same session
//	evaluate_python      the asteval tool's {"code", "globals", "reads", "writes"}
//	                     in a fresh namespace of the same session
//	run_code             {"language","code","timeoutMs"} in a throwaway session
//	create_code_context  {"language","cwd"} -> {"contextId"}: a session of its own
//	run_in_code_context  {"contextId","code","timeoutMs"} in that session
//	delete_code_context  {"contextId"} -> {"ok": true}
//
// The profiles' tools are profiles.Tools, served as the table has them
// (profiles.go); Config.Tools picks the profiles served.
//
// `wasmeval mcp` serves it on stdin and stdout (Server.MCP with
// mcp.StdioTransport); `wasmeval serve` mounts Server.HTTPHandler (streamable
// HTTP) at /mcp behind its bearer tokens.
//
// Sessions live in a sandbox.Manager. Their owner is the bearer token's owner
// id over HTTP (so a token's code contexts are reachable from any of its MCP
// sessions, as over the JSON API), and a random id per connection otherwise.
// The eval tool's session belongs to the MCP session that used it and is
// deleted when that MCP session ends.
//
// SamplingHost is a hostcalls.Host whose LLM sends sampling/createMessage to
// the MCP client that runs the cell, when the client offers sampling.
//
// Bad input is a tool error (isError) whose text says what was wrong.
package mcpserver
