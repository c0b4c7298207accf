package sandbox_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestNestedEvalAwait: a Python cell of a nested eval (a sub-agent's eval
// run while a cell waits in agent()) may use top-level await on the
// session's event loop, whether the waiting cell is a plain one or itself
// awaits: it sees tasks of earlier cells, its own tasks go on after it,
// evals nest with await at every level, and one that awaits what nothing
// can complete fails alone, saying why.
func TestNestedEvalAwait(t *testing.T) {
	testenv.RequirePython(t)
	s, h := subAgentSession(t, false)
	h.timeout = 5
	out := evalOut(t, s,
		py(`import asyncio
done = asyncio.Event()
async def slow():
    await done.wait()
    return "earlier task"
earlier = asyncio.create_task(slow())
ticks = []
async def ticker():
    for i in range(3):
        ticks.append(i)
        await asyncio.sleep(0)
_ = asyncio.create_task(ticker())`),
		// A plain waiting cell.
		py(`r = agent("py:done.set()\nfrom_nested = await earlier\nlater = asyncio.create_task(asyncio.sleep(0.01, result='nested task'))\nprint(await asyncio.sleep(0.01, result='slept'))")
print(r, end='')
print(from_nested)`),
		// A waiting cell that awaits, with the nested cell's task awaited
		// after it.
		py(`await asyncio.sleep(0)
r = agent("py:print(await asyncio.sleep(0, result='inside an awaiting cell'))")
print(r, end='')
print(await later)`),
		// The waiting cell's turn of the loop had counted on running a
		// handle after it (the lambda): the nested cell's turns run it,
		// and the outer turn still finds what it counted on.
		py(`lp = asyncio.get_running_loop()
fut = lp.create_future()
hits = []
def cb():
    fut.set_result(1)
    lp.call_soon(lambda: hits.append("after"))
lp.call_soon(cb)
await fut
r = agent("py:await asyncio.sleep(0)\nprint('nested ran it', len(hits))")
print(r, end='')
await asyncio.sleep(0.01)  # a timer: nothing else is ready after this step
print(hits)`),
		// Three levels, each awaiting.
		py(`async def level(n):
    await asyncio.sleep(0)
    if n == 3:
        return "bottom"
    return agent(f"py:print(await level({n + 1}), end='')")
print(await level(1))`),
		// What nothing can complete: the nested cell fails, the parent
		// goes on.
		py(`r = agent("py:await asyncio.get_running_loop().create_future()")
print(r.startswith("FAILED"), "nothing can complete" in r)
print(await asyncio.sleep(0, result="parent goes on"), len(ticks))`),
	)
	want := []string{
		"",
		"slept\nearlier task\n",
		"inside an awaiting cell\nnested task\n",
		"nested ran it 1\n['after']\n",
		"bottom\n",
		"True True\nparent goes on 3\n",
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("cell %d: %q, want %q", i, out[i], want[i])
		}
	}
}
