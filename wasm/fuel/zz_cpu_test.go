package fuel_test

import (
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano())
}

func TestZZCPU(t *testing.T) {
	const cell = "sum(i * i for i in range(100000))"
	gs := map[bool]*pythonGuest{}
	for _, inst := range []bool{false, true} {
		rt, cm, stdlib, prelude := pythonRuntime(t, inst)
		gs[inst] = newPython(t, rt, cm, stdlib, prelude, 10_000_000, 1<<40)
	}
	best := map[bool]time.Duration{false: time.Hour, true: time.Hour}
	for round := 0; round < 6; round++ {
		for _, inst := range []bool{false, true} {
			c0 := cpuNow()
			for i := 0; i < 10; i++ {
				gs[inst].run(cell)
			}
			if d := (cpuNow() - c0) / 10; d < best[inst] {
				best[inst] = d
			}
		}
	}
	t.Logf("plain %v, fuel %v, overhead %.1f%%", best[false], best[true], 100*(float64(best[true])/float64(best[false])-1))
}
