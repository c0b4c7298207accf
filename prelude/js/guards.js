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

  // sort without a comparator compares the elements' strings (numbers for
  // typed arrays) in native code, which no interrupt stops: a million
  // numbers took 8 s, ten million would take minutes. A long array is
  // sorted with the same order given as a JavaScript comparator instead,
  // which an interrupt does stop; the limits keep a native sort near 1 s.
  const nativeSortLimit = 100000;
  const nativeTypedSortLimit = 1000000;
  const stringOrder = (a, b) => {
    const x = `${a}`;
    const y = `${b}`;
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const numericOrder = (a, b) => {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a !== a) return b !== b ? 0 : 1; // NaN last
    if (b !== b) return -1;
    if (a === 0 && b === 0) return Object.is(a, -0) ? (Object.is(b, -0) ? 0 : -1) : (Object.is(b, -0) ? 1 : 0);
    return 0;
  };
  function sortWith(proto, name, order, limit) {
    const original = proto[name];
    const wrapped = {
      [name](compare) {
        if (compare === undefined && toLength(this && this.length) > limit) {
          return apply(original, this, [order]);
        }
        return apply(original, this, arguments);
      },
    }[name];
    Object.defineProperty(wrapped, 'length', { value: original.length });
    Object.defineProperty(proto, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  }
  sortWith(Array.prototype, 'sort', stringOrder, nativeSortLimit);
  if (typeof Array.prototype.toSorted === 'function') sortWith(Array.prototype, 'toSorted', stringOrder, nativeSortLimit);
  const typedArrayProto = Object.getPrototypeOf(Int8Array.prototype);
  sortWith(typedArrayProto, 'sort', numericOrder, nativeTypedSortLimit);
  if (typeof typedArrayProto.toSorted === 'function') {
    sortWith(typedArrayProto, 'toSorted', numericOrder, nativeTypedSortLimit);
  }

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

  // BigInt operators. The host rewrites **, << and >> (and their
  // assignments) in the guest's code into calls of these, unless an operand
  // is a number literal (runtimes/js/source.go): a BigInt result past
  // maxBigIntBits would be a native allocation of any size, which ends the
  // host process when it fails. Each converts its operands once, in order,
  // as the operator does, and then applies it.
  const maxBigIntBits = BigInt(host.maxBigIntBits);
  const bigIntBits = host.bigIntBits; // the bit length of |x|
  const tooBig = () => new RangeError('Maximum BigInt size exceeded');
  const numeric = (v) => -(-v); // ToNumeric, and nothing else
  function pow(a, b) {
    const x = numeric(a);
    const y = numeric(b);
    if (typeof x === 'bigint' && typeof y === 'bigint' && y > 1n) {
      const bits = BigInt(bigIntBits(x));
      if (bits > 1n && (y >= maxBigIntBits || (bits - 1n) * y >= maxBigIntBits)) throw tooBig();
    }
    return x ** y;
  }
  function shl(a, b) {
    const x = numeric(a);
    const y = numeric(b);
    if (typeof x === 'bigint' && typeof y === 'bigint' && y > 0n && x !== 0n &&
        BigInt(bigIntBits(x)) + y > maxBigIntBits) {
      throw tooBig();
    }
    return x << y;
  }
  function sar(a, b) {
    const x = numeric(a);
    const y = numeric(b);
    if (typeof x === 'bigint' && typeof y === 'bigint' && y < 0n && x !== 0n &&
        BigInt(bigIntBits(x)) - y > maxBigIntBits) {
      throw tooBig();
    }
    return x >> y;
  }
  const assignOps = { '%wasmeval.pow': pow, '%wasmeval.shl': shl, '%wasmeval.sar': sar };
  // assign is `object[key] op= right`, with object and key evaluated once.
  function assign(object, key, op, right) {
    const k = typeof key === 'symbol' ? key : String(key);
    return (object[k] = assignOps[op](object[k], right));
  }
  internal.operators = { '%wasmeval.pow': pow, '%wasmeval.shl': shl, '%wasmeval.sar': sar, '%wasmeval.assign': assign };

  // BigInt.asIntN and asUintN compute 2 ** bits first; BigInt(text)
  // parses in time quadratic in the length of the text.
  const maxBigIntDigits = 100000;
  const { asIntN, asUintN } = BigInt;
  Object.defineProperty(BigInt, 'asIntN', {
    value: function asIntN_(bits, bigint) {
      const n = Number(bits);
      if (n > host.maxBigIntBits) {
        const x = BigInt(bigint);
        if (bigIntBits(x) < n) return x;
        throw tooBig();
      }
      return apply(asIntN, BigInt, [bits, bigint]);
    },
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(BigInt, 'asUintN', {
    value: function asUintN_(bits, bigint) {
      const n = Number(bits);
      if (n > host.maxBigIntBits) {
        const x = BigInt(bigint);
        if (x >= 0n && bigIntBits(x) <= n) return x;
        throw tooBig();
      }
      return apply(asUintN, BigInt, [bits, bigint]);
    },
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(BigInt.asIntN, 'name', { value: 'asIntN' });
  Object.defineProperty(BigInt.asUintN, 'name', { value: 'asUintN' });
  const nativeBigInt = BigInt;
  const bigIntWrapper = {
    BigInt(value) {
      if (new.target !== undefined) throw new TypeError('BigInt is not a constructor');
      if (typeof value === 'string' && value.length > maxBigIntDigits) {
        throw new RangeError(`BigInt: the text has ${value.length} characters, more than the ${maxBigIntDigits} the sandbox parses`);
      }
      return nativeBigInt(value);
    },
  }.BigInt;
  for (const key of Reflect.ownKeys(nativeBigInt)) {
    if (key !== 'name' && key !== 'length') {
      Object.defineProperty(bigIntWrapper, key, Object.getOwnPropertyDescriptor(nativeBigInt, key));
    }
  }
  Object.defineProperty(nativeBigInt.prototype, 'constructor', {
    value: bigIntWrapper, writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(globalThis, 'BigInt', { value: bigIntWrapper, writable: true, configurable: true, enumerable: false });

  // Code made at run time is guarded as the cells are (source.go): the
  // Function constructors and eval parse it in the host. eval is always
  // an indirect eval: it runs in the global scope, never in the caller's.
  function replaceFunctionConstructor(proto, kind) {
    const original = proto.constructor;
    const wrapper = {
      [kind]: function (...args) {
        const body = args.length > 0 ? String(args[args.length - 1]) : '';
        const params = args.slice(0, -1).map(String).join(',');
        return host.compileFunction(kind, params, body);
      },
    }[kind];
    Object.setPrototypeOf(wrapper, Object.getPrototypeOf(original));
    Object.defineProperty(wrapper, 'prototype', { value: proto, writable: false, enumerable: false, configurable: false });
    Object.defineProperty(wrapper, 'length', { value: 1, writable: false, enumerable: false, configurable: true });
    Object.defineProperty(proto, 'constructor', { value: wrapper, writable: false, enumerable: false, configurable: true });
    return wrapper;
  }
  Object.defineProperty(globalThis, 'Function', {
    value: replaceFunctionConstructor(Function.prototype, 'Function'),
    writable: true, configurable: true, enumerable: false,
  });
  replaceFunctionConstructor(Object.getPrototypeOf(function* () {}), 'GeneratorFunction');
  replaceFunctionConstructor(Object.getPrototypeOf(async function () {}), 'AsyncFunction');
  const evalScript = host.evalScript;
  Object.defineProperty(globalThis, 'eval', {
    value: { eval(x) { return typeof x === 'string' ? evalScript(x) : x; } }.eval,
    writable: true, configurable: true, enumerable: false,
  });
})
