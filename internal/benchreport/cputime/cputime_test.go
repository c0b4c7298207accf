package cputime

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestCounts: both clocks move by about the CPU a busy loop spent, and not
// by a sleep.
func TestCounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipped: CPU time is read on Linux only")
	}
	s0 := Self()
	p0, ok := Process(os.Getpid())
	if !ok {
		t.Fatal("Process(self) cannot be read")
	}
	spin := time.Now()
	for n := 0; Self()-s0 < 50*time.Millisecond; n++ {
		if time.Since(spin) > 30*time.Second {
			t.Fatal("no CPU time counted in 30 s")
		}
	}
	time.Sleep(100 * time.Millisecond)
	s1 := Self()
	p1, _ := Process(os.Getpid())
	if d := s1 - s0; d < 50*time.Millisecond || d > 150*time.Millisecond {
		t.Errorf("Self moved %v over a 50 ms spin and a 100 ms sleep", d)
	}
	if d := p1 - p0; d < 40*time.Millisecond || d > 150*time.Millisecond {
		t.Errorf("Process moved %v over a 50 ms spin and a 100 ms sleep", d)
	}
}
