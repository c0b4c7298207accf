"""sys.setrecursionlimit within what a session can hold.

CPython 3.11 keeps Python-to-Python calls off the C stack, so with a huge
recursion limit (``sys.setrecursionlimit(10**9)``) a runaway recursion
grows frames on the heap until the session's memory limit, slows to a
crawl as allocations fail, and ends only at the cell's timeout with a
traceback that cannot be formatted. Recursion through C (map, __getattr__,
__repr__, json, pickle, copy, the compiler, ...) is bounded apart, by the
interpreter itself (wasm/python/patches/c-recursion-wasmeval.patch), as
CPython 3.12 does: past 2,500 levels of C recursion (_wasmeval.stack()
tells the level and the limit), or with the C stack low, it raises
RecursionError whatever this limit, so that it never runs the wasm stacks
out (a trap, which would roll the session back).

So the limit may not be set past ``cap``: the session's memory limit over
_FRAME_BYTES (a level of recursion rarely holds more), within
[_MIN_CAP, _MAX_CAP]. Asking for more sets ``cap`` and warns once per call
site (RuntimeWarning); a recursion past it raises RecursionError at once.
"""
import sys
import warnings

_set = sys.setrecursionlimit
_FRAME_BYTES = 2048
_MIN_CAP = 10_000
_MAX_CAP = 1_000_000

cap = (256 << 20) // _FRAME_BYTES  # until configure: the default memory limit


def configure(memory_limit):
    """Sets cap for a session whose memory limit is memory_limit bytes
    (0: unknown, keep the default's)."""
    global cap
    if memory_limit and memory_limit > 0:
        cap = max(_MIN_CAP, min(_MAX_CAP, memory_limit // _FRAME_BYTES))
    if sys.getrecursionlimit() > cap:
        _set(cap)


def setrecursionlimit(limit, /):
    """Set the maximum depth of the Python interpreter stack to limit, at
    most the session's cap (see _wasmeval_recursion)."""
    if type(limit) is int and limit > cap:
        warnings.warn(
            f"sys.setrecursionlimit({limit}): capped at {cap}, the deepest recursion "
            "this session's memory and stack hold; deeper recursion raises RecursionError",
            RuntimeWarning, stacklevel=2)
        limit = cap
    _set(limit)


def install():
    sys.setrecursionlimit = setrecursionlimit


# Frames of a traceback kept at each end by trim_tracebacks.
_KEEP = 500


def trim_tracebacks(exc):
    """Cuts the middle out of the very long tracebacks of exc and the
    exceptions chained to it, keeping _KEEP frames at each end, so that a
    RecursionError (or an interrupt) 100,000 frames deep is reported in
    milliseconds rather than formatted past the cell's timeout. Returns a
    note that says what was left out, or ""."""
    cut, seen, todo = 0, set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        todo += [e.__cause__, e.__context__]
        todo += list(getattr(e, "exceptions", None) or ())
        tbs, tb = [], e.__traceback__
        while tb is not None:
            tbs.append(tb)
            tb = tb.tb_next
        if len(tbs) > 2 * _KEEP:
            tbs[_KEEP - 1].tb_next = tbs[-_KEEP]
            cut += len(tbs) - 2 * _KEEP
    if not cut:
        return ""
    return f"({cut} frames from the middle of this traceback are not shown)\n"
