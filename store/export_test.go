package store

// SetCompactSlackForTest sets how much more than its state a dir store's
// log may hold before it is written anew, and returns a func that puts it
// back.
func SetCompactSlackForTest(n int64) func() {
	old := compactSlack
	compactSlack = n
	return func() { compactSlack = old }
}
