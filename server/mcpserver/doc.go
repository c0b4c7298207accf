// Package mcpserver is wasmeval's Model Context Protocol server, built on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). It serves five
// tools over any MCP transport:
//
//	eval                 the cell request of DESIGN.md ({"cells": [...]}) in this
//	                     connection's own session; the result's content as MCP
//	                     content (text, and images as image content), its
//	                     details as the structured result
//	run_code             one-shot {"language","code"} in a throwaway session;
//	                     CodeInterpreter outputs as the structured result
//	create_code_context  a new persistent session -> {"id": ...}
//	run_in_code_context  {"id","language","code"} in that session
//	delete_code_context  {"id"}
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
