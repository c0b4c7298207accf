package sandbox

// bytes is what the store holds: the full text of cut outputs, up to
// maxStoredBytes a session, counted in Session.ResidentBytes so that the
// manager's byte budget sees a session that printed a lot.
func (s *outputStore) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.size)
}
