package testenv

import (
	"testing"
	"time"
)

// TestMedianDropsAnOutlier: one slow process of five does not move the
// native figure, as it moved a mean or a single process's figure.
func TestMedianDropsAnOutlier(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	got := median([]time.Duration{ms(15.62), ms(17.74), ms(15.65), ms(15.59), ms(15.63)})
	if got != ms(15.63) {
		t.Errorf("median = %v, want 15.63ms", got)
	}
}

// TestNativePython: the figures are per run and plausible; skipped where
// Debian's python3.11 is missing (make deps installs it).
func TestNativePython(t *testing.T) {
	wall, cpu := NativePython(t, "def f(n):\n    return sum(range(n))\n", "f(100000)", 3)
	if wall == 0 && cpu == 0 {
		t.Skip("no /usr/bin/python3.11")
	}
	if wall <= 0 || cpu <= 0 || wall > time.Second || cpu > time.Second {
		t.Errorf("sum(range(100000)) natively: wall %v, cpu %v per run; want each between 0 and 1 s", wall, cpu)
	}
}
