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
// writes and reads. A record of another version is refused with a clear
// error rather than resumed with the wrong sequence.
const persistedClockVersion = 1

// persistedClock is a deterministic session's boundary as saved.
type persistedClock struct {
	V int `json:"v"`
	// Reads and Slept are the virtual clock's state (virtualClock).
	Reads int64         `json:"reads"`
	Slept time.Duration `json:"slept"`
	// Last is the wall time the guest read last (Unix nanoseconds), which
	// files it changes are stamped with.
	Last int64 `json:"last,omitempty"`
	// Rand is the seeded random stream's state (ChaCha8.MarshalBinary);
	// empty when the session's randomness is not the seeded stream.
	Rand []byte `json:"rand,omitempty"`
}

// clockState is the session's deterministic boundary to save, nil for a
// session that is not deterministic. The caller holds the session's turn,
// so no cell reads the clock meanwhile.
func (s *Session) clockState() *persistedClock {
	b := s.bound
	if b == nil || b.clock == nil {
		return nil
	}
	pc := &persistedClock{V: persistedClockVersion, Last: b.last.Load()}
	b.clock.mu.Lock()
	pc.Reads, pc.Slept = b.clock.reads, b.clock.slept
	b.clock.mu.Unlock()
	if b.seeded != nil {
		b.seeded.mu.Lock()
		if c, ok := b.seeded.r.(*rand.ChaCha8); ok {
			pc.Rand, _ = c.MarshalBinary() // never fails
		}
		b.seeded.mu.Unlock()
	}
	return pc
}

// restoreClock sets a just-loaded session's deterministic boundary to pc,
// before any of its code runs. A session saved without one (not
// deterministic then, or saved by a build that did not keep it) starts
// from the epoch and the seed, as before.
func (s *Session) restoreClock(pc *persistedClock) error {
	b := s.bound
	if pc == nil || b == nil || b.clock == nil {
		return nil
	}
	if pc.V != persistedClockVersion {
		return fmt.Errorf("its deterministic clock was saved in version %d; this build reads version %d (run the build that saved it)", pc.V, persistedClockVersion)
	}
	if pc.Reads < 0 || pc.Slept < 0 {
		return errors.New("its deterministic clock is negative")
	}
	b.clock.mu.Lock()
	b.clock.reads, b.clock.slept = pc.Reads, pc.Slept
	b.clock.mu.Unlock()
	if pc.Last != 0 && b.unstamp != nil {
		b.last.Store(pc.Last)
	}
	if len(pc.Rand) > 0 && b.seeded != nil {
		b.seeded.mu.Lock()
		defer b.seeded.mu.Unlock()
		c, ok := b.seeded.r.(*rand.ChaCha8)
		if !ok {
			return errors.New("its random stream cannot be restored into this session's")
		}
		if err := c.UnmarshalBinary(pc.Rand); err != nil {
			return fmt.Errorf("its deterministic random stream does not decode: %v", err)
		}
	}
	return nil
}
