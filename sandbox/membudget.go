package sandbox

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// maxDefaultMemoryBudget caps DefaultMemoryBudget.
const maxDefaultMemoryBudget = 4 << 30

var defaultBudget = sync.OnceValue(func() int64 {
	if total := physicalMemory(); total > 0 {
		return min(maxDefaultMemoryBudget, total/2)
	}
	return maxDefaultMemoryBudget
})

// DefaultMemoryBudget is ManagerOptions.MemoryBudgetBytes when it is zero:
// half of the machine's physical memory, at most 4 GiB (4 GiB where the
// machine's memory cannot be read).
func DefaultMemoryBudget() int64 { return defaultBudget() }

// physicalMemory is MemTotal from /proc/meminfo in bytes, or 0.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
