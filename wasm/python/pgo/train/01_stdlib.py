# PGO training cell (pgo/train.go): everyday stdlib work.
import json, re, collections, itertools, functools, dataclasses, datetime, decimal, fractions
import statistics, textwrap, random, math, csv, io, base64, hashlib, struct, pathlib, os
import sqlite3, zlib, difflib, pprint, enum, typing, string, heapq, bisect, operator, copy, pickle
import xml.etree.ElementTree as ET
random.seed(1)
data = [{"id": i, "name": f"item{i}", "tags": ["a", "b", str(i % 7)], "price": i * 1.25,
         "ok": i % 3 == 0, "nested": {"x": i, "y": [i, i + 1]}} for i in range(20000)]
for _ in range(3):
    s = json.dumps(data)
    back = json.loads(s)
    s2 = json.dumps(data, indent=2, sort_keys=True)
back.sort(key=lambda d: (d["price"] % 17, d["name"]))
text = "\n".join(f"{d['name']}: {d['price']:.2f} {','.join(d['tags'])}" for d in data)
words = re.findall(r"\w+", text)
cnt = collections.Counter(words)
cnt.most_common(20)
pat = re.compile(r"item(\d+): (\d+)\.(\d+) ([a-z,0-9]+)")
tot = 0
for m in pat.finditer(text):
    tot += int(m.group(1)) + len(m.group(4))
re.sub(r"(\d+)", lambda m: str(int(m.group(1)) * 2), text[:200000])
re.split(r"[,:\s]+", text[:100000])
for line in text.splitlines()[:20000]:
    a, _, b = line.partition(":")
    b.strip().split(" ")
    line.upper().lower().replace("item", "it").startswith("it")
    line.encode("utf-8").decode("utf-8")
"".join(reversed(text[:100000]))
" ".join(w.capitalize() for w in words[:50000])
d = {}
for i in range(200000):
    d[str(i)] = i
    d.get(str(i + 1), 0)
del_keys = [k for k in d if int(k) % 2]
for k in del_keys:
    del d[k]
sets = [set(range(i, i + 100)) for i in range(0, 2000, 10)]
u = set().union(*sets)
inter = functools.reduce(lambda a, b: a & b, sets[:3])
lst = [random.random() for _ in range(200000)]
lst.sort()
sorted(lst, reverse=True)
sum(x * x for x in lst)
[x for x in lst if x > 0.5]
list(map(str, range(100000)))
tuple(zip(range(100000), range(100000)))
list(itertools.chain.from_iterable([[i, i] for i in range(50000)]))
list(itertools.islice(itertools.cycle("abc"), 10000))
list(itertools.product(range(30), repeat=3))
list(itertools.permutations(range(7)))
dict(itertools.groupby(sorted(words[:20000])))
heapq.nsmallest(10, lst)
@dataclasses.dataclass
class P:
    x: int
    y: float = 0.0
    def norm(self):
        return math.hypot(self.x, self.y)
ps = [P(i, i / 2) for i in range(50000)]
sum(p.norm() for p in ps)
sorted(ps, key=operator.attrgetter("y"))
class Node:
    __slots__ = ("v", "next")
    def __init__(self, v, nxt=None):
        self.v = v; self.next = nxt
head = None
for i in range(100000):
    head = Node(i, head)
n = 0
while head:
    n += head.v; head = head.next
class Base:
    def m(self, x): return x + 1
    @property
    def p(self): return 3
class Der(Base):
    def m(self, x): return super().m(x) * 2
o = Der()
sum(o.m(i) + o.p for i in range(100000))
def gen(n):
    for i in range(n):
        yield i * 2
sum(gen(200000))
def exc(i):
    try:
        if i % 3 == 0:
            raise ValueError(i)
        return i
    except ValueError as e:
        return -1
    finally:
        pass
sum(exc(i) for i in range(100000))
try:
    {}["x"]
except KeyError:
    pass
dt = datetime.datetime(2024, 1, 1)
[(dt + datetime.timedelta(days=i)).isoformat() for i in range(10000)]
[datetime.datetime.strptime("2024-03-04 05:06:07", "%Y-%m-%d %H:%M:%S") for _ in range(2000)]
decimal.getcontext().prec = 50
sum(decimal.Decimal(i) / 7 for i in range(10000))
sum(fractions.Fraction(1, i) for i in range(1, 500))
statistics.mean(lst); statistics.stdev(lst[:10000]); statistics.median(lst)
textwrap.fill(text[:50000], 60)
buf = io.StringIO()
w = csv.writer(buf)
for d0 in data[:10000]:
    w.writerow([d0["id"], d0["name"], d0["price"]])
list(csv.reader(io.StringIO(buf.getvalue())))
base64.b64encode(s.encode()[:1000000])
hashlib.sha256(s.encode()).hexdigest(); hashlib.md5(s.encode()).hexdigest()
struct.pack("<" + "i" * 1000, *range(1000))
zlib.decompress(zlib.compress(s.encode()[:2000000]))
pickle.loads(pickle.dumps(data[:5000]))
copy.deepcopy(data[:2000])
pathlib.Path("t.txt").write_text(text[:100000])
pathlib.Path("t.txt").read_text().count("item")
with open("t.txt") as fh:
    for line in fh:
        pass
os.listdir("."); os.remove("t.txt")
con = sqlite3.connect(":memory:")
con.execute("create table t (a integer, b text)")
con.executemany("insert into t values (?, ?)", [(i, str(i)) for i in range(20000)])
con.execute("select count(*), sum(a) from t where b like '1%'").fetchall()
root = ET.fromstring("<r>" + "".join(f"<i n='{i}'>{i}</i>" for i in range(5000)) + "</r>")
sum(int(e.get("n")) for e in root.iter("i"))
ET.tostring(root)
list(difflib.unified_diff(text[:5000].splitlines(), text[100:5100].splitlines()))
pprint.pformat(data[:500])
class Color(enum.Enum):
    RED = 1; GREEN = 2
[Color(1) for _ in range(10000)]
string.Template("$a $b").substitute(a=1, b=2)
"{} {:>10} {:.3f} {!r}".format(1, "x", 3.14159, "y")
"%s %d %5.2f" % ("a", 3, 2.5)
x = 12345678901234567890 ** 5
str(x); int(str(x)); x // 12345; x % 997; hex(x)
[math.sqrt(i) + math.sin(i) for i in range(100000)]
complex(1, 2) ** 3
bytearray(b"abc" * 10000).replace(b"b", b"x")
memoryview(b"abcdef" * 1000)[10:20].tobytes()
print("stdlib done")
