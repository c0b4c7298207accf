package server

import "time"

// SetSSEKeepalive sets how long a stream stays silent before a keepalive
// comment, for tests; the returned func restores it.
func SetSSEKeepalive(d time.Duration) (restore func()) {
	old := sseKeepalive
	sseKeepalive = d
	return func() { sseKeepalive = old }
}
