package hostcalls

import (
	"context"
	"time"
)

// CellLimits are the limits of the running cell that the budget helper
// reports, and what has been used of them. The sandbox gives them to the
// dispatcher through the cell's context (WithCellLimits).
type CellLimits struct {
	// Start is when the cell started.
	Start time.Time
	// HardLimit is the longest the cell may run, whatever it does; zero
	// means no limit is known.
	HardLimit time.Duration
	// Timeout is the cell's inactivity timeout, which status events and
	// host calls in flight restart or hold.
	Timeout time.Duration
	// FuelTotal is the fuel budget that bounds the cell (its own, or the
	// session's); zero means none. FuelSpent is what the session's
	// finished cells have used of the session's budget (the running
	// cell's use is known when it ends).
	FuelTotal, FuelSpent int64
	// AgentDepth is the agent depth the cell runs at. A cell of a nested
	// eval (run inside a cell that waits in agent() or tool()) runs deeper
	// than its session; the dispatcher reports the deeper of this and
	// DispatcherOptions.AgentDepth.
	AgentDepth int
	// End, when set, is when the cell ends at the latest whatever its own
	// limits: a nested cell is cancelled when the cell it runs in ends,
	// so its time left is bounded by that cell's.
	End time.Time
}

type limitsKey struct{}

// WithCellLimits returns a context under which the budget op reports the
// limits that f returns (it is called at each budget call).
func WithCellLimits(ctx context.Context, f func() CellLimits) context.Context {
	return context.WithValue(ctx, limitsKey{}, f)
}

// budgetDims is one value per budget dimension, as the budget op answers:
// seconds of the cell, fuel, agent nesting. A nil means no ceiling.
type budgetDims struct {
	Seconds    *float64 `json:"seconds"`
	Fuel       *int64   `json:"fuel"`
	AgentDepth int      `json:"agent_depth"`
}

// budgetAnswer is the answer of the budget op: the seed's total, spent,
// remaining and hard, each over the three dimensions, and (kept from
// before) the agent depth and the seconds left.
type budgetAnswer struct {
	Total     budgetDims `json:"total"`
	Spent     budgetDims `json:"spent"`
	Remaining budgetDims `json:"remaining"`
	// Hard is true: every ceiling is enforced (the cell stops at its time
	// and fuel limits; agent() refuses to nest deeper).
	Hard           bool     `json:"hard"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
	AgentDepth     int      `json:"agent_depth"`
	MaxAgentDepth  int      `json:"max_agent_depth"`
	SecondsLeft    *float64 `json:"seconds_left"`
}

// budgetOf answers the budget op from the cell's limits and the context's
// deadline.
func (d *Dispatcher) budgetOf(ctx context.Context) budgetAnswer {
	var lim CellLimits
	if f, _ := ctx.Value(limitsKey{}).(func() CellLimits); f != nil {
		lim = f()
	}
	depth := max(d.opts.AgentDepth, min(lim.AgentDepth, MaxAgentDepth))
	b := budgetAnswer{
		Total:         budgetDims{AgentDepth: MaxAgentDepth},
		Spent:         budgetDims{AgentDepth: depth},
		Remaining:     budgetDims{AgentDepth: MaxAgentDepth - depth},
		Hard:          true,
		AgentDepth:    depth,
		MaxAgentDepth: MaxAgentDepth,
	}
	now := time.Now()
	if !lim.Start.IsZero() {
		spent := now.Sub(lim.Start).Seconds()
		b.Spent.Seconds = &spent
	}
	if lim.Timeout > 0 {
		t := lim.Timeout.Seconds()
		b.TimeoutSeconds = &t
	}
	left := -1.0
	if lim.HardLimit > 0 && !lim.Start.IsZero() {
		total := lim.HardLimit.Seconds()
		b.Total.Seconds = &total
		left = max(0, lim.Start.Add(lim.HardLimit).Sub(now).Seconds())
	}
	if dl, ok := ctx.Deadline(); ok {
		if l := max(0, dl.Sub(now).Seconds()); left < 0 || l < left {
			left = l
		}
	}
	if !lim.End.IsZero() {
		if l := max(0, lim.End.Sub(now).Seconds()); left < 0 || l < left {
			left = l
		}
	}
	if left >= 0 {
		b.Remaining.Seconds = &left
		b.SecondsLeft = &left
	}
	spent := lim.FuelSpent
	b.Spent.Fuel = &spent
	if lim.FuelTotal > 0 {
		total := lim.FuelTotal
		rem := max(0, total-spent)
		b.Total.Fuel, b.Remaining.Fuel = &total, &rem
	}
	return b
}
