// guards.js: goja has no memory limit, and its built-ins allocate in native
// code that an interrupt cannot stop. These wrappers refuse, before any
// allocation, the calls that would build one huge string, array or buffer,
// with the RangeError V8 throws for them. Growth by many small steps is the
// host's heap watchdog's job.
(function (host, internal) {
  'use strict';

  const maxStringLength = host.maxStringLength; // characters
  const maxBytes = host.memoryLimitBytes;
  const maxElements = Math.floor(maxBytes / 16);
  const apply = Reflect.apply;

  function method(proto, name, check) {
    const original = proto[name];
    const wrapped = {
      [name](...args) {
        check(this, args);
        return apply(original, this, args);
      },
    }[name];
    Object.defineProperty(wrapped, 'length', { value: original.length });
    Object.defineProperty(proto, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  }

  const invalidString = () => new RangeError('Invalid string length');
  const invalidArray = () => new RangeError('Invalid array length');
  const allocFailed = () => new RangeError('Array buffer allocation failed');
  const len = (s) => (s === null || s === undefined ? 0 : String(s).length);
  const toLength = (n) => {
    n = Math.trunc(Number(n));
    return Number.isFinite(n) && n > 0 ? n : 0;
  };

  method(String.prototype, 'repeat', (self, [count]) => {
    const n = Math.trunc(Number(count));
    if (n > 0 && len(self) * n > maxStringLength) throw invalidString();
  });
  for (const name of ['padStart', 'padEnd']) {
    method(String.prototype, name, (self, [target]) => {
      if (toLength(target) > maxStringLength) throw invalidString();
    });
  }
  method(Array.prototype, 'join', (self, [sep]) => {
    const n = toLength(self && self.length);
    const sepLen = sep === undefined ? 1 : len(sep);
    if (n > 1 && (n - 1) * sepLen > maxStringLength) throw invalidString();
    if (n > maxElements) throw invalidString();
  });
  method(Array.prototype, 'fill', (self, [, start, end]) => {
    const n = toLength(self && self.length);
    let s = start === undefined ? 0 : Math.trunc(Number(start)) || 0;
    let e = end === undefined ? n : Math.trunc(Number(end)) || 0;
    if (s < 0) s = Math.max(n + s, 0);
    if (e < 0) e = Math.max(n + e, 0);
    if (Math.min(e, n) - Math.min(s, n) > maxElements) throw invalidArray();
  });
  const arrayFrom = Array.from;
  Object.defineProperty(Array, 'from', {
    value: function from(items, ...rest) {
      if (items !== null && items !== undefined && typeof items[Symbol.iterator] !== 'function' &&
          toLength(items.length) > maxElements) {
        throw invalidArray();
      }
      return apply(arrayFrom, this, [items, ...rest]);
    },
    writable: true, configurable: true, enumerable: false,
  });

  // Buffers: the byte length is known before the allocation.
  function guardConstructor(name, bytesOf) {
    const target = globalThis[name];
    const proxy = new Proxy(target, {
      construct(t, args, newTarget) {
        if (bytesOf(args) > maxBytes) throw allocFailed();
        return Reflect.construct(t, args, newTarget === proxy ? t : newTarget);
      },
    });
    Object.defineProperty(target.prototype, 'constructor', {
      value: proxy, writable: true, configurable: true, enumerable: false,
    });
    Object.defineProperty(globalThis, name, { value: proxy, writable: true, configurable: true, enumerable: false });
  }
  guardConstructor('ArrayBuffer', ([n]) => toLength(n));
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    if (typeof globalThis[name] !== 'function') continue;
    const size = globalThis[name].BYTES_PER_ELEMENT;
    guardConstructor(name, ([n]) => {
      if (typeof n === 'number') return toLength(n) * size;
      if (n !== null && typeof n === 'object' && typeof n[Symbol.iterator] !== 'function' &&
          !(n instanceof ArrayBuffer)) {
        return toLength(n.length) * size;
      }
      return 0;
    });
  }
})
