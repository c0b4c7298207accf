package sandbox

import "context"

// StateKeyForTest is the artifact key of the manager's saved states.
func (m *Manager) StateKeyForTest(ctx context.Context) (string, error) { return m.stateKey(ctx) }
