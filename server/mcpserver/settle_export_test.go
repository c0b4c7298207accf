package mcpserver

import "github.com/wasmeval/wasmeval/sandbox"

// SetSettleForTest has f called in place of a session's Settle after an
// answer, for tests; the returned func restores it.
func SetSettleForTest(f func(*sandbox.Session)) (restore func()) {
	old := settleSession
	settleSession = f
	return func() { settleSession = old }
}
