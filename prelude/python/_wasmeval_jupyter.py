"""The guest side of wasmeval's native Jupyter backend (runtimes/jupyter).

The host runs this file in a fresh kernel, silently, before the session's
first cell: ``setup`` moves the kernel into the session (working
directory, environment, sys.path), then installs the helpers of the
CPython sandbox (``_wasmeval_helpers``: read, write, tool, llm, agent,
output, ...) over a ``_wasmeval`` module of its own.

Host calls cross the Jupyter stdin channel: a helper's call is an
input_request whose prompt starts with TAG and carries JSON, and the
host's input_reply carries the answer. The stdin channel is the one way
back to the host that every kernel has while a cell runs, whether wasmeval
started it or a Jupyter Server did, so the helpers work the same on both.
"""
import builtins
import json
import os
import pprint
import sys
import types

TAG = "\x00wasmeval:"
STATUS_MIME = "application/x-wasmeval-status"
# emit kinds, as the CPython sandbox's prelude numbers them.
STDOUT, STDERR, DISPLAY, RESULT, STATUS = 1, 2, 3, 4, 5


def _ask(obj):
    """One round trip to the host over the kernel's stdin channel."""
    kernel = get_ipython().kernel  # noqa: F821 - IPython's builtin
    return kernel.raw_input(TAG + json.dumps(obj, ensure_ascii=False))


def _publish(bundle):
    from IPython.display import publish_display_data

    publish_display_data(bundle)


def _bundle_from_text(text):
    """A bundle as the helpers emit it (all values text) as Jupyter wants
    it (application/json as a JSON value)."""
    bundle = json.loads(text)
    for mime, value in list(bundle.items()):
        if (mime == "application/json" or mime.endswith("+json")) and isinstance(value, str):
            try:
                bundle[mime] = json.loads(value)
            except ValueError:
                pass
    return bundle


class _Shim(types.ModuleType):
    """The _wasmeval module the helpers import, over the stdin channel."""

    def call_start(self, request):
        return int(_ask({"op": "start", "request": request}))

    def call_wait(self):
        cid, resp = json.loads(_ask({"op": "wait"}))
        return cid, resp

    def emit(self, kind, text):
        if kind == STDOUT:
            sys.stdout.write(text)
        elif kind == STDERR:
            sys.stderr.write(text)
        elif kind in (DISPLAY, RESULT):
            _publish(_bundle_from_text(text))
        elif kind == STATUS:
            ev = json.loads(text)
            _publish({STATUS_MIME: {"kind": ev.get("Kind", "status"), "message": ev.get("Message", "")}})


def _jsonable(value):
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _make_display(ipy_display):
    """display as the CPython sandbox has it: JSON-able dicts and lists go
    out as application/json too (so they reach jsonOutputs), the rest as
    IPython displays them."""

    def display(*objs, **kwargs):
        raw = kwargs.get("raw", False)
        for obj in objs:
            if not raw and isinstance(obj, (dict, list, tuple)) and _jsonable(obj):
                _publish({"text/plain": pprint.pformat(obj, width=79, sort_dicts=False),
                          "application/json": obj})
            else:
                ipy_display(obj, **kwargs)

    display.__doc__ = ipy_display.__doc__
    return display


def _load(name, source):
    module = types.ModuleType(name)
    module.__file__ = f"<wasmeval:{name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def setup(config):
    """Moves the kernel into the session, then installs the helpers.
    config: {"cwd", "env", "set_env", "seed", "helpers" (their source)}.

    A kernel wasmeval started already has the session's environment (the
    launcher built it, with the venv's bin first on PATH and the kernel's
    own temp folder), so set_env is false for it; a server's kernel gets
    the session's variables set over its own. A server on another machine
    may not have the session root: its kernel then stays where it is, and
    the file helpers still work on the root (they run on the host)."""
    cwd = config["cwd"]
    if os.path.isdir(cwd):
        os.chdir(cwd)
        if cwd in sys.path:
            sys.path.remove(cwd)
        sys.path.insert(0, cwd)
    if config.get("set_env"):
        os.environ.update(config.get("env") or {})
    if config.get("seed") is not None:
        import random

        random.seed(config["seed"])
    ip = get_ipython()  # noqa: F821
    # Plain tracebacks, as python prints them: no colours, no context.
    ip.run_line_magic("colors", "nocolor")
    ip.run_line_magic("xmode", "plain")
    sys.modules["_wasmeval"] = _Shim("_wasmeval")
    from IPython.display import display as ipy_display

    builtins.display = _make_display(ipy_display)
    helpers = _load("_wasmeval_helpers", config["helpers"])
    helpers.install()
    helpers.new_cell()
    # Each cell's host calls start afresh, as the host's do.
    ip.events.register("pre_run_cell", lambda *_: helpers.new_cell())
