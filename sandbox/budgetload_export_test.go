package sandbox

// LoadTrimsForTest is how many idle sessions loads and forks have trimmed
// to keep the memory budget before evicting any.
func LoadTrimsForTest() int64 { return trims.Load() }
