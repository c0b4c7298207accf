//go:build !linux

package testenv

import (
	"errors"
	"testing"
)

// Postgres is a throwaway PostgreSQL cluster; only Linux starts one.
type Postgres struct {
	URL  string
	Port int
}

// StartPostgres skips tb (or fails it when WASMEVAL_REQUIRE_CLUSTER is
// set): the tests' PostgreSQL clusters are started on Linux only.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	missingCluster(tb, errors.New("the test PostgreSQL cluster is started on Linux only"))
	return nil
}

// Start does nothing off Linux.
func (p *Postgres) Start() {}

// Stop does nothing off Linux.
func (p *Postgres) Stop() {}

// HAProxy skips tb off Linux.
func HAProxy(tb testing.TB) string {
	tb.Helper()
	missingCluster(tb, errors.New("the tests' HAProxy runs on Linux only"))
	return ""
}
