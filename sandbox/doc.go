// Package sandbox runs Python, JavaScript and TypeScript cells for LLM
// agents in persistent sessions, inside a WebAssembly sandbox. It is the one
// package most Go hosts import. TypeScript cells ("ts") have their types
// stripped and run in the session's JavaScript state; [Options.Languages]
// and [SessionOptions.Languages] disable languages.
//
// A [Sandbox] holds what sessions share: the compiled language runtimes,
// made lazily on the first cell of each language. A [Session] is one agent's
// state: a session root directory (the guest's working directory) and, per
// language, an interpreter whose globals persist from cell to cell and from
// request to request. [Session.Eval] runs a [Request] (one or more cells) and
// returns a [Result] in the shape that wasmeval's tools, its line protocol
// and its MCP server all share:
//
//	sb, err := sandbox.New(ctx, sandbox.Options{})
//	...
//	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: dir})
//	...
//	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
//		{Language: "py", Code: "print(6 * 7)"},
//	}})
//
// # Errors
//
// A failure of guest code is data: the cell's status, exit code and output
// (a traceback) in the Result, with Details.IsError set. A Go error means
// the host could not do its job (a runtime that could not start, a closed
// session). An invalid request is a [*RequestError], whose message says what
// was wrong and what would be right; [DecodeRequest] parses untrusted JSON
// into a valid Request.
//
// # Output limits
//
// A cell's output past 50 KB or 3000 lines is cut to its head and tail with
// a marker line; Details.Meta lists the cut cells, and [Session.Output] reads
// the full text back (kept per session, up to a cap). Collecting output never
// buffers more than a bounded amount of host memory per cell, however much
// the guest prints.
package sandbox
