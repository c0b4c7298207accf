// Package js is the JavaScript backend of wasmeval: goja (an ECMAScript
// interpreter in pure Go), one VM per session. It is implementation detail of
// the sandbox package: import sandbox, not this.
//
// # Cells
//
// A cell runs as a script in the session's global scope. Its top-level
// declarations (var, let, const, function, class) become properties of the
// global object, so later cells see them and may declare them again, as in
// Node's REPL. A cell that uses top-level await or return runs as the body of
// an async arrow function instead; its declarations are hoisted out of that
// function first (see hoist.go), so they persist all the same. Positions in
// stack traces are those of the cell's own code, in a file named <cell-N>,
// N counting the cells since the session started or was reset, as Python's
// tracebacks name theirs. A TypeScript cell (typescript.go) has its types
// stripped by esbuild and runs as a JavaScript cell in the same VM, with
// positions in its TypeScript source.
//
// The cell's result is its return value or the value of its last expression
// statement, rendered the way Node's util.inspect renders it.
//
// # Event loop
//
// Timers, microtasks and promises run on the goroutine that called Run. A cell
// ends when its own promise has settled and no referenced timer is left, or
// when its context is done: then the VM is interrupted, the cell's timers are
// cancelled, and the session keeps its state.
//
// # Guest API
//
// Besides ECMAScript: console, print and display (prelude/js/console.js);
// timers and queueMicrotask; process (a safe subset: env is
// InstanceOptions.Env, cwd() is the session root, argv is empty, exit()
// stops the cell by throwing); the Web and Node globals of
// prelude/js/web.js (Buffer, URL, TextEncoder, structuredClone,
// AbortController, crypto, Blob, Headers, Request, Response, and a fetch
// that rejects: there is no network); require, import and import() of
// files in the session root, of packages in its node_modules (npm.go) and
// of the built-in modules of prelude/js/node.js (fs, path, util, events,
// buffer, url, crypto, ...; node.go); and the file helpers read(path),
// write(path, text) and append(path, text). Date, Math.random and crypto
// use InstanceOptions.Now and Rand.
//
// # Sandbox
//
// The guest has no host modules and no network. require and static import
// load .js, .mjs, .cjs and .json files inside the session root only (a
// package's too), through an os.Root, which refuses `..` and symbolic links
// out of the root (and, as os.Root does, symbolic links with absolute
// targets). The fs module reaches the root through wasm.GuestFS, the Python
// guest's view of it, with the session's disk quota (nodefs.go).
//
// InstanceOptions.MemoryLimitBytes (default 256 MiB) caps what the session
// holds beyond a fresh VM, across cells, measured for that session alone
// (walk.go, memory.go): another session's allocation never counts against
// it. Built-ins that would make one huge string, array or buffer, or recurse
// natively into a very deep structure, throw a RangeError first, and those
// that make a big result reserve its size with the host before they make it
// (prelude/js/guards.js); a process-wide monitor interrupts a running cell
// that takes its session past the limit. A cell that ends with its session
// over the limit fails, and the global bindings it created are released.
//
// Code that goja's parser or compiler would take without limit in native
// code is refused before it is parsed (source.go): nesting deeper than 2000
// brackets or prefix operators, syntax trees deeper than 3000. The BigInt
// operators **, << and >> refuse results of more than 2^22 bits. The same
// guards apply to code made at run time with eval and the Function
// constructors. A text of more than 100,000 characters is not parsed as a
// BigInt by BigInt(), BigInt.asIntN and asUintN (guards.js), and goja's own
// BigInt(text) refuses a result past the session's BigInt limit; a BigInt
// array or DataView keeps any text mod 2^64, read once in linear time, and
// a comparison with a text decides by its length (internal/goja/FORK.md).
// Each regexp2 match (patterns with lookaround or
// backreferences) stops after 1 s, and each loop that calls code or makes
// objects calls a safe point every 65536 turns, where the memory monitor
// can measure the session.
//
// No goroutine of the runtime lets a panic end the process: Run, its
// timers, interrupts and host calls recover, and report the failure as the
// cell's.
//
// # Notes
//
//   - const bindings at the top level of a cell are writable afterwards: they
//     are hoisted to global properties so that re-running the cell works.
//   - Stack overflow is a RangeError, "Maximum call stack size exceeded",
//     that a try/catch in the cell can catch, as in V8; recursion in goja's
//     native code (JSON, join and toString, flat) counts against the same
//     1000 frames (internal/goja/native_depth.go).
//   - ES modules are rewritten to CommonJS. In a module file, imported
//     bindings are live (read through the exporting module's namespace, whose
//     exports exist from the module's start, so import cycles work); a cell's
//     imports are copies taken at import time. A module cannot use top-level
//     await.
//   - goja does not parse `for await` or async generators: cells and
//     module files that use them are lowered by esbuild first (lower.go).
//     Response and Request bodies are bytes, not streams; fs has no watch.
//   - Error.prototype.stack is goja's text (tab-indented frames with program
//     counters); the REPL's rendering of errors cleans it to Node's format.
//   - eval is always an indirect eval: it runs in the global scope, not in
//     its caller's, and its let, const and class declarations stay inside it.
//   - The call stack holds 1000 frames: an overflow through native frames
//     unwinds by a Go panic a frame, which no interrupt stops.
//   - Array methods refuse an array-like (or sparse array) longer than the
//     memory limit allows a dense array to be: they would loop over its
//     length in native code.
//   - A doubling string (`s = s + s`, `${s}${s}`) is stopped before the
//     copy that would pass the limit: its result is reserved first.
//   - sort with a comparator sorts a list of the values and writes it back,
//     as the language says (goja sorts in place).
//   - Memory that only a Go closure holds is not seen by the measure:
//     Function.prototype.bind keeps its arguments where it is.
package js
