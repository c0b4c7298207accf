# Module-level names: what names-wasmeval.patch does in LOAD_NAME and
# STORE_NAME (a first-probe hit read or replaced in place) and FOR_ITER's
# prediction of STORE_NAME. TestNamesMatchNative runs this file as module
# code in the guest and in native python3.11 and compares what it prints:
# nothing here may depend on addresses, hash order or the platform.
import gc, sys, traceback

def P(*a):
    print(*a)

# The benchmark's loop, and unpacking (FOR_ITER predicts UNPACK_SEQUENCE).
s = 0
for i in range(3000):
    s += i
P('loop', s, i)
t = []
for a, b in [(1, 2), (3, 4)]:
    t.append(a * b)
P('unpack', t, a, b)

# Functions read the module's names through LOAD_GLOBAL (specialised on the
# dict's keys) while module code rebinds them.
def get_counter():
    return counter
counter = -1
seen = []
for i in range(100):
    counter = i
    seen.append(get_counter() == i)
P('rebind seen by functions', all(seen), counter, get_counter())

# globals() and locals() are the namespace itself; views see stores.
g = globals()
keys, values = g.keys(), g.values()
P('views', locals() is g, g['s'], 'late' in keys)
late = 1
for i in range(3):
    late = late * 10
P('views after', 'late' in keys, g['late'], 1000 in values)
g['late'] = 'set through the dict'
P('store through dict', late)

# The same object stored again: no reference leaked or lost.
o = object()
x = o
r0 = sys.getrefcount(o)
for i in range(1000):
    x = o
    y = x
P('same object', sys.getrefcount(o) - r0)
del y

# del, then the name again (the slot is a dummy, the key found elsewhere).
dd = 1
del dd
try:
    dd
except NameError as e:
    P('after del', e)
dd = 2
P('rebound', dd)
for i in range(50):
    zz = i
    del zz
    zz = -i
P('del in a loop', zz, 'zz' in g)
try:
    del never_bound
except NameError as e:
    P('del unbound', e)

# Names stored while the dict resizes under them.
grow = 0
for i in range(2000):
    grow += i
    g['k%d' % i] = i
    if i % 500 == 0:
        P('growing', grow, g['k%d' % i], len([k for k in g if k.startswith('k')]))
P('grown', grow, k1999)
for i in range(2000):
    del g['k%d' % i]
P('shrunk', 'k0' in g, grow)

# A key equal to the name but not the same object (built at run time, not
# interned): found by equality, kept as the key.
g[''.join(['q', 'q'])] = 1
qq += 1
for i in range(3):
    qq += 1
P('equal key', qq, [k for k in g if k == 'qq'][0] == 'qq')

# A str subclass as a key makes the table general.
class S(str):
    pass
g[S('sub')] = 5
sub += 1
for i in range(3):
    sub = sub * 2
P('str subclass key', sub, [type(k).__name__ for k in g if k == 'sub'])
del g['sub']

class Eq(str):
    def __hash__(self):
        return hash(str(self))
    def __eq__(self, other):
        return str(self) == str(other)
ns = {Eq('w'): 1}
exec('w = w + 1\nfor i in range(3): w += 1', ns)
P('str subclass with __eq__', ns['w'], [type(k).__name__ for k in ns if k == 'w'])

# Namespaces that are not dicts, or not exact dicts.
class Logged(dict):
    def __init__(self, *a):
        super().__init__(*a)
        self.log = []
    def __getitem__(self, k):
        self.log.append(('get', k))
        return super().__getitem__(k)
    def __setitem__(self, k, v):
        self.log.append(('set', k))
        super().__setitem__(k, v)
loc = Logged({'n': 0})
exec('for i in range(3):\n    n += i\nm = n', {}, loc)
P('dict subclass locals', dict(loc), loc.log)

class Mapping:
    def __init__(self):
        self.d = {}
        self.log = []
    def __getitem__(self, k):
        self.log.append(('get', k))
        return self.d[k]
    def __setitem__(self, k, v):
        self.log.append(('set', k))
        self.d[k] = v
    def __delitem__(self, k):
        self.log.append(('del', k))
        del self.d[k]
mp = Mapping()
exec('a = 1\nfor i in range(2):\n    a += i\ndel a\ntry:\n    a\nexcept NameError as e:\n    err = str(e)\nb = len', {}, mp)
P('mapping locals', sorted(k for k in mp.d if k != 'b'), mp.d['err'], mp.d['b'] is len, mp.log)

gsub = Logged({'v': 1})
exec('for i in range(2):\n    v = v + 1', gsub)
P('dict subclass globals', gsub['v'], [e for e in gsub.log if e[1] in ('v', 'i')])

# Locals apart from globals: a miss in locals goes on to globals, then
# builtins.
gl = {'from_globals': 'G'}
lo = {}
exec('a = from_globals\nb = len("abc")\nfrom_globals = "L"\nc = from_globals', gl, lo)
P('locals then globals', sorted(lo.items()), gl['from_globals'])

# An untracked namespace is tracked once it holds a container, as natively.
lo = {'a': 1}
P('tracked before', gc.is_tracked(lo))
exec('a = 2', {}, lo)
P('tracked after int', gc.is_tracked(lo))
exec('a = []', {}, lo)
P('tracked after list', gc.is_tracked(lo), lo)

# Builtins: the namespace's __builtins__, a dict or not.
exec('r = len([1, 2])', {'__builtins__': {'len': lambda x: 42}}, lo)
P('custom builtins dict', lo['r'])
try:
    exec('print(1)', {'__builtins__': {'len': len}})
except NameError as e:
    P('missing builtin', e)
class B:
    def __getitem__(self, k):
        if k == 'len':
            return lambda x: -1
        raise KeyError(k)
try:
    exec('r = len("x")\nr2 = nothere', {'__builtins__': B()}, lo)
except NameError as e:
    P('mapping builtins', lo['r'], e)

# Builtins named by module-level code (its locals are its globals): found
# past the namespace, shadowed by a global and unshadowed, added to and
# removed from builtins, shadowed by a key equal but not identical.
import builtins
kinds = []
for i in range(6):
    if i == 2:
        len = lambda x: 'shadowed'
    if i == 4:
        del len
    kinds.append(len('ab'))
P('builtin shadowed', kinds)
builtins.wasmeval_extra = 'extra'
seen = [wasmeval_extra for i in range(3)]
del builtins.wasmeval_extra
try:
    for i in range(3):
        wasmeval_extra
except NameError as e:
    P('builtin removed', seen, e)
g[''.join(['a', 'b', 's'])] = lambda x: 'equal key'
P('builtin shadowed by an equal key', abs(-1))
del g['abs']
P('builtin again', abs(-1))
own = {'__builtins__': {'len': lambda x: 42}}
exec('r = len([1, 2])', own)
try:
    exec('for i in range(2):\n    print', own)
except NameError as e:
    P('own builtins dict', own['r'], e)

# NameError messages, with the suggestion the traceback adds.
apple = 1
try:
    appel
except NameError as e:
    import io
    err, sys.stderr = sys.stderr, io.StringIO()
    try:
        sys.excepthook(type(e), e, e.__traceback__)
    finally:
        err, sys.stderr = sys.stderr, err
    P('suggestion', err.getvalue().splitlines()[-1])
try:
    exec('for i in range(2):\n    undefined_x += 1', {})
except NameError as e:
    P('augmented unbound', e)

# Class bodies: LOAD_NAME/STORE_NAME on the class namespace, and one from
# __prepare__.
class K:
    a = 1
    for i in range(3):
        a += i
    b = a * 2
    c = len
P('class body', K.a, K.b, K.c is len, K.i)
class Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return Logged()
class L(metaclass=Meta):
    a = 1
    a += 1
P('prepared class', L.a)

# A finaliser that rebinds the name being stored (it runs after the store).
class Fin:
    def __init__(self, name):
        self.name = name
    def __del__(self):
        globals()[self.name] = 'rebound by __del__'
fin = Fin('fin')
fin = 'stored'
P('finaliser', fin)
fins = [Fin('other')]
other = 'x'
for i in range(2):
    other = fins.pop() if fins else 'y'
P('finaliser other', other)

# Values replaced in small namespaces, where a name is found at its first
# probe whatever the hash secret: each old value is released once, when it
# is replaced.
class Rel:
    def __init__(self, name, log):
        self.name, self.log = name, log
    def __del__(self):
        self.log.append(self.name)
rel_src = ('log.append("start")\nx = Rel("x0", log)\nx = Rel("x1", log)\nlog.append("x bound twice")\n'
           'for i in range(3):\n    y = Rel("y%d" % i, log)\nlog.append("loop done")\n'
           'o = object()\nz = o\nr0 = sys.getrefcount(o)\nz = 2\nr1 = sys.getrefcount(o)\n')
for n in range(8):
    log = []
    small = {'Rel': Rel, 'sys': sys, 'log': log}
    for j in range(n):
        small['pad%d' % j] = j
    exec(rel_src, small)
    P('released', n, log, small['r0'] - small['r1'])

# Many names: 2- and 4-byte index tables.
for n in (300, 50000):
    big = {}
    exec(';'.join('v%d = %d' % (i, i) for i in range(n)), big)
    code = 'acc = 0\nfor i in range(3):\n    acc += v0 + v%d\n    v%d = acc\nlast = v%d' % (n - 1, n - 1, n - 1)
    exec(code, big)
    P('many names', n, big['acc'], big['last'], len(big))

# sys.settrace: line events of a module-level for loop, tracing on from the
# start and switched on in the middle of the loop.
events = []
def tracer(frame, event, arg):
    if frame.f_code.co_filename == '<traced>':
        events.append((event, frame.f_lineno))
    return tracer
src = 'tot = 0\nfor j in range(3):\n    tot += j\n    k = tot\nend = tot\n'
sys.settrace(tracer)
exec(compile(src, '<traced>', 'exec'), {})
sys.settrace(None)
P('settrace', events)
events.clear()
src2 = ('import sys\ntot = 0\nfor j in range(6):\n    if j == 2:\n'
        '        sys.settrace(tr); sys._getframe().f_trace = tr\n'
        '    if j == 4:\n        sys.settrace(None); sys._getframe().f_trace = None\n'
        '    tot += j\nend = tot\n')
exec(compile(src2, '<traced>', 'exec'), {'tr': tracer})
sys.settrace(None)
P('settrace midway', events)
P('done')
