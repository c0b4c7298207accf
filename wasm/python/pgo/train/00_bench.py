# PGO training cell (pgo/train.go): the benchmarks' cells, fib(27) and the 3M loop, and the loop in a function.
def fib(n):
    return n if n < 2 else fib(n-1) + fib(n-2)
for _ in range(3):
    fib(27)
s = 0
for i in range(3_000_000):
    s += i
def f():
    s = 0
    for i in range(3_000_000):
        s += i
    for x in [0] * 1_000_000:
        s += x
    return s
f()
print('bench done', s)
