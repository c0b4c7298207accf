package main

import (
	"errors"
	"io"
	"testing"
	"time"
)

// TestStdinSpinsOnlyForAQuickClient: rawStdin waits for a line without
// sleeping only while the client answers quickly (the last wait was
// shorter than spinWait), reads the line that comes while it does, stops
// for the interrupt, and sleeps at once again after a slow wait.
func TestStdinSpinsOnlyForAQuickClient(t *testing.T) {
	r, w := blockingPipe(t)
	in := openStdin(r)
	if in == nil {
		t.Fatal("openStdin: nil for a pipe")
	}
	defer in.close()
	var b [64]byte
	read := func(want string, after time.Duration) {
		t.Helper()
		go func() {
			time.Sleep(after)
			io.WriteString(w, want)
		}()
		n, err := in.Read(b[:])
		if err != nil || string(b[:n]) != want {
			t.Fatalf("Read: %q, %v; want %q", b[:n], err, want)
		}
	}

	read("slow\n", 20*time.Millisecond) // longer than stdinSpinWait
	if in.spin || in.spins != 0 {
		t.Fatalf("after a 20 ms wait: spin %v, %d spins; want false, 0", in.spin, in.spins)
	}

	in.spinWait = 10 * time.Second // every wait below is shorter
	read("quick\n", time.Millisecond)
	if !in.spin || in.spins != 0 {
		t.Fatalf("after a quick wait that slept: spin %v, %d spins; want true, 0", in.spin, in.spins)
	}
	read("spun\n", time.Millisecond)
	if !in.spin || in.spins != 1 {
		t.Fatalf("after a quick wait: spin %v, %d spins; want true, 1", in.spin, in.spins)
	}

	in.spinWait = time.Millisecond
	read("late\n", 50*time.Millisecond)
	if in.spin || in.spins != 1 {
		t.Fatalf("after a wait longer than spinWait: spin %v, %d spins; want false, 1", in.spin, in.spins)
	}

	in.spin, in.spinWait = true, 10*time.Second
	go func() {
		time.Sleep(time.Millisecond)
		in.interrupt()
	}()
	start := time.Now()
	if _, err := in.Read(b[:]); !errors.Is(err, errStdinInterrupted) {
		t.Fatalf("Read after interrupt: %v, want errStdinInterrupted", err)
	}
	if in.spins != 2 {
		t.Errorf("the interrupt ended %d spins, want 2 (it came while Read spun)", in.spins)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupt stopped the spin after %v", d)
	}
}
