"""The session's asyncio event loop.

One loop lives for the whole session, and every cell runs on it, as in
Jupyter: a cell with top-level ``await`` runs as a task until it completes;
any other cell runs as one callback of the running loop. So
``asyncio.get_running_loop()`` and ``asyncio.create_task()`` work in every
cell, a task started in one cell goes on running (whenever a later cell
runs the loop: at its end, and while it awaits) and can be awaited later,
and ``asyncio.run()`` fails as CPython makes it fail inside a running loop.
A cell that runs while another waits in agent() or tool() (a sub-agent's
eval of the session) may await too: it turns the same loop from inside the
waiting cell (_run_nested), so it sees the session's tasks and its own go
on after it.

The guest runs only while a cell does: between cells nothing runs, so a
pending task makes progress only during later cells. WASI has no
socketpair, so asyncio's selector loop cannot make its self-pipe, and there
are no file descriptors worth watching: this loop's selector only sleeps
until the next timer (a host sleep, which a timeout interrupts).

This module, and asyncio, are imported when a cell first awaits or
imports asyncio (the prelude watches for it), not in the template: a
session that never uses asyncio pays nothing for it. Rolling a session
back after a hard stop restores the loop with the rest of the interpreter
(the tasks of the stopped cell are gone, earlier ones are as they were
before it); a restart (Reset) starts with no loop.
"""
import asyncio
import itertools
import selectors
import sys
import threading
import time
from asyncio import events

_DEADLOCK = (
    "the cell awaits something that nothing can complete: no task is ready "
    "and no timer is pending (in the sandbox nothing outside the cell, no "
    "thread or socket, can wake the event loop)"
)

_RUN_ONCE = asyncio.base_events.BaseEventLoop._run_once.__code__


class _SleepSelector(selectors.BaseSelector):
    """A selector with nothing to select: select() sleeps until the next
    timer is due."""

    def register(self, fileobj, events, data=None):
        raise OSError("wasmeval: asyncio cannot watch file descriptors in the sandbox")

    def unregister(self, fileobj):
        raise KeyError(fileobj)

    def select(self, timeout=None):
        if timeout is None:
            raise RuntimeError(_DEADLOCK)
        if timeout > 0:
            time.sleep(timeout)
        return []

    def get_map(self):
        return {}

    def close(self):
        pass


class _Loop(asyncio.SelectorEventLoop):
    """A selector event loop without its self-pipe (WASI has no
    socketpair), which nothing but the loop's own thread could use."""

    def __init__(self):
        super().__init__(_SleepSelector())

    def _make_self_pipe(self):
        pass

    def _close_self_pipe(self):
        pass

    def _write_to_self(self):
        pass

    def add_signal_handler(self, sig, callback, *args):
        raise NotImplementedError("wasmeval: asyncio signal handlers are not supported in the sandbox")

    def remove_signal_handler(self, sig):
        return False


class _Policy(asyncio.DefaultEventLoopPolicy):
    """Makes asyncio.new_event_loop() (and so asyncio.Runner) build a loop
    that works in the sandbox."""

    _loop_factory = _Loop


asyncio.set_event_loop_policy(_Policy())
_loop = None


def loop():
    """The session's loop, made again if a cell closed it."""
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = _Loop()
        asyncio.set_event_loop(_loop)
    return _loop


loop()


def run(coro):
    """Runs a cell's coroutine as a task of the session's loop until it
    completes, and returns its result."""
    lp = loop()
    if lp.is_running():
        return _run_nested(lp, coro)
    task = lp.create_task(coro)
    try:
        return lp.run_until_complete(task)
    except BaseException:
        if not task.done():
            # Stopped by something outside the cell's task (a
            # KeyboardInterrupt in another task, a deadlock): the cell
            # is over, so its task is cancelled rather than left to
            # resume in a later cell.
            task.cancel()
        elif not task.cancelled():
            task.exception()  # raised here; not "never retrieved"
        raise


def _outer_pending(lp):
    """How many handles the loop's innermost _run_once on the stack (the
    one whose callback runs the waiting cell) has yet to take from the
    front of the ready queue, as it counted them before it began."""
    f = sys._getframe(2)
    while f is not None:
        if f.f_code is _RUN_ONCE:
            loc = f.f_locals
            if loc.get("self") is not lp:
                return 0
            if "i" in loc and "ntodo" in loc:
                return max(0, loc["ntodo"] - loc["i"] - 1)
            return 0
        f = f.f_back
    return 0


def _run_nested(lp, coro):
    """Runs a nested cell's coroutine (a cell run while another waits in
    agent() or tool(), itself inside a turn of the loop or a plain cell)
    until it completes, turning the session's loop from here: the nested
    cell's tasks, timers and those of earlier cells all run meanwhile.

    asyncio's loop is not reentrant, so two things are put right around
    the inner turns: the waiting cell's task stops being the current task
    while they run (a task step refuses to start while another is
    current), and the handles the outer turn counted on taking from the
    ready queue are still there for it when the nested cell ends (those
    the inner turns ran are replaced by cancelled ones, which it skips)."""
    outer = asyncio.current_task(lp)
    held = list(itertools.islice(lp._ready, _outer_pending(lp)))
    task = lp.create_task(coro)
    if outer is not None:
        asyncio.tasks._leave_task(lp, outer)
    try:
        while not task.done():
            lp._run_once()
        return task.result()
    except BaseException:
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()  # raised here; not "never retrieved"
        raise
    finally:
        if outer is not None:
            asyncio.tasks._enter_task(lp, outer)
        ran = len(held)
        for i, h in enumerate(held):
            if lp._ready and lp._ready[0] is h:
                ran = i
                break
        for _ in range(ran):
            h = asyncio.events.Handle(_noop, (), lp)
            h.cancel()
            lp._ready.appendleft(h)


def _noop():
    pass


def enter():
    """Makes the session's loop the running one, as while a callback of it
    runs: a plain cell runs so. Returns what leave() restores, or None when
    the loop already runs (a cell run while another waits)."""
    lp = loop()
    if lp.is_running():
        return None
    old_hooks = sys.get_asyncgen_hooks()
    lp._thread_id = threading.get_ident()  # is_running() is true
    sys.set_asyncgen_hooks(firstiter=lp._asyncgen_firstiter_hook,
                           finalizer=lp._asyncgen_finalizer_hook)
    events._set_running_loop(lp)
    return old_hooks


def leave(state):
    """Undoes enter()."""
    if state is None or _loop is None:
        return
    _loop._thread_id = None
    events._set_running_loop(None)
    sys.set_asyncgen_hooks(*state)


def turn():
    """Gives the loop one turn when something is ready (a task a plain cell
    created starts, as it would once a callback returns)."""
    lp = _loop
    if lp is not None and lp._ready and not lp.is_running() and not lp.is_closed():
        lp.stop()  # stop() before run_forever(): exactly one iteration
        lp.run_forever()
