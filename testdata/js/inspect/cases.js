// One expression per line. inspect_test.go renders each as a cell result
// and compares with golden.txt, which `go test ./runtimes/js -run
// TestInspectGolden -update` regenerates with Node's util.inspect.
1
-0
10n
1.5
1e21
1e-7
0.1 + 0.2
NaN
'str'
"it's"
'a\'b"c'
'a\'b"c`d'
'a\nb'
'tab\there\u0001'
'x'.repeat(20) + '\n' + 'y'.repeat(80) + '\nz'
true
null
undefined
Symbol('q')
Symbol()
Symbol.iterator
[]
[1, 2, 3]
[1, , 3]
[, , 1, , , , ]
new Array(5)
Array.from({ length: 30 }, (_, i) => i * 7)
Array.from({ length: 120 }, (_, i) => i)
Array.from({ length: 8 }, (_, i) => 'item' + i)
Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i).repeat(i % 5 + 1))
Array.from({ length: 10 }, (_, i) => i % 2 ? 'odd' : i)
[1.5, -2.25, 1e21, 1e-7, 0.1 + 0.2, -0]
[null, undefined, true, false, NaN, Infinity, -Infinity]
({})
({ a: 1, b: 'two', c: [3], d: { e: { f: { g: 1 } } } })
({ 'a-b': 1, [Symbol('s')]: 2, get g() { return 1 }, set s(v) {}, get gs() { return 1 }, set gs(v) {} })
({ 'key with spaces': 1, valid_id: 2, $dollar: 3, '0': 4, 'it\'s': 5 })
Object.create(null)
Object.assign(Object.create(null), { a: 1 })
({ __proto__: { inherited: 1 }, own: 2 })
({ a: { b: { c: { d: {} } } } })
[[[[1]]]]
[{ a: 1, b: { c: [1, 2, { d: 3 }] } }]
({ long: 'x'.repeat(100) })
({ a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], b: 'x'.repeat(50), c: { d: 1, e: 2, f: 3 } })
({ one: 'aaaaaaaaaaaaaaaaaaaa', two: 'bbbbbbbbbbbbbbbbbbbbbbbbb', three: 'ccccccccccccccccccccccccc' })
Object.assign([1, 2], { extra: true })
new Array(3).fill({ x: 1 })
(() => { const o = { x: 1 }; o.self = o; return o })()
(() => { const a = [1]; a.push(a); return { a } })()
(() => { const a = { n: 'a' }, b = { n: 'b', a }; a.b = b; return [a, b] })()
new Map([['a', 1], [{ k: 1 }, [2]]])
new Set([1, 'x', { y: 2 }])
new Map()
new Set()
new WeakMap()
new WeakSet()
new Map([[new Map([[1, new Set([2])]]), 'nested']])
[function f() {}, class A {}, class B extends Array {}, async function g() {}, function* h() {}, () => 1]
Object.assign(function named() {}, { extra: 1 })
({ fn() {}, arrow: () => {}, async am() {} })
new Date(0)
new Date(NaN)
/ab+c/gi
[new Number(3), new String('ab'), new Boolean(false)]
Promise.resolve(4)
new Promise(() => {})
Promise.resolve({ nested: [1, 2] })
new Uint8Array([1, 2, 3])
new Float64Array(2)
new ArrayBuffer(4)
(() => { class Foo { constructor() { this.a = 1 } }; return new Foo() })()
(() => { class Foo {}; return new Foo() })()
(() => { class Foo { constructor() { this.inner = { deep: { deeper: { deepest: 1 } } } } }; return [new Foo()] })()
(() => { const e = new RangeError('bad'); e.stack = 'RangeError: bad'; return e })()
Object.assign(new Error('with props'), { code: 'E_X', stack: 'Error: with props\n    at somewhere (file.js:1:1)' })
(() => { const e = new Error('no stack'); e.stack = ''; return e })()
{ a: (() => { const e = new TypeError('inner'); e.stack = 'TypeError: inner\n    at x (y.js:1:2)'; return e })() }
['a', 'b'].entries().toString()
Object.assign(Object.create({ constructor: { name: 'Fake' } }), { v: 1 })
({ [Symbol.toStringTag]: 'Tagged', v: 1 })
