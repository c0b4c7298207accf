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

  // Array.prototype.join (and so toString) and toLocaleString recurse into
  // nested arrays in native code, where an overflow unwinds in time
  // quadratic in the depth. Their wrappers count their nesting and stop it
  // early, long before Go's stack could overflow.
  const maxNativeDepth = 1000;
  let nativeDepth = 0;
  internal.resetGuards = () => {
    nativeDepth = 0; // an interrupt skips the finally blocks below
  };
  function nested(proto, name, check) {
    const original = proto[name];
    const wrapped = {
      [name](...args) {
        check(this, args);
        if (nativeDepth >= maxNativeDepth) throw new RangeError('Maximum call stack size exceeded');
        nativeDepth++;
        try {
          return apply(original, this, args);
        } finally {
          nativeDepth--;
        }
      },
    }[name];
    Object.defineProperty(wrapped, 'length', { value: original.length });
    Object.defineProperty(proto, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  }

  method(String.prototype, 'repeat', (self, [count]) => {
    const n = Math.trunc(Number(count));
    if (n > 0 && len(self) * n > maxStringLength) throw invalidString();
  });
  for (const name of ['padStart', 'padEnd']) {
    method(String.prototype, name, (self, [target]) => {
      if (toLength(target) > maxStringLength) throw invalidString();
    });
  }
  nested(Array.prototype, 'join', (self, [sep]) => {
    const n = toLength(self && self.length);
    const sepLen = sep === undefined ? 1 : len(sep);
    if (n > 1 && (n - 1) * sepLen > maxStringLength) throw invalidString();
    if (n > maxElements) throw invalidString();
  });
  nested(Array.prototype, 'toLocaleString', () => {});
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

  // JSON.stringify recurses in native code, in time quadratic in the depth
  // (its cycle check) that no interrupt can stop, and without limit: a
  // linked list of a million nodes would hang the session for an hour and
  // then overflow Go's stack. A depth-first walk of at most walkBudget
  // values, which finds a deep path first, refuses such values up front.
  const maxJSONDepth = 2000;
  const walkBudget = 10000;
  const nativeStringify = JSON.stringify;
  function checkDepth(value) {
    const seen = new Set();
    const stack = [value, 1];
    while (stack.length > 0 && seen.size < walkBudget) {
      const depth = stack.pop();
      const v = stack.pop();
      if (seen.has(v)) continue; // shared, or a cycle that stringify reports
      seen.add(v);
      if (depth > maxJSONDepth) throw new RangeError('Maximum call stack size exceeded');
      if (Array.isArray(v)) {
        for (let i = Math.min(v.length, walkBudget) - 1; i >= 0; i--) {
          const e = v[i];
          if (e !== null && typeof e === 'object') stack.push(e, depth + 1);
        }
      } else {
        for (const k in v) {
          if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
          const e = v[k];
          if (e !== null && typeof e === 'object') stack.push(e, depth + 1);
          if (stack.length > 2 * walkBudget) break;
        }
      }
    }
  }
  Object.defineProperty(JSON, 'stringify', {
    value: function stringify(value, replacer, space) {
      if (value !== null && typeof value === 'object') checkDepth(value);
      return apply(nativeStringify, JSON, [value, replacer, space]);
    },
    writable: true, configurable: true, enumerable: false,
  });

  // Buffers: the byte length is known before the allocation. The
  // constructors are replaced by functions (goja's instanceof rejects a
  // Proxy of a function) that share the originals' prototypes, so that
  // instanceof, subclasses, species and the static methods keep working.
  function guardConstructor(name, bytesOf) {
    const target = globalThis[name];
    const wrapper = {
      [name]: function (...args) {
        if (new.target === undefined) throw new TypeError(`Constructor ${name} requires 'new'`);
        if (bytesOf(args) > maxBytes) throw allocFailed();
        return Reflect.construct(target, args, new.target === wrapper ? target : new.target);
      },
    }[name];
    Object.setPrototypeOf(wrapper, Object.getPrototypeOf(target));
    for (const key of Reflect.ownKeys(target)) {
      if (key === 'prototype' || key === 'name' || key === 'length') {
        Object.defineProperty(wrapper, key, { value: target[key], writable: false, enumerable: false, configurable: key !== 'prototype' });
      } else {
        Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(target, key));
      }
    }
    Object.defineProperty(target.prototype, 'constructor', {
      value: wrapper, writable: true, configurable: true, enumerable: false,
    });
    Object.defineProperty(globalThis, name, { value: wrapper, writable: true, configurable: true, enumerable: false });
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
