"""A minimal asyncio event loop for top-level await in cells.

WASI has no socketpair, so asyncio's selector loop cannot make its self-pipe,
and there are no file descriptors worth watching: this loop's selector only
sleeps until the next timer. One loop lives for the whole session, so tasks
started in one cell keep running in later ones, as in Jupyter.
"""
import asyncio
import selectors
import time

_loop = None


class _SleepSelector(selectors.BaseSelector):
    def register(self, fileobj, events, data=None):
        raise OSError("wasmeval: asyncio cannot watch file descriptors in the sandbox")

    def unregister(self, fileobj):
        raise KeyError(fileobj)

    def select(self, timeout=None):
        if timeout is None:
            raise RuntimeError("wasmeval: the event loop has nothing to wait for (deadlock)")
        if timeout > 0:
            time.sleep(timeout)
        return []

    def get_map(self):
        return {}

    def close(self):
        pass


class _Loop(asyncio.SelectorEventLoop):
    def __init__(self):
        super().__init__(_SleepSelector())

    def _make_self_pipe(self):
        pass

    def _close_self_pipe(self):
        pass

    def _write_to_self(self):
        pass


def run(coro):
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = _Loop()
        asyncio.set_event_loop(_loop)
    return _loop.run_until_complete(coro)
