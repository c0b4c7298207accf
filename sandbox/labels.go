package sandbox

import (
	"maps"
	"sync"
)

// Labels are short notes a host keeps with a session, such as the
// language of a code context: a host that knows its sessions by their
// labels finds them again after the session moved to another process
// (serve with a store), since they are saved with the session's metadata
// and come back with it. The guest never sees them.
//
// A label is saved by the session's next save (after its next eval); a
// fork starts without labels.
type sessionLabels struct {
	mu sync.Mutex
	m  map[string]string
}

// MaxLabelBytes caps a session's labels, keys and values together.
const MaxLabelBytes = 4 << 10

// SetLabel sets the label key to value ("" deletes it). It reports false,
// setting nothing, when the labels would pass MaxLabelBytes.
func (s *Session) SetLabel(key, value string) bool {
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	if value == "" {
		delete(l.m, key)
		return true
	}
	size := len(key) + len(value)
	for k, v := range l.m {
		if k != key {
			size += len(k) + len(v)
		}
	}
	if size > MaxLabelBytes {
		return false
	}
	if l.m == nil {
		l.m = map[string]string{}
	}
	l.m[key] = value
	return true
}

// Label returns the label key's value, "" when it has none.
func (s *Session) Label(key string) string {
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[key]
}

// labelsNow is a copy of the labels, for a save.
func (s *Session) labelsNow() map[string]string {
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.m)
}

// restoreLabels sets the labels a load found.
func (s *Session) restoreLabels(m map[string]string) {
	l := &s.labels
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m = maps.Clone(m)
}
