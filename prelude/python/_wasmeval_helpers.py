"""The helpers of wasmeval's Python cells: read, write, append, tree, diff,
output, env, sort, uniq, counter, tool, llm, agent, parallel, pipeline, log, phase
and budget. ``install`` puts them into builtins.

Host calls (files, tool, llm, agent) go through ``_wasmeval.call_start`` and
``_wasmeval.call_wait``; the requests and responses are the JSON of the
hostcalls package's ABI.

parallel: suspend and replay
----------------------------
The guest is single-threaded, yet the host runs started calls concurrently.
Inside ``parallel`` every thunk runs with a replay log. When a thunk makes a
host call whose answer is not in its log yet, the call is started and the
thunk is abandoned by raising ``_Suspend`` (a BaseException). When that call
finishes, its answer is appended to the log and the thunk runs again from
its start: its earlier calls return their logged answers at once, and it
gets one call further. So up to ``concurrency`` calls are in flight while
the guest runs only one thunk at a time.

Limitations: a thunk runs once more per host call it makes, so its side
effects before its last call (print, appends to outside lists, random
numbers) repeat; write thunks as pure functions of their calls' answers.
A thunk whose calls depend on something that changes between runs (time,
random) is told apart by its call order only: its n-th call gets the n-th
answer. A thunk that catches BaseException (or uses a bare except) around
a call swallows the suspension and breaks the scheme. Nested parallel
inside a thunk runs its thunks one after the other.
"""
import builtins
import json
import math
import os

import _wasmeval

DISPLAY = 3
STATUS = 5
# Display bundles of these MIME types are status events, not output: the
# seed's prelude emits display({"application/x-omp-status": {...}}, raw=True).
STATUS_MIME = ("application/x-wasmeval-status", "application/x-omp-status")
MAX_CONCURRENCY = 16
_REQUEST_CAP = 16 << 20  # the runtime's transport cap on one request
_CHUNK = 4 << 20


class HostCallError(Exception):
    """A host call failed: the message says why."""


class _Suspend(BaseException):
    """Raised inside a parallel thunk whose next call is still running."""


# Answers of finished calls that nobody has collected yet, by call id.
_stash = {}
# Ids whose answers nobody wants any more (a parallel that failed early).
_orphans = set()
# The running parallel thunk's replay state, or None outside parallel.
_replay = None


def _wait_for(want):
    """Waits until call `want` finishes; returns its response text."""
    while want not in _stash:
        cid, resp = _wasmeval.call_wait()
        if cid == -2:
            raise HostCallError("internal error: the host lost a call")
        if cid < 0:
            raise KeyboardInterrupt
        if cid in _orphans:
            _orphans.discard(cid)
            continue
        _stash[cid] = resp
    return _stash.pop(want)


def _start(request):
    text = json.dumps(request, ensure_ascii=False)
    cid = _wasmeval.call_start(text)
    if cid < 0:
        raise HostCallError(
            f"{request.get('op')}: too many host calls are in flight at once (the cap is 64); lower parallel's concurrency")
    return cid


def _decode(resp, full=False):
    r = json.loads(resp)
    if "error" in r:
        raise HostCallError(r["error"].get("message", "the host call failed"))
    return r if full else r.get("result")


def _call(request, full=False):
    """Makes one host call and returns its result (with full, the whole
    response: result and extras such as output_id), or raises
    HostCallError."""
    st = _replay
    if st is None:
        return _decode(_wait_for(_start(request)), full)
    i = st["next"]
    st["next"] = i + 1
    if i < len(st["log"]):
        return _decode(st["log"][i], full)
    st["pending"] = _start(request)
    raise _Suspend()


# ---- files ------------------------------------------------------------------

def _path(p):
    if isinstance(p, os.PathLike):
        p = os.fspath(p)
    if not isinstance(p, str):
        raise TypeError(f"the path must be a str, not {type(p).__name__}")
    return p


def read(path, offset=1, limit=None):
    """The text of lines offset .. offset+limit-1 of a file (1-indexed)."""
    return _call({"op": "read", "path": _path(path), "offset": offset, "limit": limit})


def _text(content, name):
    if isinstance(content, (bytes, bytearray)):
        content = bytes(content).decode("utf-8")
    if not isinstance(content, str):
        raise TypeError(f"{name}(): the content must be a str, not {type(content).__name__}")
    return content


def write(path, content):
    """Writes content to a file (creating its directories); returns its
    absolute path."""
    path, content = _path(path), _text(content, "write")
    if len(content) <= _CHUNK:
        return _call({"op": "write", "path": path, "content": content})
    # The transport carries at most 16 MiB: write the head atomically, then
    # append the rest (the host caps the whole at 64 MiB per call).
    out = _call({"op": "write", "path": path, "content": content[:_CHUNK]})
    for i in range(_CHUNK, len(content), _CHUNK):
        _call({"op": "append", "path": path, "content": content[i:i + _CHUNK]})
    return out


def append(path, content):
    """Appends content to a file (creating it); returns its absolute path."""
    path, content = _path(path), _text(content, "append")
    out = None
    for i in range(0, max(len(content), 1), _CHUNK):
        out = _call({"op": "append", "path": path, "content": content[i:i + _CHUNK]})
    return out


def tree(path=".", max_depth=3, show_hidden=False, *, hidden=None):
    """The directory tree under path, as text. hidden (or show_hidden)
    shows names that start with a dot."""
    if hidden is not None:
        show_hidden = hidden
    return _call({"op": "tree", "path": _path(path), "max_depth": max_depth, "show_hidden": bool(show_hidden)})


def diff(a, b, text=False):
    """The unified diff from file a to file b, under 'a/A' and 'b/B'
    headers ('' when they are equal). With text=True, a and b are the
    texts to compare instead, under '--- a' and '+++ b'."""
    if text:
        return _call({"op": "diff", "a": _text(a, "diff"), "b": _text(b, "diff")})
    return _call({"op": "diff", "files": True, "a": _path(a), "b": _path(b)})


# ---- cut outputs ------------------------------------------------------------

def output(*ids, format="raw", query=None, offset=1, limit=None):
    """Reads back outputs by id: those the sandbox cut ('out-1', as their
    markers name them) and agent() answers ('agent://task-1', as the
    agent's status event names them). query keeps the lines that contain
    it (a plain substring); offset and limit (1-indexed lines) then page
    through what is left. format='raw' (the default) returns the text;
    format='json' returns {'id', 'lines', 'text'} (lines: how many the
    whole output has). Several ids give a list of them; format='text'
    joins several texts under '==> id <==' headers instead."""
    for i in ids:
        if not isinstance(i, str):
            raise TypeError(f"output: an id is a str like 'out-1', not {type(i).__name__}")
    return _call({"op": "output", "ids": list(ids), "format": format, "query": query or "",
                  "offset": offset, "limit": limit})


# ---- text -------------------------------------------------------------------

def env(key=None, value=None):
    """The session's environment: all of it as a dict, one variable (None
    when unset), or, with value, sets it and returns value."""
    if key is None:
        return dict(os.environ)
    if value is None:
        return os.environ.get(key)
    os.environ[key] = str(value)
    return str(value)


def _lines(text):
    if isinstance(text, str):
        return text.splitlines()
    return [str(x) for x in text]


def sort(text, reverse=False, unique=False):
    """The lines of text (or the items of a list) sorted, as text."""
    lines = _lines(text)
    if unique:
        lines = list(dict.fromkeys(lines))
    return "\n".join(sorted(lines, reverse=bool(reverse)))


def uniq(text, count=False):
    """Adjacent duplicate lines collapsed, as uniq(1); with count, each line
    is prefixed by how often it repeated."""
    out = []
    for line in _lines(text):
        if out and out[-1][1] == line:
            out[-1][0] += 1
        else:
            out.append([1, line])
    if count:
        return "\n".join(f"{n:>7} {line}" for n, line in out)
    return "\n".join(line for _, line in out)


def counter(items, limit=None, reverse=False):
    """[(item, count)] by count, most frequent first (least with
    reverse), ties in order of first appearance; at most limit of them.
    A str counts its lines."""
    counts = {}
    for x in _lines(items) if isinstance(items, str) else items:
        counts[x] = counts.get(x, 0) + 1
    pairs = sorted(counts.items(), key=lambda kv: kv[1] if reverse else -kv[1])
    return pairs if limit is None else pairs[:limit]


# ---- status -----------------------------------------------------------------

def _status(kind, message):
    _wasmeval.emit(STATUS, json.dumps({"Kind": kind, "Message": str(message)}))


def log(message):
    """A status event: shown to the agent's user, and it restarts the cell's
    timeout clock."""
    _status("log", message)


def phase(title):
    """A status event that names the phase of work now starting."""
    _status("phase", title)


class _Budget:
    """budget: the cell's budgets, as the seed names them, over three
    dimensions: 'seconds' (the cell's hard time limit), 'fuel' (Python's
    deterministic fuel, when the session or cell has a budget) and
    'agent_depth' (how deep agent() may still nest).

    budget.total       {'seconds': S, 'fuel': F or None, 'agent_depth': 3}
    budget.spent()     what has been used of each
    budget.remaining() what is left of each (math.inf when no ceiling)
    budget.hard        True: every ceiling is enforced

    budget() returns all of it as one dict."""

    def __call__(self):
        return _call({"op": "budget"})

    @staticmethod
    def _dims(d, inf):
        return {k: (math.inf if inf and v is None else v) for k, v in d.items()}

    @property
    def total(self):
        return self._dims(self()["total"], False)

    def spent(self):
        return self._dims(self()["spent"], False)

    def remaining(self):
        return self._dims(self()["remaining"], True)

    @property
    def hard(self):
        return bool(self()["hard"])

    def __getattr__(self, name):
        d = _call({"op": "budget"})
        if name in d:
            return d[name]
        raise AttributeError(name)

    def __repr__(self):
        return f"budget({self()!r})"


budget = _Budget()


# ---- tool, llm, agent -------------------------------------------------------

class _Tools:
    """tool.<name>(args): calls the host's tool <name> with a dict of
    arguments (or keyword arguments)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(args=None, **kwargs):
            if args is None:
                args = {}
            if not isinstance(args, dict):
                raise TypeError(f"tool.{name}: the arguments must be a dict, not {type(args).__name__}")
            return _call({"op": "tool", "name": name, "args": {**args, **kwargs}})

        call.__name__ = name
        return call

    def __repr__(self):
        return "<tools of the host: tool.<name>(args)>"


tool = _Tools()


def llm(prompt, model="default", system=None, schema=None):
    """Asks the host's LLM; returns the text, or the parsed object when a
    JSON schema is given."""
    return _call({"op": "llm", "prompt": str(prompt), "model": model, "system": system or "", "schema": schema})


def agent(prompt, agent_type="task", model=None, context=None, label=None, schema=None, *, agentType=None):
    """Runs a sub-agent on prompt; returns its answer (the parsed object
    when a JSON schema is given). agent_type (or agentType, as in
    JavaScript) defaults to "task". The answer is kept: output(ID) reads it
    back by the id the agent's "done" status event names,
    'agent://LABEL-N' (the agent type when there is no label)."""
    if agentType is not None:
        agent_type = agentType
    agent_type = agent_type or "task"
    name = label or agent_type
    # Under parallel's replay, report only the run that makes the call and
    # the one that first sees its answer.
    idx = _replay["next"] if _replay is not None else 0
    fresh = _replay is None or idx >= len(_replay["log"])
    if fresh:
        _status("agent", f"{name}: started")
    r = _call({"op": "agent", "prompt": str(prompt), "agent_type": agent_type, "model": model or "",
               "context": context or "", "label": label or "", "schema": schema}, full=True)
    if _replay is None or idx == len(_replay["log"]) - 1:
        _status("agent", f"{r.get('output_id') or name}: done")
    return r.get("result")


# ---- parallel ---------------------------------------------------------------

def parallel(thunks, concurrency=4):
    """Runs the thunks (functions of no arguments) with up to concurrency
    (max 16) host calls in flight; returns their results in order. The
    first failure is raised. See the module doc for how, and its limits."""
    global _replay
    thunks = list(thunks)
    for i, th in enumerate(thunks):
        if not callable(th):
            raise TypeError(f"parallel: item {i} is a {type(th).__name__}, not a function of no arguments")
    if not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"parallel: concurrency is {concurrency!r}; give 1..{MAX_CONCURRENCY}")
    if _replay is not None:  # nested: the outer parallel replays us
        return [th() for th in thunks]
    results = [None] * len(thunks)
    states = [{"log": [], "next": 0, "pending": None} for _ in thunks]
    waiting = {}  # call id -> thunk index
    queue = list(range(len(thunks)))
    queue.reverse()
    active = 0

    def step(i):
        """Runs thunk i until it finishes or suspends; True when finished."""
        global _replay
        st = states[i]
        st["next"] = 0
        _replay = st
        try:
            results[i] = thunks[i]()
            return True
        except _Suspend:
            waiting[st["pending"]] = i
            return False
        finally:
            _replay = None

    try:
        while queue or waiting:
            while queue and active < concurrency:
                i = queue.pop()
                active += 1
                if step(i):
                    active -= 1
            if not waiting:
                continue
            cid, resp = _wasmeval.call_wait()
            if cid == -2:
                raise HostCallError("internal error: the host lost a call")
            if cid < 0:
                raise KeyboardInterrupt
            if cid not in waiting:
                if cid in _orphans:
                    _orphans.discard(cid)
                else:
                    _stash[cid] = resp
                continue
            i = waiting.pop(cid)
            states[i]["log"].append(resp)
            if step(i):
                active -= 1
    except BaseException:
        _orphans.update(waiting)
        raise
    return results


def pipeline(items, *stages, concurrency=4):
    """Passes each item through the stages in turn, each stage over all
    items with parallel(); returns the last stage's results in order."""
    items = list(items)
    for stage in stages:
        if not callable(stage):
            raise TypeError(f"pipeline: a stage is a {type(stage).__name__}, not a function")
        items = parallel([(lambda s=stage, x=x: s(x)) for x in items], concurrency=concurrency)
    return items


NAMES = ("read", "write", "append", "tree", "diff", "output", "env", "sort", "uniq", "counter", "tool", "llm",
         "agent", "parallel", "pipeline", "log", "phase", "budget")


def new_cell():
    """Forgets the last cell's calls: call ids start afresh in each cell."""
    global _replay
    _stash.clear()
    _orphans.clear()
    _replay = None


def cell_state():
    """The running cell's calls (for a cell nested in it to put back)."""
    return dict(_stash), set(_orphans), _replay


def set_cell_state(state):
    """Puts back what cell_state returned, after a nested cell."""
    global _replay
    stash, orphans, _replay = state
    _stash.clear()
    _stash.update(stash)
    _orphans.clear()
    _orphans.update(orphans)


def _status_payload(obj, raw):
    """The payload of a status MIME type that displaying obj carries, or
    None: a raw bundle (a dict) or an object whose _repr_mimebundle_ has
    one."""
    bundle = obj if raw else None
    if not raw and not isinstance(obj, type):
        method = getattr(obj, "_repr_mimebundle_", None)
        if callable(method):
            try:
                bundle = method()
            except Exception:
                return None
            if isinstance(bundle, tuple):
                bundle = bundle[0]
    if not isinstance(bundle, dict):
        return None
    for mime in STATUS_MIME:
        if mime in bundle:
            return mime, bundle[mime]
    return None


def _wrap_display(display):
    """display, with bundles of a status MIME type sent as status events
    (the host turns them into one: sandbox.StatusMIMETypes)."""

    def status_display(*objs, **kwargs):
        raw = kwargs.get("raw", False)
        for obj in objs:
            found = _status_payload(obj, raw)
            if found is None:
                display(obj, **kwargs)
                continue
            mime, payload = found
            if not isinstance(payload, str):
                payload = json.dumps(payload, default=str)
            _wasmeval.emit(DISPLAY, json.dumps({mime: payload}))

    status_display.__doc__ = display.__doc__
    status_display.__wrapped__ = display
    return status_display


def install():
    display = getattr(builtins, "display", None)
    if display is not None and not hasattr(display, "__wrapped__"):
        builtins.display = _wrap_display(display)
    g = globals()
    for name in NAMES:
        setattr(builtins, name, g[name])
    builtins.HostCallError = HostCallError
