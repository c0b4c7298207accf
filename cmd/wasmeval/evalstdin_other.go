//go:build !linux

package main

import "io"

// rawStdin is Linux-only: elsewhere eval reads stdin in a goroutine
// (openStdin returns nil), and its methods are never called.
type rawStdin struct{}

func openStdin(io.Reader) *rawStdin               { return nil }
func (*rawStdin) Read([]byte) (int, error)        { return 0, io.EOF }
func (*rawStdin) readNow([]byte) (n int, ok bool) { return 0, false }
func (*rawStdin) interrupt()                      {}
func (*rawStdin) close()                          {}
