package sandbox

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestRestoreClockVersion1: a deterministic session saved when it had one
// virtual clock and one seeded stream (persisted clock version 1) resumes
// with that clock for every instance and that stream for its Python
// instance; its JavaScript instance's stream starts from its own seed, so
// that the two do not repeat each other's bytes. Version 2 keeps each
// instance's own, and another version is refused.
func TestRestoreClockVersion1(t *testing.T) {
	src := rand.NewChaCha8(deterministicSeed)
	src.Read(make([]byte, 40))
	state, _ := src.MarshalBinary()
	var v1 persistedClock
	if err := json.Unmarshal([]byte(`{"v":1,"reads":7,"slept":5000}`), &v1); err != nil {
		t.Fatal(err)
	}
	v1.Rand = state
	s := &Session{bound: &boundary{}}
	s.bound.deterministic(nil, nil)
	if err := s.restoreClock(&v1); err != nil {
		t.Fatal(err)
	}
	for lang, d := range s.bound.det {
		if d.clock.reads != 7 || d.clock.slept != 5000 {
			t.Errorf("%s clock: %d reads, %v slept; want 7, 5µs", lang, d.clock.reads, d.clock.slept)
		}
	}
	next := func(lang string) []byte {
		b := make([]byte, 8)
		s.bound.clocksOf(lang).rand.Read(b)
		return b
	}
	want := make([]byte, 8)
	src.Read(want)
	py, js := next("py"), next("js")
	if !bytes.Equal(py, want) {
		t.Errorf("the Python instance's stream goes on with %x; want the saved stream's %x", py, want)
	}
	if bytes.Equal(js, py) {
		t.Errorf("the JavaScript instance's stream repeats the Python instance's bytes %x", js)
	}

	// Saved again (version 2) and restored into a new session: each
	// instance goes on where it was.
	pc := s.clockState()
	if pc.V != 2 || len(pc.Instances) != 2 {
		t.Fatalf("saved %+v; want version 2 with both instances", pc)
	}
	s2 := &Session{bound: &boundary{}}
	s2.bound.deterministic(nil, nil)
	if err := s2.restoreClock(pc); err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"py", "js"} {
		a, b := make([]byte, 8), make([]byte, 8)
		s.bound.clocksOf(lang).rand.Read(a)
		s2.bound.clocksOf(lang).rand.Read(b)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the restored stream gives %x; the saved session's gives %x", lang, b, a)
		}
		if x, y := s.bound.clocksOf(lang).nanotime(), s2.bound.clocksOf(lang).nanotime(); x != y {
			t.Errorf("%s: the restored clock reads %d; the saved session's %d", lang, y, x)
		}
	}
	if err := s2.restoreClock(&persistedClock{V: 3}); err == nil {
		t.Error("a version 3 clock was restored; want it refused")
	}
}
