// Package cluster holds the tests and benchmarks of wasmeval running as
// several `serve` nodes over one PostgreSQL store behind a load balancer
// (issue 16). It has no code of its own: the nodes are server.Node (the
// leases, passing requests on, takeover), the store is store.Postgres,
// and the sessions' state is the sandbox.Manager's persistence. Its tests
// start a throwaway PostgreSQL cluster, real `wasmeval serve` processes
// and Debian's HAProxy on loopback (make cluster-deps installs them).
package cluster
