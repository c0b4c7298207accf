# PGO training cell (pgo/train.go): the compiler, logging, argparse, text and codecs, decorators; reads ROOT/test.
import sys, types, inspect, traceback, ast, dis, textwrap, importlib, typing, abc, contextlib, functools, weakref, gc, tokenize, io, unicodedata, codecs, locale, shlex, fnmatch, glob, tempfile, shutil, uuid, secrets, urllib.parse, html, email, email.message, http, ipaddress, calendar, zoneinfo, array, queue, sched, argparse, logging, warnings
src = open("test/test_bisect.py").read() + open("test/test_json/test_decode.py").read()
tree = ast.parse(src)
compile(tree, "src", "exec")
for node in ast.walk(tree):
    pass
compile("\n".join(f"x{i} = {i} * 2 + len('{i}')" for i in range(5000)), "<gen>", "exec")
exec("def g(a, b=2, *c, **d):\n    return a + b\n" * 100)
list(tokenize.generate_tokens(io.StringIO(src).readline))
try:
    1 / 0
except ZeroDivisionError:
    traceback.format_exc()
logging.basicConfig(stream=io.StringIO(), level=logging.INFO)
log = logging.getLogger("x")
for i in range(2000):
    log.info("msg %s", i)
p = argparse.ArgumentParser(); p.add_argument("--n", type=int); p.add_argument("rest", nargs="*")
for _ in range(200):
    p.parse_args(["--n", "3", "a", "b"])
[urllib.parse.urlparse(f"https://ex.com/a/{i}?q={i}#f") for i in range(5000)]
urllib.parse.quote("a b&c/é" * 100)
html.escape("<a href='x'>&</a>" * 1000)
[unicodedata.name(chr(c), "") for c in range(0x20, 0x3000)]
[unicodedata.normalize("NFKD", "éàü" * 10) for _ in range(1000)]
codecs.encode("hello" * 1000, "rot13")
"héllo wörld".encode("latin-1").decode("latin-1")
"日本語テキスト".encode("utf-16").decode("utf-16")
"日本語".encode("shift_jis")
[ipaddress.ip_address(f"10.0.{i // 256}.{i % 256}") for i in range(5000)]
calendar.month(2024, 2)
zoneinfo.ZoneInfo("Europe/Paris")
uuid.uuid4(); secrets.token_hex(16)
a = array.array("d", range(100000)); sum(a)
q = queue.Queue()
for i in range(10000): q.put(i)
while not q.empty(): q.get()
@functools.lru_cache(maxsize=None)
def c(n): return n if n < 2 else c(n - 1) + c(n - 2)
[c(k) for k in range(0, 301, 20)]
@contextlib.contextmanager
def cm():
    yield 1
for _ in range(10000):
    with cm() as v: pass
class W: pass
refs = [weakref.ref(W()) for _ in range(1000)]
gc.collect()
tmp = tempfile.mkdtemp(dir=".")
for i in range(200):
    with open(f"{tmp}/f{i}.txt", "w") as fh:
        fh.write("x" * i)
glob.glob(f"{tmp}/*.txt"); shutil.rmtree(tmp)
m = email.message.EmailMessage(); m["Subject"] = "hi"; m.set_content("body"); m.as_string()
shlex.split("a 'b c' \"d e\" f" * 100)
fnmatch.filter([f"f{i}.py" for i in range(5000)], "f1*.py")
import collections.abc
isinstance([], collections.abc.Sequence)
T = typing.TypeVar("T")
class G(typing.Generic[T]): pass
G[int]()
def deco(f):
    @functools.wraps(f)
    def w(*a, **k): return f(*a, **k)
    return w
@deco
def h(x, y=1, *, z=2): return x + y + z
sum(h(i, z=i) for i in range(100000))
lam = lambda *a, **k: len(a) + len(k)
sum(lam(1, 2, x=3) for _ in range(100000))
print(sys.version, "misc done")
