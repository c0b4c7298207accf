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
// stack traces are those of the cell's own code, in a file named <cell>.
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
// stops the cell by throwing); require, import and import() of files in the
// session root; and the file helpers read(path), write(path, text) and
// append(path, text). Date and Math.random use InstanceOptions.Now and Rand.
//
// # Sandbox
//
// The guest has no host modules, no fs module and no network. require and
// static import load .js, .mjs, .cjs and .json files inside the session root
// only, through an os.Root, which refuses `..` and symbolic links out of the
// root (and, as os.Root does, symbolic links with absolute targets). Memory is
// guarded twice: built-ins that would allocate one huge string, array or
// buffer, or recurse natively into a very deep structure, throw a RangeError
// first (prelude/js/guards.js); and a watchdog interrupts a cell whose heap
// growth passes InstanceOptions.MemoryLimitBytes (memory.go).
//
// # Notes
//
//   - const bindings at the top level of a cell are writable afterwards: they
//     are hoisted to global properties so that re-running the cell works.
//   - Stack overflow is goja's uncatchable StackOverflowError: the cell fails
//     with "RangeError: Maximum call stack size exceeded", but a try/catch in
//     the cell does not see it.
//   - ES modules are rewritten to CommonJS: bindings imported from another file
//     are copies taken at import time, not live bindings, and a module cannot
//     use top-level await.
//   - goja does not parse `for await`, and has no Buffer, URL, TextEncoder,
//     structuredClone or atob.
//   - Error.prototype.stack is goja's text (tab-indented frames with program
//     counters); the REPL's rendering of errors cleans it to Node's format.
package js
