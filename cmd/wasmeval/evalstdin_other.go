//go:build !linux

package main

import (
	"io"
	"os"
	"syscall"
)

// pollStdin is Linux-only: elsewhere eval reads stdin in a goroutine.
func pollStdin(io.Reader) (*os.File, func()) { return nil, nil }

// readNow is never called: no file is polled here.
func readNow(syscall.RawConn, []byte) (int, bool) { return 0, false }
