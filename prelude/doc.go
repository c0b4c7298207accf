// Package prelude holds the guest-side helpers of wasmeval as real source
// files (python/*.py, js/*.js), embedded into the binary. It is
// implementation detail of the runtimes.
package prelude
