// Package jupyter is a pure-Go client of the Jupyter messaging protocol:
// signed wire messages, the kernel channels over ZeroMQ (local kernels
// started by wasmeval) or a Jupyter Server's websocket (external kernels),
// and a kernel client that runs cells, collects their iopub output,
// answers stdin, interrupts and restarts.
//
// It is implementation detail of the native Jupyter Python backend
// (runtimes/jupyter); see docs/design.md. A Jupyter kernel is not a
// sandbox.
package jupyter
