package sandbox

import "context"

// StateKeyForTest is the artifact key of the manager's saved states.
func (m *Manager) StateKeyForTest(ctx context.Context) (string, error) { return m.stateKey(ctx) }

// ObserveSavesForTest makes every save call f as it starts, and what f
// returns as it ends (nil: no more); for benchmarks that time saves.
func ObserveSavesForTest(f func() func()) { saveObserved = f }
