"""The guest side of wasmeval's Python runtime.

The C shim runs this file as module ``_wasmeval_prelude`` once, right after
Py_Initialize and before the memory snapshot every session starts from. The
host then calls ``control`` (session setup) and ``run_cell`` (one cell).
Output leaves through ``_wasmeval.emit``; nothing uses the WASI stdio pipes.
"""
import ast
import base64  # here, not in _mime_text: a base64.py in the root would shadow it
import builtins
import io
import json
import linecache
import os
import pprint
import re
import sys
import traceback  # here, not at the first error: an import walks the root
import types

import _wasmeval

# emit kinds; keep in step with runtimes/python (emitStdout, ...).
STDOUT, STDERR, DISPLAY, RESULT, STATUS = 1, 2, 3, 4, 5

_CO_COROUTINE = 0x0080
_STDIN_MESSAGE = (
    "stdin is not supported in wasmeval: put the data in the cell's code "
    "or write it to a file in the session root and read that"
)


class _Output(io.TextIOBase):
    """sys.stdout / sys.stderr: every write goes straight to the host."""

    def __init__(self, kind, name):
        self._kind = kind
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "strict"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        raise io.UnsupportedOperation("fileno: output goes to the wasmeval host")

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if s:
            _wasmeval.emit(self._kind, s)
        return len(s)

    def flush(self):
        pass


class _NoStdin(io.TextIOBase):
    name = "<stdin>"

    def readable(self):
        return True

    def read(self, *args):
        raise OSError(_STDIN_MESSAGE)

    readline = read

    def fileno(self):
        raise io.UnsupportedOperation(_STDIN_MESSAGE)


def _input(prompt=""):
    raise OSError(_STDIN_MESSAGE)


sys.stdout = sys.__stdout__ = _Output(STDOUT, "<stdout>")
sys.stderr = sys.__stderr__ = _Output(STDERR, "<stderr>")
# The session's own streams: a cell may set sys.stdout or sys.stderr to None
# (or to an object that fails); the prelude still reports on these, and
# gives them back to the next cell (run_cell).
_stdout, _stderr = sys.stdout, sys.stderr


def _stream(name, own):
    """sys.<name> when it can be written to, else the session's own."""
    s = getattr(sys, name, None)
    return s if callable(getattr(s, "write", None)) else own
sys.stdin = sys.__stdin__ = _NoStdin()
builtins.input = _input


_builtin_print = builtins.print
_WHOLE = 1 << 16  # print joins what it writes up to this many characters


def _print(*args, sep=" ", end="\n", file=None, flush=False, **kw):
    """print, in one host write when it writes to a stream of ours.

    The builtin writes each value, each sep and the end apart: print(x)
    was two host calls ("x", then "\n"), each a trip out of the guest
    (issue 15). Here the same bytes go out in one, in the same order
    against stderr and displays. The builtin does the rest: another file,
    a stream whose write was replaced, a sep or end that is not a str, an
    unknown keyword (its message). Past _WHOLE characters the pieces go
    apart, as the builtin's, not copied into one; a value whose str()
    raises leaves what the builtin would have written before it."""
    out = getattr(sys, "stdout", None) if file is None else file
    if (kw or type(out) is not _Output or "write" in out.__dict__
            or (sep is not None and type(sep) is not str)
            or (end is not None and type(end) is not str)):
        # file as given: the builtin raises "lost sys.stdout" itself.
        return _builtin_print(*args, sep=sep, end=end, file=file, flush=flush, **kw)
    if sep is None:
        sep = " "
    if end is None:
        end = "\n"
    emit, kind = _wasmeval.emit, out._kind
    parts = []
    try:
        for a in args:
            parts.append(a if type(a) is str else str(a))
    except BaseException:
        s = sep.join(parts) + sep if parts else ""  # the builtin's sep comes first
        if s:
            emit(kind, s)
        raise
    if len(parts) == 1:
        s = parts[0]
        if len(s) <= _WHOLE:
            s += end
            if s:
                emit(kind, s)
            return
    elif sum(map(len, parts)) <= _WHOLE:
        s = sep.join(parts) + end
        if s:
            emit(kind, s)
        return
    for i, p in enumerate(parts):
        if i and sep:
            emit(kind, sep)
        if p:
            emit(kind, p)
    if end:
        emit(kind, end)


_print.__name__ = _print.__qualname__ = "print"
_print.__module__ = "builtins"
_print.__doc__ = _builtin_print.__doc__
builtins.print = _print

# Ctrl-C semantics: the host interrupts a cell by tripping SIGINT.
try:
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
except Exception as e:  # pragma: no cover - reported, not fatal
    sys.stderr.write(f"wasmeval prelude: no SIGINT handler: {e}\n")

# The user's namespace is __main__'s, so pickle and dataclasses find classes.
_main = types.ModuleType("__main__")
_main.__dict__["__builtins__"] = builtins
sys.modules["__main__"] = _main
_ns = _main.__dict__
_cell_count = 0
_running = 0  # cells on the stack: more than one while a nested cell runs


# ---- display ----------------------------------------------------------------

def _jsonable(value):
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return None
    return None


def _repr_text(value):
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        # pprint's text is repr's when that fits on one line (79 columns)
        # and nothing in it recurses ([...]), and pformat costs ~8 µs in
        # the guest even for {'a': 1}. A container of 27 items or more
        # cannot fit: repr is not tried on it.
        if len(value) < 27:
            text = repr(value)
            if len(text) <= 79 and "..." not in text and "\n" not in text:
                return text
        return pprint.pformat(value, width=79, sort_dicts=False)
    return repr(value)


def _call_repr(value, name):
    method = getattr(value, name, None)
    if method is None or isinstance(value, type):
        return None
    data = method()
    if isinstance(data, tuple):  # (data, metadata)
        data = data[0]
    return data


# Built-in types have no _repr_*_ methods (their attributes cannot be set),
# so their bundle is their text (and JSON) without looking for them.
_PLAIN = frozenset((int, float, complex, bool, str, bytes, type(None), list, tuple, dict,
                    set, frozenset, range))


def _bundle(value, json_for_plain):
    """The MIME bundle for value, as IPython's display formatter builds it."""
    if type(value) in _PLAIN:
        if json_for_plain:
            bundle = {"text/plain": value if type(value) is str else _repr_text(value)}
            j = _jsonable(value)
            if j is not None:
                bundle["application/json"] = j
            return bundle
        return {"text/plain": _repr_text(value)}
    bundle = {}
    mime = _call_repr(value, "_repr_mimebundle_")
    if isinstance(mime, dict):
        for k, v in mime.items():
            bundle[k] = _mime_text(k, v)
    for name, kind in (
        ("_repr_png_", "image/png"),
        ("_repr_jpeg_", "image/jpeg"),
        ("_repr_svg_", "image/svg+xml"),
        ("_repr_markdown_", "text/markdown"),
        ("_repr_html_", "text/html"),
        ("_repr_json_", "application/json"),
        ("_repr_latex_", "text/latex"),
    ):
        if kind in bundle:
            continue
        data = _call_repr(value, name)
        if data is not None:
            bundle[kind] = _mime_text(kind, data)
    if "text/plain" not in bundle:
        bundle["text/plain"] = value if isinstance(value, str) and json_for_plain else _repr_text(value)
    if json_for_plain and "application/json" not in bundle:
        j = _jsonable(value)
        if j is not None:
            bundle["application/json"] = j
    return bundle


_quote = json.encoder.encode_basestring_ascii


def _dumps(bundle):
    """json.dumps(bundle), for a bundle of strings without json.dumps'
    cost of making an encoder each call (nor a comprehension's function:
    adding to a str is the quickest for the usual one or two entries)."""
    try:
        text = "{"
        for k, v in bundle.items():
            if len(text) > 1:
                text += ", "
            text += _quote(k) + ": " + _quote(v)
        return text + "}"
    except TypeError:  # a value that is not a string
        return json.dumps(bundle)


def _mime_text(kind, data):
    if isinstance(data, (bytes, bytearray)):
        return base64.b64encode(bytes(data)).decode("ascii")
    if kind == "application/json" and not isinstance(data, str):
        return json.dumps(data)
    return str(data)


def _shaped(obj):
    """The bundle of a dict in one of the shapes JavaScript's display()
    takes (the seed's): {'type': 'image', 'data': BASE64, 'mimeType':
    'image/png'}, {'type': 'markdown', 'text': ...}, {'type': 'html',
    'html': ...}; None for anything else."""
    if type(obj) is not dict:
        return None
    kind = obj.get("type")
    if kind == "image" and isinstance(obj.get("data"), str):
        mime = obj.get("mimeType")
        return {mime if isinstance(mime, str) else "image/png": obj["data"]}
    if kind == "markdown" and isinstance(obj.get("text"), str):
        return {"text/markdown": obj["text"]}
    if kind == "html" and isinstance(obj.get("html"), str):
        return {"text/html": obj["html"]}
    return None


def display(*objs, **kwargs):
    """Show objects: rich reprs go to their MIME kind, JSON-able values to
    jsonOutputs, everything else as text. A dict shaped as JavaScript's
    display() takes it ({'type': 'image', 'data': BASE64, 'mimeType': ...},
    'markdown' with 'text', 'html' with 'html') is that output."""
    raw = kwargs.pop("raw", False)
    if kwargs:
        raise TypeError(f"display() got unexpected keyword arguments: {', '.join(kwargs)}")
    for obj in objs:
        bundle = obj if raw else (_shaped(obj) or _bundle(obj, json_for_plain=True))
        _wasmeval.emit(DISPLAY, json.dumps(bundle))


builtins.display = display


# ---- cells ------------------------------------------------------------------

# ---- compiling a cell -------------------------------------------------------
#
# A cell is compiled as IPython runs it: its last statement, when it is an
# expression not followed by ';', is compiled apart and its value displayed.
# Going through the AST (ast.parse, then compile from the tree) costs a
# trivial cell about twice what compiling its text does, so the cell's
# text is compiled directly when its last statement can be told from the
# text alone (_fast_compile), and through the AST otherwise (_ast_compile).
# Both give the same code, errors and line numbers. Code of a repeated cell
# comes from a small cache, under the new cell's name.

_TLA = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

# A last statement that cannot be an expression: it starts with a keyword
# no expression starts with, a decorator, or an assignment or annotation of
# names, attributes and subscripts (x = ..., a.b[i] += ..., c, d = ..., x: int).
_STATEMENT = re.compile(
    r"(?:(?:import|from|def|class|if|for|while|with|try|return|del|pass|assert|global|nonlocal"
    r"|raise|break|continue|async)\b|@"
    r"|(?!lambda\b)[A-Za-z_]\w*(?:\.\w+|\[[^\]\n]*\])*(?:\s*,\s*[A-Za-z_][\w.]*)*"
    r"\s*(?:(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|:))")

# A clause of a compound statement: in a cell without triple quotes, a line
# at column 0 that starts so continues no expression.
_CLAUSE = re.compile(r"(?:except|elif)\b|(?:else|finally)\s*:")

# Short cells are cached unless compiling them may warn: a cached cell
# would warn only the first time. _WARNS finds, from the text, what may:
# a backslash (an invalid escape), an assert (on a tuple), "is" after a
# literal or before one (not None, True, False or a name), a number run
# into a keyword (1if: invalid decimal literal), and a literal called or
# subscripted (None(, 1j(, 0xff[, 'a'(, ...[, and ), ], } before ( or [,
# which also catches a call's result called or subscripted). A name that
# ends in e or a digit (range(, x2[) is no literal: it used to count as
# one, which kept most cells that call something out of the cache.
_CACHE_CELLS = 64     # compiled cells kept
_CACHE_CHARS = 200    # longest cell cached: compiling a longer one costs more than its fixed part
_WARNS = re.compile(
    r"\\|\bassert\b"
    r"|[\]\)\}'\"\d]\s*is\b|\bis(?:\s+not)?\s*(?:[\d'\"(\[{.+\-~]|[bBrRuU]{1,2}['\"])"
    r"|\b\d[\w.]*?(?:and|else|for|if|in|is|not|or)\b"
    r"|(?:[\]\)\}'\"]|\.\.\.|\b\d[\w.]*|\b(?:None|True|False))\s*[\(\[]")
# cell text -> (body, last, plain, its linecache entry), compiled under the
# name of the cell that put it there
_cache = {}
_seen = set()         # short cells run once: a cell is cached when it comes again


def _compiled(code, filename, lines, hit):
    """(body, last, plain): the cell's code without its displayed last
    expression, and that expression's (either may be None), and whether
    running them leaves nothing behind (_leaves_nothing). hit is the
    cell's entry in the cache, or None. run_cell runs the code of a hit
    that is plain as it is; a hit here defines code or handles exceptions,
    so its code objects are renamed to the new cell, for the tracebacks
    and inspect.getsource of later cells."""
    if hit is not None:
        body, last = hit[0], hit[1]
        return (None if body is None else _renamed(body, filename),
                None if last is None else _renamed(last, filename), hit[2])
    body, last = _fast_compile(code, filename, lines) or _ast_compile(code, filename)
    plain = _leaves_nothing(body) and _leaves_nothing(last)
    if len(code) <= _CACHE_CHARS:
        if code not in _seen:
            if len(_seen) >= 4 * _CACHE_CELLS:
                _seen.clear()
            _seen.add(code)
        elif not _WARNS.search(code):
            if len(_cache) >= _CACHE_CELLS:
                _cache.clear()
            _cache[code] = (body, last, plain, (len(code), None, lines, filename))
    return body, last, plain


def _renamed(co, filename):
    """co and the code objects inside it, named filename."""
    consts = co.co_consts
    for c in consts:
        if type(c) is types.CodeType:
            consts = tuple(_renamed(c, filename) if type(c) is types.CodeType else c for c in consts)
            return co.replace(co_filename=filename, co_consts=consts)
    return co.replace(co_filename=filename)


def _ast_compile(code, filename):
    tree = ast.parse(code, filename, "exec")
    body = last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _suppressed(code):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval",
                       flags=_TLA, dont_inherit=True)
    if tree.body:
        body = compile(tree, filename, "exec", flags=_TLA, dont_inherit=True)
    return body, last


def _fast_compile(code, filename, lines):
    """The cell compiled from its text, or None when its last statement
    cannot be told that way (then _ast_compile does the work, and reports
    any error).

    The last line that starts at column 0 starts the tail; the lines above
    it are the head. When the head is complete (it parses on its own), the
    tail starts a statement or a clause of one (else:, except ...). A tail
    that starts like a statement (a keyword no expression starts with, an
    assignment; _STATEMENT) ends the cell with a statement: the cell is
    compiled whole. Otherwise the tail is compiled as an expression and the
    head apart, as _ast_compile does. Instead of a long head, a shorter tail
    may be parsed on its own: a tail that continues a bracket of the head is
    unbalanced alone, and a cell without triple quotes or backslashes has
    no string that spans lines.

    Left to the AST: a backslash (line continuations, escapes that warn),
    line breaks other than \\n (splitlines and the tokenizer count lines
    differently), several statements on the last line, a display suppressed
    with ';'. A cell whose text is parsed twice (a long head proved by its
    tail, a tail that is not an expression after all) repeats a warning of
    the tokenizer's (1if: "invalid decimal literal")."""
    if "\\" in code or "\r" in code:
        return None
    if len(lines) == 1:  # most cells: one line, one statement
        if ";" in code or code[:1] in (" ", "\t", "#"):
            return None
        try:
            if _STATEMENT.match(code):
                return compile(code, filename, "exec", _TLA, True), None
            return None, compile(code, filename, "eval", _TLA, True)
        except Exception:
            return None
    if len(lines) != code.count("\n") + (code[-1:] != "\n"):
        return None
    i = len(lines) - 1
    while i >= 0 and lines[i][:1] in ("", " ", "\t", "\n", "#"):
        i -= 1
    if i < 0:
        return None
    head_code = False
    if i:
        head = "".join(lines[:i])
        tail = code[len(head):]
        for line in lines[:i]:
            c = line.lstrip()[:1]
            if c and c != "#":
                head_code = True
                break
    else:
        tail = code
    if ";" in tail:
        return None
    pad = "\n" * i  # the tail keeps its line numbers
    try:
        if not head_code:
            if _STATEMENT.match(tail):
                return compile(code, filename, "exec", _TLA, True), None
            return None, compile(pad + tail, filename, "eval", _TLA, True)
        quotes = '"""' in code or "'''" in code
        clause = not quotes and _CLAUSE.match(tail)
        if clause or _STATEMENT.match(tail):
            if not clause:
                parts = (head,) if quotes else (head, pad + tail) if len(head) <= len(tail) else (pad + tail, head)
                for part in parts:
                    try:
                        compile(part, filename, "exec", _TLA | ast.PyCF_ONLY_AST, True)
                        break
                    except SyntaxError:
                        pass
                else:
                    return None
            return compile(code, filename, "exec", _TLA, True), None
        last = compile(pad + tail, filename, "eval", _TLA, True)
        return compile(head, filename, "exec", _TLA, True), last
    except Exception:
        return None


def _suppressed(code):
    """True when the cell's last line ends with ';' (IPython's rule)."""
    for line in reversed(code.splitlines()):
        s = line.split("#", 1)[0].rstrip()
        if s:
            return s.endswith(";")
    return False


# ---- the event loop, started when asyncio is first imported ----------------
#
# asyncio costs a session 1.5 MiB of its memory and every cell a few
# microseconds, so the template does not import it: the session's loop
# (_wasmeval_loop) starts when a cell first awaits or imports asyncio, and
# a plain cell that imports it finds the loop running at once.

_sync_cells = []  # a [state, entered] slot per plain cell on the stack


def _exec(code_obj):
    """Runs a compiled cell (part) on the session's event loop: as a task
    when it awaits, else as one callback of the running loop (one
    function, not two: each function a cell calls writes the pages of its
    function and code objects, reference counts that a checkpoint then
    compares)."""
    # getattr, not code_obj.co_flags: CPython 3.11 cannot specialize an
    # attribute of a code object, and the failed instruction counts down
    # in this code's bytecode each time, a page changed every cell.
    if getattr(code_obj, "co_flags") & _CO_COROUTINE:
        import _wasmeval_loop

        return _wasmeval_loop.run(eval(code_obj, _ns))
    slot = [None, False]
    loop = sys.modules.get("_wasmeval_loop")
    if loop is not None and not _sync_cells:
        slot[0], slot[1] = loop.enter(), True
    _sync_cells.append(slot)
    try:
        result = eval(code_obj, _ns)
    finally:
        _sync_cells.pop()
        if slot[1]:
            sys.modules["_wasmeval_loop"].leave(slot[0])
    if not _sync_cells and slot[1]:
        sys.modules["_wasmeval_loop"].turn()
    return result


def _asyncio_imported():
    """Starts the session's loop; inside a plain cell, as its running loop."""
    import _wasmeval_loop

    if _sync_cells and not _sync_cells[0][1]:
        _sync_cells[0][0], _sync_cells[0][1] = _wasmeval_loop.enter(), True


class _AsyncioWatch:
    """A sys.meta_path finder that calls _asyncio_imported once asyncio's
    package has run, then leaves."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "asyncio":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _WatchLoader(spec.loader)
        return spec


class _WatchLoader:
    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self._loader
        if _AsyncioWatch in sys.meta_path:
            sys.meta_path.remove(_AsyncioWatch)
        try:
            _asyncio_imported()
        except Exception:  # a shadowing asyncio.py: no session loop
            pass


if "asyncio" in sys.modules:
    import _wasmeval_loop  # noqa: F401
else:
    sys.meta_path.insert(0, _AsyncioWatch)


# ---- IPython, for code written for the seed's IPython kernel ---------------

_IPYTHON = {"IPython": "fill_ipython", "IPython.display": "fill_display",
            "IPython.core": None, "IPython.core.display": "fill_display"}


class _IPythonFallback:
    """A sys.meta_path finder, last, that makes IPython, IPython.display and
    IPython.core.display (see _wasmeval_ipython) when nothing else on the
    path provides them."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in _IPYTHON:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, cls, is_package=name in ("IPython", "IPython.core"))

    @staticmethod
    def create_module(spec):
        return None

    @staticmethod
    def exec_module(module):
        fill = _IPYTHON[module.__name__]
        if fill is not None:
            import _wasmeval_ipython

            getattr(_wasmeval_ipython, fill)(module.__dict__)
        if module.__name__ == "IPython":
            import importlib

            module.display = builtins.display
            # `import IPython; IPython.display.Markdown` works, as in IPython.
            module.__dict__["display"] = importlib.import_module("IPython.display")
            module.__dict__["get_ipython"] = lambda: None


sys.meta_path.append(_IPythonFallback)


def _strip_frames(tb):
    """Drop the frames of ours (and asyncio's) from the head of a traceback,
    so it starts at the cell's code."""
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell-"):
        tb = tb.tb_next
    return tb


_OURS = "/usr/local/lib/wasmeval/"


def _drop_our_frames(te, seen, names):
    """Remove the prelude's frames (input(), display(), ...) from a
    TracebackException and the exceptions chained to it, and rename its
    frames named names[0] to names[1] (a cell run from the compile cache
    under the name of the cell that compiled it: see run_cell)."""
    import traceback

    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if not f.filename.startswith(_OURS)])
    if names[0] != names[1]:
        for f in te.stack:
            if f.filename == names[0]:
                f.filename = names[1]  # its line was read under the old name
    _drop_our_frames(te.__cause__, seen, names)
    _drop_our_frames(te.__context__, seen, names)
    for sub in getattr(te, "exceptions", None) or ():
        _drop_our_frames(sub, seen, names)


def _report(exc, names):
    import traceback

    note = _wasmeval_recursion.trim_tracebacks(exc)
    te = traceback.TracebackException(type(exc), exc, _strip_frames(exc.__traceback__))
    _drop_our_frames(te, set(), names)
    text = "".join(te.format()) + note
    try:
        _stream("stderr", _stderr).write(text)
    except Exception:  # a stream of the cell's that fails
        _stderr.write(text)


def _leaves_nothing(co):
    """True when running code object co (a cell's body or last expression)
    and completing can leave nothing behind that shows the cell's lines
    later: it defines no function, class, lambda, comprehension or
    generator expression (a nested code object, which would carry the
    cell's filename into later tracebacks and inspect.getsource), and it
    handles no exception (no try, with or async for: an exception it
    caught and stored keeps a traceback through the cell's frame)."""
    if co is None:
        return True
    if co.co_exceptiontable:
        return False
    for c in co.co_consts:
        if type(c) is types.CodeType:
            return False
    return True


def run_cell(code):
    """Runs one cell in the session namespace. Returns 0 when it completed,
    1 when it raised (the traceback has gone to stderr).

    The cell's source goes into linecache under <cell-N>, for tracebacks
    and inspect.getsource, as IPython keeps its cells. A cell that completed
    and left nothing behind that could show its lines (_leaves_nothing)
    drops its entry again: otherwise every trivial cell grows the heap by
    its source (five blocks), and with checkpoints on a growing heap makes
    the guest write protected pages (write faults, page-table walks) more
    and more often. Left out: a frame the cell stored itself
    (sys._getframe(), inspect.currentframe()), whose lines look-ups then
    find no source, as for code run by exec().

    A short cell that leaves nothing behind and comes again with the same
    text runs the code compiled for it before (_cache), named after the
    cell that compiled it, with its lines under that name while it runs:
    renaming the code to each new cell would make two code objects a
    cell. Its traceback, if it raises, names the cell itself; what looks
    at its frame while it runs (a warning it issues, a stack it prints)
    sees the earlier cell's name, whose text is the same."""
    global _cell_count, _running
    _cell_count += 1
    number = _cell_count  # nested cells count on while this one waits
    # A stream an earlier cell set to None (or deleted) would leave this
    # one without output, and the prelude without a stream to report on.
    if getattr(sys, "stdout", None) is None:
        sys.stdout = _stdout
    if getattr(sys, "stderr", None) is None:
        sys.stderr = _stderr
    helpers = _wasmeval_helpers
    # A cell run while another waits in a host call (a nested eval) keeps
    # the waiting cell's pending calls for it.
    outer = helpers.cell_state() if _running else None
    _running += 1
    # Calls only when there is work: what a cell calls writes pages (see
    # _exec), and most cells make no host calls and find no new folder.
    if helpers._stash or helpers._orphans or helpers._replay is not None:
        helpers.new_cell()
    if _finders or len(sys.path_importer_cache) != _finders_seen:
        _fresh_imports()
    hit = _cache.get(code)
    if hit is not None and hit[2]:
        filename = None  # made if the cell raises
        entry = hit[3]
    else:
        filename = f"<cell-{number}>"
        entry = (len(code), None, code.splitlines(True), filename)
    name = entry[3]  # the name its code has
    cache = linecache.cache
    added = name not in cache
    cache[name] = entry
    forget = False  # drop the linecache entry when the cell has completed
    try:
        if filename is None:
            body, last = hit[0], hit[1]
            forget = True
        else:
            body, last, forget = _compiled(code, filename, entry[2], hit)
        if body is not None:
            _exec(body)
        if last is not None:
            value = _exec(last)
            if value is not None:
                builtins._ = value
                _wasmeval.emit(RESULT, _dumps(_bundle(value, json_for_plain=False)))
        return 0
    except BaseException as e:  # noqa: B036 - a cell may raise anything
        # The cell keeps its lines, under its own name.
        forget = filename is None
        if filename is None:
            filename = f"<cell-{number}>"
            cache[filename] = (entry[0], None, entry[2], filename)
        if isinstance(e, SyntaxError) and (e.text or "").lstrip()[:1] in ("%", "!"):
            e.add_note("IPython magics (%time, %%bash, ...) and shell commands (!ls) are not available: "
                       "this is plain Python with no shell; time with time.perf_counter(), and run commands "
                       "with tool.<name>() if the session has a tool for it")
        try:
            _report(e, (name, filename))
        except BaseException as e2:
            _stderr.write(f"wasmeval: could not format {type(e).__name__}: {e2!r}\n")
        return 1
    finally:
        if getattr(sys, "stdout", None) is not _stdout:  # flushing ours does nothing
            try:
                _stream("stdout", _stdout).flush()
            except Exception:  # a stream of the cell's whose flush fails
                pass
        _running -= 1
        if outer is not None:
            helpers.set_cell_state(outer)
        if forget and added:
            cache.pop(name, None)


# ---- imports from the session root -----------------------------------------

_root = None  # the session root, sys.path[0]


def _set_root(root):
    """Puts the session root first on sys.path (where `python` run in that
    folder has it), replacing the previous session's after a fork."""
    global _root, _finders_seen
    if _root is not None and _root in sys.path:
        sys.path.remove(_root)
        sys.path_importer_cache.pop(_root, None)
        _finders_seen = -1
    _root = root
    sys.path.insert(0, root)


_finders = []  # the FileFinders in sys.path_importer_cache
_finders_seen = -1  # the cache's size when _finders was made


def _fresh_imports():
    """Makes files written since the last cell importable: the path
    finders cache folder listings, refreshed only when a folder's mtime
    changes, which a write within the same clock tick does not show.
    (importlib.invalidate_caches() does this and more, at ~20 us a cell.)"""
    global _finders, _finders_seen
    cache = sys.path_importer_cache
    if len(cache) != _finders_seen:
        _finders = [f for f in cache.values() if type(f) is _FileFinder]
        _finders_seen = len(cache)
    for finder in _finders:
        finder._path_mtime = -1


from importlib.machinery import FileFinder as _FileFinder  # noqa: E402


# ---- control ----------------------------------------------------------------

def control(message):
    """Host → guest requests outside cells, as JSON: session setup."""
    req = json.loads(message)
    op = req.get("op")
    if op == "setup":
        os.environ.clear()
        os.environ.update(req.get("env") or {})
        os.chdir(req["cwd"])
        _set_root(req["cwd"])
        _wasmeval_recursion.configure(req.get("memory_limit") or 0)
        # The snapshot froze the state of any seeded generator; reseed from
        # the session's random source.
        r = sys.modules.get("random")
        if r is not None:
            r.seed()
        return 0
    if op == "packages":  # once, in the template: runtimes/python/packages.go
        import _wasmeval_packages
        return _wasmeval_packages.install(req)
    raise ValueError(f"unknown control op {op!r}")


# ---- helpers ----------------------------------------------------------------
import _wasmeval_helpers  # noqa: E402

_wasmeval_helpers.install()

import _wasmeval_recursion  # noqa: E402

_wasmeval_recursion.install()
