package sandbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// A deterministic session (SessionOptions.Deterministic) saved to a store
// carries its virtual clock and its random stream in its metadata, so
// that once loaded (after a restart, on another node) it goes on with the
// same times and the same random bytes as if it had never left, rather
// than starting both again from DeterministicEpoch and the seed.

// persistedClockVersion is the version of persistedClock this code
// writes. It reads it and version 1 (one clock and random stream for the
// session, before each instance had its own: it is resumed as every
// instance's clock and the Python instance's stream); a record of another
// version is refused with a clear error rather than resumed with the
// wrong sequence.
const persistedClockVersion = 2

// persistedClock is a deterministic session's boundary as saved.
type persistedClock struct {
	V int `json:"v"`
	// Reads and Slept are the virtual clock's state (virtualClock), in
	// version 1; version 2 has Instances instead.
	Reads int64         `json:"reads"`
	Slept time.Duration `json:"slept"`
	// Last is the wall time the guest read last (Unix nanoseconds), which
	// files it changes are stamped with.
	Last int64 `json:"last,omitempty"`
	// Rand is the seeded random stream's state (ChaCha8.MarshalBinary),
	// in version 1; empty when the session's randomness is not the seeded
	// stream.
	Rand []byte `json:"rand,omitempty"`
	// Instances are each instance's clock and stream, by its language
	// (version 2).
	Instances map[string]persistedInstance `json:"instances,omitempty"`
}

// persistedInstance is one instance's virtual clock and seeded stream.
type persistedInstance struct {
	Reads int64         `json:"reads"`
	Slept time.Duration `json:"slept"`
	Rand  []byte        `json:"rand,omitempty"`
}

// clockState is the session's deterministic boundary to save, nil for a
// session that is not deterministic. The caller holds the session's turn,
// so no cell reads the clock meanwhile.
func (s *Session) clockState() *persistedClock {
	b := s.bound
	if b == nil || b.det == nil {
		return nil
	}
	pc := &persistedClock{V: persistedClockVersion, Last: b.last.Load(), Instances: map[string]persistedInstance{}}
	for lang, d := range b.det {
		var pi persistedInstance
		d.clock.mu.Lock()
		pi.Reads, pi.Slept = d.clock.reads, d.clock.slept
		d.clock.mu.Unlock()
		if d.seeded != nil {
			d.seeded.mu.Lock()
			if c, ok := d.seeded.r.(*rand.ChaCha8); ok {
				pi.Rand, _ = c.MarshalBinary() // never fails
			}
			d.seeded.mu.Unlock()
		}
		pc.Instances[lang] = pi
	}
	return pc
}

// restoreClock sets a just-loaded session's deterministic boundary to pc,
// before any of its code runs. A session saved without one (not
// deterministic then, or saved by a build that did not keep it) starts
// from the epoch and the seeds, as before.
func (s *Session) restoreClock(pc *persistedClock) error {
	b := s.bound
	if pc == nil || b == nil || b.det == nil {
		return nil
	}
	ins := pc.Instances
	switch pc.V {
	case 1:
		// One clock and stream for the session: every instance's clock,
		// and the Python instance's stream (the JavaScript instance's
		// starts from its seed: the two do not repeat each other's bytes).
		ins = map[string]persistedInstance{}
		for lang := range b.det {
			ins[lang] = persistedInstance{Reads: pc.Reads, Slept: pc.Slept}
		}
		ins["py"] = persistedInstance{Reads: pc.Reads, Slept: pc.Slept, Rand: pc.Rand}
	case persistedClockVersion:
	default:
		return fmt.Errorf("its deterministic clock was saved in version %d; this build reads versions 1 and %d (run the build that saved it)", pc.V, persistedClockVersion)
	}
	for lang, pi := range ins {
		d := b.det[lang]
		if d == nil {
			return fmt.Errorf("its deterministic clock names an instance %q this build does not have", lang)
		}
		if pi.Reads < 0 || pi.Slept < 0 {
			return errors.New("its deterministic clock is negative")
		}
		d.clock.mu.Lock()
		d.clock.reads, d.clock.slept = pi.Reads, pi.Slept
		d.clock.mu.Unlock()
		if len(pi.Rand) > 0 && d.seeded != nil {
			d.seeded.mu.Lock()
			c, ok := d.seeded.r.(*rand.ChaCha8)
			var err error
			if !ok {
				err = errors.New("its random stream cannot be restored into this session's")
			} else if e := c.UnmarshalBinary(pi.Rand); e != nil {
				err = fmt.Errorf("its deterministic random stream does not decode: %v", e)
			}
			d.seeded.mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	if pc.Last != 0 && b.unstamp != nil {
		b.last.Store(pc.Last)
	}
	return nil
}
