# The guest side of the python profile's call setup (profiles/python.go).
# Go sends this file as the source of one cell before the call's cells, run
# with exec() in a namespace of its own, with _ARGS (base64 of a JSON
# object: cwd, nonce) and _MIME, _STDIN_MIME set. It
#   - makes input() and reads of sys.stdin mark the call as stdin-requested
#     (a display bundle of type _STDIN_MIME, which has no text and which Go
#     takes out of the call's output) before they fail as they always do;
#   - moves the interpreter to the call's working directory (cwd, or the
#     session root);
# and ends with one display bundle of type _MIME, the setup's result.

import base64
import builtins
import json
import os
import sys


def _setup():
    args = json.loads(base64.b64decode(_ARGS).decode("utf-8"))
    prelude = sys.modules.get("_wasmeval_prelude")
    show = getattr(prelude, "display", None) or builtins.display

    def mark():
        show({_STDIN_MIME: "1"}, raw=True)

    message = getattr(prelude, "_STDIN_MESSAGE", "stdin is not supported")
    if not getattr(builtins.input, "_wasmeval_marks_stdin", False):
        def input(prompt=""):
            if prompt:
                sys.stdout.write(str(prompt))
            mark()
            raise OSError(message)

        input._wasmeval_marks_stdin = True
        builtins.input = input
    base = type(sys.stdin)
    if not getattr(base, "_wasmeval_marks_stdin", False) and base.__name__ == "_NoStdin":
        class _MarkedStdin(base):
            _wasmeval_marks_stdin = True

            def read(self, *a):
                mark()
                return base.read(self, *a)

            def readline(self, *a):
                mark()
                return base.read(self, *a)

            def readlines(self, *a):
                mark()
                return base.read(self, *a)

        sys.stdin = sys.__stdin__ = _MarkedStdin()

    error = None
    cwd = args.get("cwd") or getattr(prelude, "_root", None)
    if cwd:
        try:
            os.chdir(cwd)
        except OSError as e:
            error = f"{args.get('cwd') or cwd!r} cannot be the working directory: {e.strerror or e}"
    show({_MIME: json.dumps({"nonce": args["nonce"], "error": error})}, raw=True)
    _uncount(prelude)


def _uncount(prelude):
    """Gives this cell's number back, so the call's first cell is the one
    after the session's last (<cell-N> in tracebacks)."""
    if isinstance(getattr(prelude, "_cell_count", None), int) and prelude._cell_count > 0:
        prelude._cell_count -= 1


_setup()
