// Package attack is wasmeval's attack suite: black-box tests that try, as
// an attacker's cells would, to leave the sandbox or to harm the host and
// other tenants, through the library (sandbox), the session manager, the
// eval command's line protocol, the mcp command's stdio and serve over real
// HTTP on loopback (the hunt_*_test.go files: siblings of issue 9's
// defects, looked for as an attacker would). It has no code of its own; `make test`
// runs it with the rest.
//
// The cases are grouped by what they attack:
//
//   - fs: files outside the session root (absolute paths, '..', symbolic
//     links the guest makes or finds, directory descriptors, the stdlib and
//     prelude mounts);
//   - env: the host's environment (a canary variable, the LLM key);
//   - exec: processes, native code, sockets, host objects reachable from
//     JavaScript;
//   - resources: loops, allocations, recursion, output floods, proc_exit,
//     disk: each stops within its cap and leaves the session usable;
//   - tenant: another owner's sessions, files and globals;
//   - protocol: malformed requests on the library face, the raw host-call
//     ABI and the eval command's lines;
//   - inputs from outside the guest (hunt_tapes, hunt_inputs,
//     hunt_toolserver, hunt_outputs, hunt_modules, hunt_serveinputs,
//     hunt_tapeserve): crafted tapes given to replay and tape show, the
//     answers of the LLM endpoint and of tool servers, display data and
//     module files the host reads for the guest, odd paths and lengths on
//     serve's doors, downloads of a tape the guest made long;
//   - native loops (hunt_nativeloops): built-ins that step an iterator in
//     Go, where no interrupt used to land, run in a child eval process
//     that the test kills if a cell outlives its bound or the process
//     grows past 1 GiB.
//
// Every case asserts an outcome (the canary is not in the output, the
// error names the problem) and that the session still evaluates 1+1
// afterwards. Python cases need the CPython artifact: they skip without it,
// and fail when WASMEVAL_REQUIRE_PYTHON is set, as `make test` sets it.
package attack
