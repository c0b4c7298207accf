package testenv

import "testing"

// TestListeningLine: StartServe finds the address in serve's JSON
// listening line alone and with the node id that a clustered serve puts
// before it, and not in other lines.
func TestListeningLine(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{`{"time":"t","level":"INFO","msg":"listening","addr":"127.0.0.1:4100","tokens":1}` + "\n", "127.0.0.1:4100"},
		{`{"level":"INFO","msg":"listening","node":"drain-node","addr":"127.0.0.1:4101","tokens":1}` + "\n", "127.0.0.1:4101"},
		{`{"msg":"starting","addr":"127.0.0.1:1"}` + "\n" + `{"msg":"listening","addr":"[::1]:4102"}` + "\n", "[::1]:4102"},
		{`{"msg":"listening"}` + "\n" + `{"msg":"other","addr":"127.0.0.1:1"}` + "\n", ""},
	} {
		got := ""
		if m := listeningRE.FindStringSubmatch(tc.log); m != nil {
			got = m[1]
		}
		if got != tc.want {
			t.Errorf("address in %q: %q, want %q", tc.log, got, tc.want)
		}
	}
}
