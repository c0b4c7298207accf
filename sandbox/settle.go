package sandbox

// atRester is an instance that does work between cells (for Python,
// giving freed heap pages back and taking the checkpoint) and can be
// asked to do it now.
type atRester interface{ AtRest() }

// Settle does now the work the session's instances do between cells,
// which otherwise waits for the next cell (that does it before it runs)
// or for a timer a millisecond after the cell. A caller that has sent an
// Eval's answer and waits for the next request calls it to take that work
// off the next cell's path: a client that sends its next request at once
// then waits for what is left of it, if anything, not for all of it.
//
// While an Eval runs Settle does nothing; an Eval that starts while it
// works waits for it, as it waits for the timer's.
//
// Why (issue 15, the eval line round trip): `wasmeval eval` answering
// lines back to back took the checkpoint of the previous cell after it
// had read the next line, so each round trip waited for it; taken right
// after the answer, it runs while the answer and the next line cross the
// pipes.
func (s *Session) Settle() {
	select {
	case s.sem <- struct{}{}:
	default:
		return // an Eval runs (or Close, or a measure)
	}
	defer func() { <-s.sem }()
	s.mu.Lock()
	gone := s.cleaned || s.closed
	s.mu.Unlock()
	if gone {
		return
	}
	var rest [4]atRester
	ins := rest[:0]
	s.imu.Lock()
	for _, inst := range s.instances {
		if r, ok := inst.(atRester); ok {
			ins = append(ins, r)
		}
	}
	s.imu.Unlock()
	for _, r := range ins {
		r.AtRest()
	}
}
