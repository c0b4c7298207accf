package server

import "time"

// SetWriteTimeout sets how long writing one event or answer may take, for
// tests; the returned func restores it.
func SetWriteTimeout(d time.Duration) (restore func()) {
	old := writeTimeout
	writeTimeout = d
	return func() { writeTimeout = old }
}
