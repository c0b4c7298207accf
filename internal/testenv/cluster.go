package testenv

import (
	"os"
	"strings"
	"testing"
)

// RequireClusterEnv is the variable that turns a missing PostgreSQL or
// HAProxy (make cluster-deps) from a skip into a failure; `make test` sets
// it.
const RequireClusterEnv = "WASMEVAL_REQUIRE_CLUSTER"

// ClusterRequired reports whether WASMEVAL_REQUIRE_CLUSTER is set to
// anything but "" or "0".
func ClusterRequired() bool {
	v := strings.TrimSpace(os.Getenv(RequireClusterEnv))
	return v != "" && v != "0"
}

// missingCluster skips tb for want of PostgreSQL or HAProxy, or fails it
// when WASMEVAL_REQUIRE_CLUSTER is set.
func missingCluster(tb testing.TB, err error) {
	tb.Helper()
	if ClusterRequired() {
		tb.Fatalf("%v, and %s is set: install them (make cluster-deps) before these tests", err, RequireClusterEnv)
	}
	tb.Skipf("skipped: %v (set %s=1 to make this a failure)", err, RequireClusterEnv)
}
