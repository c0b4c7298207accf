"""Nested evals in a Jupyter kernel (runtimes/jupyter/nested.go).

While a cell waits in a helper's host call (agent(), tool()), the host may
have code to run inside it: a sub-agent's eval of the same session. The
kernel is busy with the waiting cell, so the code cannot come as an
execute_request; it comes as the answer to the cell's own wait for its
calls, [-3, code], over the stdin channel the helpers already use. This
file wraps the helpers' call_wait so that it runs such code in the user's
namespace (so what it defines is there when agent() returns), with its
last expression's value as the result, and hands the host its output
(stdout, stderr, displays, the result) as one answer, {"op":
"nested_done"}, before it waits again. The output is gathered rather
than published, so that none of it can reach the host after that answer
on the kernel's other channel.
"""
import ast
import builtins
import io
import json
import sys
import traceback

NESTED = -3
MAX_OUTPUT = 4 << 20
FILENAME = "<nested>"


def _run(ip, code):
    events = []
    state = {"size": 0, "cut": False}

    def add(kind, payload):
        n = len(payload) if isinstance(payload, str) else len(json.dumps(payload, default=str))
        if state["size"] + n > MAX_OUTPUT:
            if not state["cut"]:
                state["cut"] = True
                events.append(["stderr", "[the nested cell's output past %d bytes was cut]\n" % MAX_OUTPUT])
            return
        state["size"] += n
        if events and kind in ("stdout", "stderr") and events[-1][0] == kind:
            events[-1][1] += payload
        else:
            events.append([kind, payload])

    class Out(io.TextIOBase):
        def __init__(self, kind):
            self.kind = kind

        def writable(self):
            return True

        def write(self, s):
            s = str(s)
            add(self.kind, s)
            return len(s)

    def publish(data, metadata=None, *args, **kwargs):
        add("display", data)

    pub = ip.display_pub
    publish_before = pub.__dict__.get("publish")
    out_before, err_before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Out("stdout"), Out("stderr")
    pub.publish = publish
    ok = True
    try:
        tree = ast.parse(code, FILENAME, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        ns = ip.user_ns
        exec(compile(tree, FILENAME, "exec"), ns)
        if last is not None:
            value = eval(compile(last, FILENAME, "eval"), ns)
            if value is not None:
                data, _ = ip.display_formatter.format(value)
                add("result", data)
    except BaseException:
        ok = False
        etype, value, tb = sys.exc_info()
        # Leave this file's frame out, as a cell's traceback starts at
        # the cell.
        traceback.print_exception(etype, value, tb.tb_next if tb is not None else None)
    finally:
        sys.stdout, sys.stderr = out_before, err_before
        if publish_before is None:
            del pub.publish
        else:
            pub.publish = publish_before
    return {"ok": ok, "events": events}


def install():
    ip = get_ipython()  # noqa: F821 - IPython's builtin
    jupyter = sys.modules["_wasmeval_jupyter"]
    shim = sys.modules["_wasmeval"]
    wait_before = shim.call_wait

    def call_wait():
        while True:
            cid, resp = json.loads(jupyter._ask({"op": "wait"}))
            if cid != NESTED:
                return cid, resp
            result = _run(ip, resp)
            jupyter._ask({"op": "nested_done", "result": json.dumps(result, ensure_ascii=False, default=str)})

    call_wait.__doc__ = wait_before.__doc__
    shim.call_wait = call_wait


install()
