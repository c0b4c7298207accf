package sandbox

import (
	"context"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// withCellLimits gives the cell's limits to the budget helper (see
// hostcalls.CellLimits): its time from now, its inactivity timeout, and
// the fuel that bounds it. With a session fuel budget, the fuel is the
// session's and spent is what its earlier cells used; with only the
// cell's own, it is the cell's, and nothing of it is known to be spent
// until the cell ends. A cell of a nested eval reports its own agent depth
// (its frame's, deeper than the session's) and no more time than the cell
// it runs in has left.
func withCellLimits(ctx context.Context, c Cell, sessionFuel, fuelUsed int64, hard, timeout time.Duration) context.Context {
	lim := hostcalls.CellLimits{Start: time.Now(), HardLimit: hard, Timeout: timeout, FuelSpent: fuelUsed}
	if f := frameOf(ctx); f != nil {
		lim.AgentDepth = f.depth
		outer := outerOf(ctx)
		if end := f.setEnd(lim.Start.Add(hard), outer); outer != nil {
			lim.End = end
		}
	}
	switch {
	case c.Language != "py":
		// Fuel meters Python only.
	case sessionFuel > 0:
		lim.FuelTotal = sessionFuel
	case c.Fuel > 0:
		lim.FuelTotal, lim.FuelSpent = c.Fuel, 0
	}
	return hostcalls.WithCellLimits(ctx, func() hostcalls.CellLimits { return lim })
}
