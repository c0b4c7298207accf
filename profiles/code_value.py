# The code_interpreter profile's result value (profiles/code_interpreter.go).
# Run after a Python run whose last expression had a value: the prelude left
# that value in builtins._; this displays its JSON (or null when JSON cannot
# hold it, or it is too long) in one bundle of type _MIME, which Go takes
# out of the output. It ends in no expression, so _ stays as it was.

import builtins
import json
import sys


def _plain(v, depth=0):
    """True when JSON holds v as it is (str keys; tuples become lists)."""
    if depth > 100:
        return False
    if v is None or type(v) in (bool, int, float, str):
        return True
    if type(v) in (list, tuple):
        return all(_plain(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _plain(x, depth + 1) for k, x in v.items())
    return False


def _last():
    """The last expression's value: builtins._ as the CPython sandbox's
    prelude leaves it, or IPython's _ in a Jupyter kernel, where the
    display hook keeps it in the user's namespace instead."""
    get_ipython = getattr(builtins, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is not None and "_" in getattr(shell, "user_ns", {}):
        return shell.user_ns["_"]
    return getattr(builtins, "_", None)


def _value():
    v = _last()
    try:
        if not _plain(v):
            raise TypeError("not plain JSON")
        s = json.dumps(v, allow_nan=False, ensure_ascii=False)
        if len(s) > _MAX:
            s = None
    except (TypeError, ValueError, RecursionError, OverflowError):
        s = None
    prelude = sys.modules.get("_wasmeval_prelude")
    show = getattr(prelude, "display", None) or builtins.display
    show({_MIME: json.dumps({"nonce": _NONCE, "json": s})}, raw=True)
    # This cell's number goes back, so the next run's is the one after
    # the code's (<cell-N> in tracebacks).
    if isinstance(getattr(prelude, "_cell_count", None), int) and prelude._cell_count > 0:
        prelude._cell_count -= 1


_value()
