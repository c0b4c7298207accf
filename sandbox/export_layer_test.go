package sandbox

// LayerRuntimes is how many runtimes sb made for its sessions' own
// package layers, for tests.
func LayerRuntimes(sb *Sandbox) int {
	sb.layers.mu.Lock()
	defer sb.layers.mu.Unlock()
	n := 0
	for _, lr := range sb.layers.byKey {
		lr.sem <- struct{}{}
		if lr.rt != nil {
			n++
		}
		<-lr.sem
	}
	return n
}
