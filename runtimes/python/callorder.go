package python

// The order of a cell's host calls, for a recorded or replayed session
// (package callorder). call_wait hands the guest the answers of the calls
// it started in the order they finish, which is an accident of timing: a
// guest that prints each answer as it takes it (parallel's thunks, raw
// call_start and call_wait) prints them in that order. Recorded, each call
// is written when the guest takes its answer, with the number of the
// cell's wait (call_wait) that took it; replayed, where the tape answers
// every call at once, call_wait holds an answer back until those recorded
// before it have been taken, so each wait takes the answer its recording
// took.

// heldTurn is an answer a replay held back whose turn it is now, if any;
// none once the cell is stopped (the stop comes first).
func (in *Instance) heldTurn() (finished, bool) {
	c := in.calls
	if !c.order.On() || in.runCtx.Err() != nil {
		return finished{}, false
	}
	return c.order.Turn(int(in.waits))
}

// inTurn takes the answer f that just came, in the cell's current wait:
// the answer the guest takes now (f, or one held before it), or false
// when a replay holds it back for answers recorded before it.
func (in *Instance) inTurn(f finished) (finished, bool) {
	return in.calls.order.Came(f.ticket, f, int(in.waits))
}

// stopTurn delivers a replayed interrupt due in the current wait
// (beginWait) when its time has come, and says whether it did: at once
// in a cell whose calls are not ordered; else once an answer the guest
// would take is there. Until then the wait runs what is handed to it: an
// agent() or tool() call replays the evals its host ran in the session
// (nested in this wait) before it answers, as they ran before the
// recorded stop. The answers it held stay untaken (End gives them back).
func (in *Instance) stopTurn() bool {
	c := in.calls
	if c.order.On() && !c.order.Due() {
		return false
	}
	in.tripInWait()
	return true
}
