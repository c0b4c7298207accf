// Package profiles gives wasmeval the request and result shapes of the
// tools it replaces ("profiles"), each decoded, validated, run against a
// sandbox session and encoded by one implementation that every face calls:
// the library, `wasmeval eval` lines, serve's HTTP API and the MCP tools.
//
// The profiles are named after the tools whose shapes they copy:
//
//   - eval: wasmeval's own cell contract (sandbox.Request), as before.
//   - evaluate_python: the asteval tool's {code, globals, reads, writes},
//     run in the real CPython sandbox (RunEvaluatePython).
//   - code_interpreter: the CodeInterpreter interface: runCode,
//     createContext, runInContext and deleteContext (RunCode,
//     CreateContext, RunInContext, DeleteContext), as the MCP tools
//     run_code, create_code_context, run_in_code_context and
//     delete_code_context.
//   - python: the Jupyter-backed python tool's {cells, timeout, cwd,
//     reset} (RunPython), in kernel mode session or per-call.
//
// Tools is the table of the tools of every profile but eval: each names
// its profile and carries its schemas, how an eval line is recognised as
// its call, and Run, which decodes, validates, runs and returns the
// result in the Env a face gives it (its session, how to start fresh
// ones, its code contexts). The faces serve the table as it is.
//
// ParseTools reads the --tools flag of `wasmeval mcp` and `serve`: which
// profiles a face exposes.
//
// # Errors
//
// An invalid call is an *Error that names the profile and the field, and
// says what was wrong and what would be right. A failure of the guest code
// is data in the profile's result, never a Go error.
package profiles
