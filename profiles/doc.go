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
//   - code_interpreter: the CodeInterpreter interface (sandbox.RunCode and
//     the code contexts).
//   - python: the Jupyter-backed python tool; not available yet.
//
// Tools is the table of the tools that run in a session (evaluate_python
// now): each names its profile and carries its schemas, how an eval line
// is recognised as its call, and Run, which decodes, validates, runs and
// returns the result. The faces serve the table as it is.
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
