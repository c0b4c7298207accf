package testenv

import (
	"testing"
	"time"
)

// TestStretch: a bound is never shortened, and stretched by the load per
// CPU that /proc/loadavg shows.
func TestStretch(t *testing.T) {
	f := loadFactor()
	if f < 1 {
		t.Fatalf("load factor %v, want at least 1", f)
	}
	if got, want := Stretch(2*time.Second), time.Duration(float64(2*time.Second)*f); got != want || got < 2*time.Second {
		t.Errorf("Stretch(2s) = %v at load factor %v, want %v", got, f, want)
	}
}
