package linepipe

import (
	"os/exec"
	"testing"
	"time"
)

// TestRoundTrip drives cat, the echo floor, with both harnesses: each line
// comes back whole, the child's CPU time reads, and closing stdin ends it.
func TestRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat")
	}
	for name, start := range map[string]func(*exec.Cmd) (*Process, error){"Start": Start, "StartPolled": StartPolled} {
		p, err := start(exec.Command("cat"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, line := range []string{"one\n", `{"cells":[]}` + "\n"} {
			ans, err := p.RoundTrip([]byte(line))
			if err != nil || string(ans) != line {
				t.Errorf("%s: %q answered %q, %v", name, line, ans, err)
			}
		}
		if _, ok := p.CPU(); !ok {
			t.Errorf("%s: the child's CPU time does not read", name)
		}
		if err := p.Close(10 * time.Second); err != nil {
			t.Errorf("%s: cat at the end of its input: %v", name, err)
		}
	}
}
