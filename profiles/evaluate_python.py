# The guest side of the evaluate_python profile (profiles/evaluate_python.go).
# Go sends this file as the source of one cell, run with exec() in a module
# namespace of its own, with _ARGS (base64 of the call's JSON) and _MIME
# set. It runs the call's code in a fresh namespace, prints what the code
# prints to the session's streams (Go collects and caps them), and ends
# with one display() bundle of type _MIME: the result Go decodes.
#
# Every module used here is one the prelude imported already: the session
# root is first on sys.path, and a json.py there must not shadow ours.

import ast
import base64
import builtins
import json
import os
import sys
import traceback

MAX_WRITE = 48_000
MAX_DEPTH = 16
MAX_SEGMENT = 80
MODES = ("create", "overwrite", "append")
_INF = float("inf")


class _Invalid(Exception):
    """An invalid call found on the guest side: (path, message)."""


def _norm(path, what):
    """The normalized form of a relative path (segments joined with '/'),
    as profiles.normalizePath makes it; ValueError when it is invalid."""
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a string, not {type(path).__name__}")
    if not path.strip():
        raise ValueError(f"{what} is empty; give a relative path like 'data/notes.txt'")
    stripped = path.strip()
    if stripped.startswith("/"):
        raise ValueError(f"{what} {path!r} is absolute; give a path relative to the session root")
    segments = []
    for piece in stripped.split("/"):
        if not piece:
            continue
        if piece in (".", ".."):
            raise ValueError(f"{what} {path!r} has a '.' or '..' segment; give a path without them")
        if not piece.isascii() or not piece.isprintable():
            raise ValueError(f"{what} {path!r} is not printable ASCII; use ASCII letters, digits and punctuation")
        if len(piece) > MAX_SEGMENT:
            raise ValueError(f"{what} {path!r} has a segment of {len(piece)} characters; use at most {MAX_SEGMENT}")
        segments.append(piece)
    if len(segments) > MAX_DEPTH:
        raise ValueError(f"{what} {path!r} is {len(segments)} segments deep; use at most {MAX_DEPTH}")
    return "/".join(segments)


def _plain(v, depth=0):
    """True when json.dumps(v) holds v losslessly."""
    if depth > 100:
        return False
    if v is None or isinstance(v, (bool, int, str)):
        return True
    if isinstance(v, float):
        return v == v and v not in (_INF, -_INF)
    if type(v) is list:
        return all(_plain(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(isinstance(k, str) and _plain(x, depth + 1) for k, x in v.items())
    return False


def _stringify(v):
    if isinstance(v, str):
        return v
    try:
        if _plain(v):
            return json.dumps(v, ensure_ascii=False)
    except Exception:  # a subclass whose methods fail
        pass
    try:
        return "!repr:" + repr(v)
    except Exception as e:
        return f"!repr:<unrepresentable {type(v).__name__}: {type(e).__name__}>"


def _main(args, emit):
    root = getattr(sys.modules.get("_wasmeval_prelude"), "_root", None) or os.getcwd()
    err = sys.stderr  # the session's stream, even if the code swaps sys.stderr

    def full(rel):
        return os.path.join(root, *rel.split("/"))

    reads = args["reads"]
    read_paths = {r["path"] for r in reads}
    writes = args["writes"]
    targets = {w["path"] for w in writes}
    helper_writes = []

    ns = {"__name__": "__main__", "__builtins__": builtins}
    for i, r in enumerate(reads):
        try:
            with open(full(r["path"]), encoding="utf-8") as f:
                ns[r["path"]] = f.read()
        except FileNotFoundError:
            raise _Invalid(f"reads[{i}].path", f"no file {r['path']!r} in the session root; write it first, or leave it out of reads")
        except IsADirectoryError:
            raise _Invalid(f"reads[{i}].path", f"{r['path']!r} is a folder; name a file")
        except UnicodeDecodeError:
            raise _Invalid(f"reads[{i}].path", f"{r['path']!r} is not UTF-8 text; reads take text files only")
        except OSError as e:
            raise _Invalid(f"reads[{i}].path", f"{r['path']!r} cannot be read: {e.strerror or e}")
    user_globals = {}
    for name, raw in args["globals"].items():
        user_globals[name] = json.loads(raw)
    ns.update(user_globals)

    def read_text(path):
        """The text of the file at path, relative to the session root."""
        rel = _norm(path, "read_text: path")
        with open(full(rel), encoding="utf-8") as f:
            return f.read()

    def write_text(path, content, mode="create"):
        """Queues a write, applied only if the code runs to its end, as the
        writes of the call are."""
        rel = _norm(path, "write_text: path")
        if not isinstance(content, str):
            raise TypeError(f"write_text: content must be a string, not {type(content).__name__}")
        if len(content) > MAX_WRITE:
            raise ValueError(f"write_text: content is {len(content)} characters; write at most {MAX_WRITE:,}")
        if mode not in MODES:
            raise ValueError(f"write_text: mode {mode!r} is not one of 'create', 'overwrite', 'append'")
        if rel in read_paths:
            raise ValueError(f"write_text: {rel!r} is read by this call; a call may not read and write one path")
        if rel in targets:
            raise ValueError(f"write_text: {rel!r} is written twice in this call; write each path once")
        targets.add(rel)
        helper_writes.append({"path": rel, "content": content, "mode": mode})

    ns["read_text"] = read_text
    ns["write_text"] = write_text
    initial = set(ns)

    ok, value_repr = True, None
    try:
        tree = ast.parse(args["code"], "<code>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<code>", "exec"), ns)
        if last is not None:
            value = eval(compile(last, "<code>", "eval"), ns)
            if value is not None:
                value_repr = repr(value)
    except (Exception, SystemExit) as e:
        ok, value_repr = False, None
        te = traceback.TracebackException(type(e), e, e.__traceback__)
        te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename == "<code>"])
        try:
            err.write("".join(te.format()))
            err.flush()
        except Exception:
            pass

    visible = {k for k in ns if k not in initial and not k.startswith("_")}
    visible.update(user_globals)
    visible.update(read_paths)
    out_globals = {k: _stringify(ns.get(k)) for k in sorted(visible)}

    final = []
    if ok:
        context = {k: v for k, v in ns.items() if not k.startswith("_")}
        for i, w in enumerate(writes):
            try:
                content = w["content"].format_map(context)
            except KeyError as e:
                raise _Invalid(f"writes[{i}].content", f"the template names {e.args[0]!r}, which is not a global after the run; define it, or write {{{{ and }}}} for literal braces")
            except (ValueError, IndexError, AttributeError, TypeError) as e:
                raise _Invalid(f"writes[{i}].content", f"not a valid str.format_map template: {e}; write {{{{ and }}}} for literal braces")
            if len(content) > MAX_WRITE:
                raise _Invalid(f"writes[{i}].content", f"the templated content is {len(content)} characters; write at most {MAX_WRITE:,}")
            final.append({"path": w["path"], "content": content, "mode": w["mode"]})
        final.extend(helper_writes)
        # Check every write before applying any, so a refused one leaves
        # the files as they were.
        for i, w in enumerate(final):
            where = f"writes[{i}].path" if i < len(writes) else f"write_text({w['path']!r})"
            p = full(w["path"])
            if w["mode"] == "create" and os.path.lexists(p):
                raise _Invalid(where, f"{w['path']!r} already exists; use mode 'overwrite' or 'append'")
            if os.path.isdir(p):
                raise _Invalid(where, f"{w['path']!r} is a folder; name a file")
        applied = []
        for w in final:
            p = full(w["path"])
            try:
                d = os.path.dirname(p)
                if d:
                    os.makedirs(d, exist_ok=True)
                with open(p, {"create": "x", "overwrite": "w", "append": "a"}[w["mode"]], encoding="utf-8") as f:
                    f.write(w["content"])
            except OSError as e:
                # A full disk quota, say: the writes before this one stay,
                # and the result lists just those.
                err.write(f"OSError: writing {w['path']!r}: {e.strerror or e}\n")
                ok, value_repr, final = False, None, applied
                break
            applied.append(w)

    emit({"ok": ok, "value_repr": value_repr, "globals": out_globals, "writes": final})


def _run():
    args = json.loads(base64.b64decode(_ARGS).decode("utf-8"))
    show = builtins.display  # taken before the code can replace it

    def emit(payload):
        payload["nonce"] = args["nonce"]
        show({_MIME: json.dumps(payload, ensure_ascii=False)}, raw=True)

    try:
        _main(args, emit)
    except _Invalid as e:
        emit({"invalid": {"path": e.args[0], "message": e.args[1]}})


_run()
