// guards.js: goja has no memory limit, and its built-ins allocate in native
// code that an interrupt cannot stop. These wrappers refuse, before any
// allocation, the calls that would build one huge string, array or buffer,
// with the RangeError V8 throws for them, and ask the host to reserve the
// bytes of a big result (host.reserve throws when the session would pass
// its memory limit; runtimes/js/memory.go). Growth by many small steps is
// the host's memory monitor's job.
(function (host, internal) {
  'use strict';
  // The built-ins the guards call while cells run, taken before any cell
  // runs: a cell may replace globalThis.BigInt, Math.min, Array.isArray or
  // WeakMap.prototype.get, and a guard that called the replacement would let
  // through what it exists to stop (issue 9: `BigInt = () => 0n` let
  // 3n ** (2n ** 22n) past the size limit, Math.trunc a 2 GiB ArrayBuffer
  // past a 128 MiB cap, WeakMap.prototype.get a prototype chain past its
  // depth limit, and a replaced Reflect.construct was handed the native
  // constructors).
  const BigInt = globalThis.BigInt, Number = globalThis.Number, String = globalThis.String;
  const Symbol = globalThis.Symbol, ArrayBuffer = globalThis.ArrayBuffer;
  const Math = Object.freeze(Object.create(null, Object.getOwnPropertyDescriptors(globalThis.Math)));
  const isArray = Array.isArray, numberIsFinite = Number.isFinite, construct = Reflect.construct;
  const reflectDefine = Reflect.defineProperty;
  // The rest come from the prelude's primordials (inspect.js): the error
  // constructors the guards throw with, a Set of the guards' own, and
  // the statics they call while cells run. No check destructures its
  // arguments or spreads a list: both call the array iterator, which a
  // cell can replace.
  const P = internal.primordials;
  const RangeError = P.RangeError, TypeError = P.TypeError, URIError = P.URIError;
  const Set = P.SafeSet;
  const objectKeys = P.ObjectKeys, objectIs = P.ObjectIs;
  const isInstance = P.isInstance;
  // uncurry(f)(self, ...args) is f.call(self, ...args), all native (a bound
  // call): no frame of JavaScript, no list.
  const uncurry = (f) => Function.prototype.call.bind(f);
  const weakMapGet = uncurry(WeakMap.prototype.get), weakMapSet = uncurry(WeakMap.prototype.set);
  const setHas = uncurry(Set.prototype.has), setAdd = uncurry(Set.prototype.add);
  const hasOwn = uncurry(Object.prototype.hasOwnProperty), arrayPush = uncurry(Array.prototype.push);
  // append adds v at the end of a list of the guards' own, without [[Set]]
  // (which a setter a cell put on Array.prototype would see).
  const append = (list, v) => { reflectDefine(list, list.length, { value: v, writable: true, enumerable: true, configurable: true }); };
  const pop = (list) => { const v = list[list.length - 1]; list.length--; return v; };

  const maxStringLength = host.maxStringLength; // characters
  const maxBytes = host.memoryLimitBytes;
  const maxElements = Math.floor(maxBytes / 16);
  const apply = Reflect.apply;
  const nativeStringConcat = String.prototype.concat; // before its wrapper below
  const nativeString = String;

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
    return numberIsFinite(n) && n > 0 ? n : 0;
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
  // afterCell runs after each cell. goja keeps the last primitive string a
  // property was read from in an object of its own (its stringSingleton):
  // a huge string the cell dropped would stay alive until the next read.
  internal.afterCell = () => ''.length;
  // releaseGlobals lets go of global bindings of a cell that left its
  // session over its memory limit; it runs none of the guest's code.
  internal.releaseGlobals = (names) => {
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const d = P.ReflectGetOwnPropertyDescriptor(globalThis, name);
      if (d === undefined) continue;
      if (d.configurable) delete globalThis[name];
      else if ('value' in d && d.writable) globalThis[name] = undefined;
    }
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

  const reserve = host.reserve;
  const stringBytes = host.stringBytes; // 1 per character if all ASCII, else 2
  const bytesPerChar = (s) => (stringBytes(s) > s.length ? 2 : 1);
  // Reservations below this many bytes are not worth a call to the host.
  const reserveFrom = 1 << 20;
  const want = (bytes) => {
    if (bytes >= reserveFrom) reserve(bytes);
  };
  // The bytes goja needs per array element (a slot), and per element
  // holding a new string (the slot and the string's header).
  const slotBytes = 16;
  const stringElementBytes = 48;

  method(String.prototype, 'repeat', (self, args) => {
    const n = Math.trunc(Number(args[0]));
    if (n > 0) {
      const s = String(self);
      if (s.length * n > maxStringLength) throw invalidString();
      want(stringBytes(s) * n);
    }
  });
  for (const name of ['padStart', 'padEnd']) {
    method(String.prototype, name, (self, args) => {
      const fill = args[1];
      const n = toLength(args[0]);
      if (n > maxStringLength) throw invalidString();
      if (n >= reserveFrom) {
        const wide = bytesPerChar(String(self)) === 2 || (fill !== undefined && bytesPerChar(String(fill)) === 2);
        want(n * (wide ? 2 : 1));
      }
    });
  }
  nested(Array.prototype, 'join', (self, args) => {
    const sep = args[0];
    const n = toLength(self && self.length);
    const sepLen = sep === undefined ? 1 : len(sep);
    if (n > 1 && (n - 1) * sepLen > maxStringLength) throw invalidString();
    if (n > maxElements) throw invalidString();
    if (n > 1000) want(host.joinBytes(self, sep === undefined ? sep : String(sep)));
  });
  method(String.prototype, 'split', (self, args) => {
    const sep = args[0], limit = args[1];
    if (typeof sep !== 'string') return; // a RegExp splits in its own method
    const s = String(self);
    if (s.length * stringElementBytes < reserveFrom) return;
    let n = host.countOf(s, sep) + 1;
    if (limit !== undefined) n = Math.min(n, limit >>> 0);
    want(n * stringElementBytes);
  });
  for (const name of ['replace', 'replaceAll']) {
    method(String.prototype, name, (self, args) => {
      const pattern = args[0], replacement = args[1];
      if (typeof pattern !== 'string' || typeof replacement !== 'string') return;
      const s = String(self);
      if (s.length < 4096) return;
      // $& and friends put up to the whole text in: count them at most.
      const dollars = host.countOf(replacement, '$');
      const grow = replacement.length + dollars * Math.max(pattern.length, s.length) - pattern.length;
      if (grow <= 0) return;
      const n = name === 'replace' ? 1 : host.countOf(s, pattern);
      const chars = s.length + n * grow;
      if (chars > maxStringLength) throw invalidString();
      want(chars * Math.max(bytesPerChar(s), bytesPerChar(replacement)));
    });
  }
  // Spreading a string, or Array.from of it, makes one string per
  // character.
  const stringIterator = String.prototype[Symbol.iterator];
  Object.defineProperty(String.prototype, Symbol.iterator, {
    value: {
      [Symbol.iterator]() {
        const s = String(this);
        want(s.length * stringElementBytes);
        return apply(stringIterator, s, []);
      },
    }[Symbol.iterator],
    writable: true, configurable: true, enumerable: false,
  });
  // So do Object.keys and its kin of a string: one key per character.
  for (const name of ['keys', 'values', 'entries', 'getOwnPropertyNames']) {
    const original = Object[name];
    Object.defineProperty(Object, name, {
      value: {
        [name](o) {
          if (typeof o === 'string' || isInstance(o, String)) want(String(o).length * 64);
          return original(o);
        },
      }[name],
      writable: true, configurable: true, enumerable: false,
    });
  }
  // Escaping and normalizing can make many characters of one.
  for (const name of ['encodeURIComponent', 'encodeURI', 'escape']) {
    const original = globalThis[name];
    if (typeof original !== 'function') continue;
    Object.defineProperty(globalThis, name, {
      value: {
        [name](s) {
          const t = String(s);
          if (t.length * 9 > maxStringLength) throw new URIError('URI malformed: the result would be too long');
          want(t.length * 9);
          return original(t);
        },
      }[name],
      writable: true, configurable: true, enumerable: false,
    });
  }
  method(String.prototype, 'concat', (self, args) => {
    if (args.length === 0) return;
    let chars = len(self);
    let bytes = stringBytes(String(self));
    for (let i = 0; i < args.length; i++) { // not for...of: a cell may replace the list iterator
      const a = args[i];
      const t = String(a);
      chars += t.length;
      bytes += stringBytes(t);
    }
    if (chars > maxStringLength) throw invalidString();
    want(bytes);
  });
  // Collation keys are several bytes per character.
  method(String.prototype, 'localeCompare', (self, args) => {
    const s = String(self);
    if (s.length > 4096) want((stringBytes(s) + stringBytes(String(args[0]))) * 8);
  });
  method(String.prototype, 'normalize', (self) => {
    const s = String(self);
    if (s.length * 3 > maxStringLength) throw invalidString();
    want(stringBytes(s) * 3);
  });
  method(Array.prototype, 'concat', (self, args) => {
    let n = toLength(self && self.length);
    for (let i = 0; i < args.length; i++) { // not for...of: a cell may replace the list iterator
      const a = args[i];
      n += a !== null && typeof a === 'object' && (a[Symbol.isConcatSpreadable] ?? isArray(a)) ? toLength(a.length) : 1;
    }
    if (n > maxElements) throw invalidArray();
    want(n * slotBytes);
  });
  // Methods that loop over an array's length in native code: on a sparse
  // array or an array-like with a huge length they would run for hours
  // without a single interrupt check, or make an array of that length.
  for (const name of ['indexOf', 'lastIndexOf', 'includes', 'reverse', 'copyWithin', 'slice', 'splice',
    'flat', 'flatMap', 'forEach', 'map', 'filter', 'some', 'every', 'find', 'findIndex', 'findLast',
    'findLastIndex', 'reduce', 'reduceRight', 'shift', 'unshift', 'toReversed', 'toSpliced', 'with']) {
    if (typeof Array.prototype[name] !== 'function') continue;
    method(Array.prototype, name, (self) => {
      if (self !== null && self !== undefined && self.length > maxElements && toLength(self.length) > maxElements) {
        throw invalidArray();
      }
    });
  }
  // bind keeps its arguments in a Go closure, where a walk of the session
  // cannot see them (memory.go): keep them in sight.
  const nativeBind = Function.prototype.bind;
  const boundArguments = new WeakMap();
  Object.defineProperty(Function.prototype, 'bind', {
    value: {
      bind(...args) {
        const f = apply(nativeBind, this, args);
        if (args.length > 0) weakMapSet(boundArguments, f, args);
        return f;
      },
    }.bind,
    writable: true, configurable: true, enumerable: false,
  });
  nested(Array.prototype, 'toLocaleString', () => {});
  method(Array.prototype, 'fill', (self, args) => {
    const start = args[1], end = args[2];
    const n = toLength(self && self.length);
    let s = start === undefined ? 0 : Math.trunc(Number(start)) || 0;
    let e = end === undefined ? n : Math.trunc(Number(end)) || 0;
    if (s < 0) s = Math.max(n + s, 0);
    if (e < 0) e = Math.max(n + e, 0);
    const count = Math.min(e, n) - Math.min(s, n);
    if (count > maxElements) throw invalidArray();
    want(count * slotBytes);
  });
  const arrayFrom = Array.from;
  Object.defineProperty(Array, 'from', {
    value: function from(items) {
      if (items !== null && items !== undefined && typeof items[Symbol.iterator] !== 'function') {
        const n = toLength(items.length);
        if (n > maxElements) throw invalidArray();
        want(n * slotBytes);
      }
      return apply(arrayFrom, this, arguments);
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
    if (a === 0 && b === 0) return objectIs(a, -0) ? (objectIs(b, -0) ? 0 : -1) : (objectIs(b, -0) ? 1 : 0);
    return 0;
  };
  function sortWith(proto, name, order, limit) {
    const original = proto[name];
    const wrapped = {
      [name](compare) {
        // A sparse array or array-like is copied out at its full length
        // (a typed array's length is its memory's).
        if (proto === Array.prototype && this !== null && this !== undefined && this.length > maxElements &&
            toLength(this.length) > maxElements) {
          throw invalidArray();
        }
        if (compare === undefined && toLength(this && this.length) > limit) {
          return apply(original, this, [order]);
        }
        if (name === 'sort' && proto === Array.prototype && typeof compare === 'function' && isArray(this)) {
          // goja sorts an array in place, reading its elements as it goes:
          // a comparator that shrinks or thins the array made it index
          // past the end (a Go panic). The values are sorted as the
          // language says, in a list of their own, and written back.
          // The list is copied by index, not by the native slice, which
          // makes its copy through this.constructor[Symbol.species]: a
          // cell's constructor, handed the values, when the prelude sorts
          // a list of its own (issue 9). The holes sort last.
          const items = [];
          const n = this.length;
          for (let i = 0; i < n; i++) if (i in this) append(items, this[i]);
          apply(original, items, [compare]);
          for (let i = 0; i < items.length; i++) this[i] = items[i];
          for (let i = items.length; i < n; i++) delete this[i];
          return this;
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
    let seenCount = 0;
    const stack = [value, 1];
    while (stack.length > 0 && seenCount < walkBudget) {
      const depth = pop(stack);
      const v = pop(stack);
      if (setHas(seen, v)) continue; // shared, or a cycle that stringify reports
      setAdd(seen, v);
      seenCount++;
      if (depth > maxJSONDepth) throw new RangeError('Maximum call stack size exceeded');
      if (isArray(v)) {
        for (let i = Math.min(v.length, walkBudget) - 1; i >= 0; i--) {
          const e = v[i];
          if (e !== null && typeof e === 'object') { append(stack, e); append(stack, depth + 1); }
        }
      } else {
        for (const k in v) {
          if (!hasOwn(v, k)) continue;
          const e = v[k];
          if (e !== null && typeof e === 'object') { append(stack, e); append(stack, depth + 1); }
          if (stack.length > 2 * walkBudget) break;
        }
      }
    }
  }
  Object.defineProperty(JSON, 'stringify', {
    value: function stringify(value, replacer, space) {
      if (value !== null && typeof value === 'object') checkDepth(value);
      // A string may come out six times longer (\u0001).
      if (typeof value === 'string') want(stringBytes(value) * 6);
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
        const bytes = bytesOf(args);
        if (bytes > maxBytes) throw allocFailed();
        want(bytes);
        return construct(target, args, new.target === wrapper ? target : new.target);
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
  guardConstructor('ArrayBuffer', (args) => toLength(args[0]));
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    if (typeof globalThis[name] !== 'function') continue;
    const size = globalThis[name].BYTES_PER_ELEMENT;
    guardConstructor(name, (args) => {
      const n = args[0];
      if (typeof n === 'number') return toLength(n) * size;
      if (n !== null && typeof n === 'object' && typeof n[Symbol.iterator] !== 'function' &&
          !isInstance(n, ArrayBuffer)) {
        return toLength(n.length) * size;
      }
      return 0;
    });
  }

  // BigInt operators. The host rewrites *, **, << and >> (and their
  // assignments) in the guest's code into calls of these, unless an operand
  // is a number literal (runtimes/js/source.go): a BigInt result past
  // maxBigIntBits would be a native allocation of any size, which ends the
  // host process when it fails, and goja's conversion of a BigInt to
  // decimal text takes time quadratic in its size, in native code that no
  // interrupt stops (16 Mbit took 7 s). Each converts its operands once, in
  // order, as the operator does, and then applies it.
  const maxBigIntBits = BigInt(host.maxBigIntBits);
  const bigIntBits = host.bigIntBits; // the bit length of |x|
  const tooBig = () => new RangeError(
    `Maximum BigInt size exceeded: the result would have more than ${maxBigIntBits} bits, the sandbox's limit`);
  const numeric = (v) => -(-v); // ToNumeric, and nothing else
  const isObject = (v) => v !== null && (typeof v === 'object' || typeof v === 'function');
  // ToPrimitive(v, hint) of an object v, calling its code as the operators
  // do: Symbol.toPrimitive, else valueOf and toString.
  function toPrimitive(v, hint) {
    const exotic = v[Symbol.toPrimitive];
    if (exotic !== undefined && exotic !== null) {
      const r = apply(exotic, v, [hint]);
      if (!isObject(r)) return r;
    } else {
      const names = hint === 'string' ? ['toString', 'valueOf'] : ['valueOf', 'toString'];
      for (let i = 0; i < names.length; i++) {
        const f = v[names[i]];
        if (typeof f !== 'function') continue;
        const r = apply(f, v, []);
        if (!isObject(r)) return r;
      }
    }
    throw new TypeError('Cannot convert object to primitive value');
  }
  // add is `a + b` where neither is a literal (source.go): a long text is
  // reserved before goja copies it, so that `s = s + s` stops before the
  // copy that would pass the memory limit, not after it.
  const reserveChars = reserveFrom >> 1;
  function add(a, b) {
    const ta = typeof a;
    const tb = typeof b;
    if (ta === 'string' && tb === 'string') {
      if (a.length + b.length < reserveChars) return a + b;
    } else if (ta === 'number' && tb === 'number') {
      return a + b;
    }
    const x = isObject(a) ? toPrimitive(a, 'default') : a;
    const y = isObject(b) ? toPrimitive(b, 'default') : b;
    if (typeof x === 'string' && typeof y === 'string') {
      if (x.length + y.length >= reserveChars) {
        if (x.length + y.length > maxStringLength) throw invalidString();
        want(stringBytes(x) + stringBytes(y));
      }
    } else if (typeof x === 'string' || typeof y === 'string') {
      const t = typeof x === 'string' ? x : y;
      if (t.length >= reserveChars) want(stringBytes(t) + 64);
    }
    return x + y;
  }
  // template is `q0${a}q1${b}q2` with two or more substitutions
  // (runtimes/js/templates.go), given its parts in order: the literal
  // ones first, last and between the substitutions. A long result is
  // reserved before goja copies it, so that `${s}${s}` in a loop stops
  // before the copy that would pass the memory limit, not after it.
  function template(...parts) {
    let chars = 0;
    for (let i = 0; i < parts.length; i++) {
      // The substitutions become text as a template makes them. Not with
      // a template of one: goja copies the text it makes.
      if ((i & 1) === 1 && typeof parts[i] !== 'string') {
        if (typeof parts[i] === 'symbol') throw new TypeError('Cannot convert a Symbol value to a string');
        parts[i] = nativeString(parts[i]);
      }
      chars += parts[i].length;
    }
    if (chars >= reserveChars) {
      if (chars > maxStringLength) throw invalidString();
      let bytes = 0;
      for (let i = 0; i < parts.length; i++) bytes += stringBytes(parts[i]);
      want(bytes);
    }
    return apply(nativeStringConcat, '', parts);
  }
  // template2 and template3 are template's for two and three
  // substitutions, as most templates have: without a list or a loop, the
  // call costs a short template a third of what template's does.
  const toText = (v) => {
    if (typeof v === 'symbol') throw new TypeError('Cannot convert a Symbol value to a string');
    return nativeString(v);
  };
  function template2(q0, a, q1, b, q2) {
    const x = typeof a === 'string' ? a : toText(a);
    const y = typeof b === 'string' ? b : toText(b);
    if (x.length + y.length < reserveChars) return `${q0}${x}${q1}${y}${q2}`;
    return template(q0, x, q1, y, q2);
  }
  function template3(q0, a, q1, b, q2, c, q3) {
    const x = typeof a === 'string' ? a : toText(a);
    const y = typeof b === 'string' ? b : toText(b);
    const z = typeof c === 'string' ? c : toText(c);
    if (x.length + y.length + z.length < reserveChars) return `${q0}${x}${q1}${y}${q2}${z}${q3}`;
    return template(q0, x, q1, y, q2, z, q3);
  }
  Object.defineProperty(globalThis, '%wasmeval.tpl', { value: template });
  Object.defineProperty(globalThis, '%wasmeval.tpl2', { value: template2 });
  Object.defineProperty(globalThis, '%wasmeval.tpl3', { value: template3 });
  function mul(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a * b;
    const x = numeric(a);
    const y = numeric(b);
    if (typeof x === 'bigint' && typeof y === 'bigint' && bigIntBits(x) + bigIntBits(y) > host.maxBigIntBits + 1) {
      throw tooBig();
    }
    return x * y;
  }
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
  // compare is a comparison that may meet a BigInt and a text
  // (runtimes/js/compare.go): goja parses the text as a BigInt, in time
  // quadratic in its length. A long text is compared by the host, without
  // parsing it; anything else by the operator. The operands become
  // primitives first as the operator makes them.
  const longText = 4096;
  const compareBigIntText = host.compareBigIntText; // -1, 0, 1 or NaN
  function compare(op, a, b) {
    let x = a;
    let y = b;
    if (op === '==' || op === '!=') {
      // An object equals only itself, null and undefined nothing else,
      // without converting anything.
      if (isObject(x) && !isObject(y) && y !== null && y !== undefined) x = toPrimitive(x, 'default');
      else if (isObject(y) && !isObject(x) && x !== null && x !== undefined) y = toPrimitive(y, 'default');
    } else {
      if (isObject(x)) x = toPrimitive(x, 'number');
      if (isObject(y)) y = toPrimitive(y, 'number');
    }
    let c;
    if (typeof x === 'bigint' && typeof y === 'string' && y.length >= longText) c = compareBigIntText(x, y);
    else if (typeof y === 'bigint' && typeof x === 'string' && x.length >= longText) c = -compareBigIntText(y, x);
    if (c === undefined) {
      switch (op) {
        case '<': return x < y;
        case '>': return x > y;
        case '<=': return x <= y;
        case '>=': return x >= y;
        case '==': return x == y; // eslint-disable-line eqeqeq
        default: return x != y; // eslint-disable-line eqeqeq
      }
    }
    switch (op) {
      case '<': return c < 0;
      case '>': return c > 0;
      case '<=': return c <= 0;
      case '>=': return c >= 0;
      case '==': return c === 0;
      default: return c !== 0; // NaN: not equal
    }
  }
  Object.defineProperty(globalThis, '%wasmeval.cmp', { value: compare });
  const assignOps = {
    '%wasmeval.pow': pow, '%wasmeval.shl': shl, '%wasmeval.sar': sar, '%wasmeval.mul': mul, '%wasmeval.add': add,
  };
  // assign is `object[key] op= right`, with object and key evaluated once.
  function assign(object, key, op, right) {
    const k = typeof key === 'symbol' ? key : String(key);
    return (object[k] = assignOps[op](object[k], right));
  }
  // spread checks the value of `...x` (source.go): goja spreads an array
  // over all of its length in native code, a string or an object's own
  // properties into new values.
  function spread(x) {
    if (typeof x === 'string') {
      if (x.length > maxElements) throw invalidArray();
      want(x.length * stringElementBytes);
    } else if (x !== null && typeof x === 'object' && isArray(x)) {
      const n = toLength(x.length);
      if (n > maxElements) throw invalidArray();
      want(n * slotBytes);
    }
    return x;
  }
  internal.operators = {
    '%wasmeval.pow': pow, '%wasmeval.shl': shl, '%wasmeval.sar': sar, '%wasmeval.mul': mul,
    '%wasmeval.add': add, '%wasmeval.assign': assign, '%wasmeval.spread': spread,
  };

  // apply and construct with an array-like make a list of its length at
  // once, in native code: {length: 2 ** 32 - 1} asked Go for 64 GiB, and Go
  // ends the process when it cannot have it. V8 stops long before.
  const maxArguments = 1 << 20;
  const checkArguments = (args) => {
    if (args !== null && args !== undefined && (typeof args === 'object' || typeof args === 'function') &&
        toLength(args.length) > maxArguments) {
      throw new RangeError('Maximum call stack size exceeded: too many arguments');
    }
  };
  const nativeApply = Function.prototype.apply;
  Object.defineProperty(Function.prototype, 'apply', {
    value: {
      apply(thisArg, args) {
        checkArguments(args);
        return apply(nativeApply, this, [thisArg, args]);
      },
    }.apply,
    writable: true, configurable: true, enumerable: false,
  });
  const nativeConstruct = Reflect.construct;
  Object.defineProperty(Reflect, 'apply', {
    value: {
      apply(target, thisArg, args) {
        checkArguments(args);
        return apply(target, thisArg, args);
      },
    }.apply,
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(Reflect, 'construct', {
    value: {
      construct(target, args) {
        checkArguments(args);
        return apply(nativeConstruct, undefined, arguments);
      },
    }.construct,
    writable: true, configurable: true, enumerable: false,
  });
  // Object.assign copies a string source one property per character.
  const nativeAssign = Object.assign;
  Object.defineProperty(Object, 'assign', {
    value: {
      assign(target, ...sources) {
        for (let i = 0; i < sources.length; i++) {
          const s = sources[i];
          if (typeof s === 'string' || isInstance(s, String)) want(String(s).length * 64);
        }
        return apply(nativeAssign, undefined, arguments);
      },
    }.assign,
    writable: true, configurable: true, enumerable: false,
  });

  // BigInt.asIntN and asUintN compute 2 ** bits first; BigInt(text)
  // parses in time quadratic in the length of the text.
  const maxBigIntDigits = 100000;
  const { asIntN, asUintN } = BigInt;
  Object.defineProperty(BigInt, 'asIntN', {
    value: function asIntN_(bits, bigint) {
      const n = Number(bits);
      // A text is parsed by the guarded BigInt (a long one would take
      // goja seconds).
      const x = typeof bigint === 'bigint' ? bigint : bigIntWrapper(bigint);
      if (n > host.maxBigIntBits) {
        if (bigIntBits(x) < n) return x;
        throw tooBig();
      }
      return apply(asIntN, nativeBigInt, [bits, x]);
    },
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(BigInt, 'asUintN', {
    value: function asUintN_(bits, bigint) {
      const n = Number(bits);
      const x = typeof bigint === 'bigint' ? bigint : bigIntWrapper(bigint);
      if (n > host.maxBigIntBits) {
        if (x >= 0n && bigIntBits(x) <= n) return x;
        throw tooBig();
      }
      return apply(asUintN, nativeBigInt, [bits, x]);
    },
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(BigInt.asIntN, 'name', { value: 'asIntN' });
  Object.defineProperty(BigInt.asUintN, 'name', { value: 'asUintN' });
  const nativeBigInt = BigInt;
  // ToPrimitive(v, number), as BigInt(v) does first: an object's valueOf
  // may return a long text.
  const toPrimitiveNumber = (v) => toPrimitive(v, 'number');
  const bigIntWrapper = {
    BigInt(value) {
      if (new.target !== undefined) throw new TypeError('BigInt is not a constructor');
      if (isObject(value)) value = toPrimitiveNumber(value);
      if (typeof value === 'string' && value.length > maxBigIntDigits) {
        throw new RangeError(`BigInt: the text has ${value.length} characters, more than the ${maxBigIntDigits} the sandbox parses`);
      }
      return nativeBigInt(value);
    },
  }.BigInt;
  // Text in a radix that is not a power of two takes time quadratic in the
  // size of the BigInt: refuse it past maxBigIntBits (a BigInt can grow a
  // little past it by additions), where it would take a second or more.
  const maxTextBits = host.maxBigIntBits;
  const powerOfTwo = (r) => r === 2 || r === 4 || r === 8 || r === 16 || r === 32;
  for (const name of ['toString', 'toLocaleString']) {
    const original = nativeBigInt.prototype[name];
    Object.defineProperty(nativeBigInt.prototype, name, {
      value: {
        [name](...args) {
          if (typeof this === 'bigint' || (isObject(this) && isInstance(this, nativeBigInt))) {
            const radix = name === 'toString' && args[0] !== undefined ? Math.trunc(Number(args[0])) : 10;
            if (!powerOfTwo(radix)) {
              const bits = bigIntBits(typeof this === 'bigint' ? this : apply(nativeBigInt.prototype.valueOf, this, []));
              if (bits > maxTextBits) {
                throw new RangeError(`BigInt: a ${bits}-bit BigInt is too large to turn into text in radix ${radix}` +
                  ` (the sandbox converts at most ${maxTextBits} bits; radix 16 has no limit)`);
              }
            }
          }
          return apply(original, this, args);
        },
      }[name],
      writable: true, configurable: true, enumerable: false,
    });
    Object.defineProperty(nativeBigInt.prototype[name], 'length', { value: original.length });
  }
  for (const key of Reflect.ownKeys(nativeBigInt)) {
    if (key !== 'name' && key !== 'length') {
      Object.defineProperty(bigIntWrapper, key, Object.getOwnPropertyDescriptor(nativeBigInt, key));
    }
  }
  Object.defineProperty(nativeBigInt.prototype, 'constructor', {
    value: bigIntWrapper, writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(globalThis, 'BigInt', { value: bigIntWrapper, writable: true, configurable: true, enumerable: false });

  // Proxy and prototype chains. goja follows a Proxy to its target, and a
  // property lookup up the prototype chain, by recursing in Go, where no
  // interrupt lands: one lookup through a million nested Proxies ran for
  // 5 s, and deep enough, Go's stack overflows, which ends the process. A
  // Proxy may wrap (as target or handler) at most maxChainDepth levels,
  // and an object may get a prototype whose chain is that long at most
  // (Object.create, Object.setPrototypeOf, Reflect.setPrototypeOf,
  // __proto__). V8 stops such a lookup with a stack overflow.
  const maxChainDepth = 10000;
  const NativeProxy = Proxy;
  // A Proxy's depth: 1 and the deeper of its target's and its handler's
  // (fixed: a Proxy's target and handler never change).
  const proxyDepths = new WeakMap();
  const getPrototypeOf = Reflect.getPrototypeOf;
  // An ordinary object's depth, as chainDepth last found it, with the
  // generation it holds for: generation grows whenever an object that a
  // known depth counted gets another prototype.
  const chainDepths = new WeakMap();
  const generationUnit = 2 ** 24; // above any depth counted
  let generation = 0;
  // chainDepth is an upper bound of how deep goja recurses from x: the
  // objects on its prototype chain, and each Proxy with its depth; it
  // stops counting past maxChainDepth.
  function chainDepth(x) {
    const path = [];
    let n = 0;
    for (let p = x; isObject(p); p = getPrototypeOf(p)) {
      const pd = weakMapGet(proxyDepths, p);
      if (pd !== undefined) {
        n += pd;
        break;
      }
      const known = weakMapGet(chainDepths, p);
      if (known !== undefined && Math.floor(known / generationUnit) === generation) {
        n += known % generationUnit;
        break;
      }
      arrayPush(path, p); // a push a setter swallows costs the cache, not the count
      n++;
      if (path.length > maxChainDepth) break;
    }
    for (let i = 0; i < path.length; i++) weakMapSet(chainDepths, path[i], generation * generationUnit + Math.min(n - i, generationUnit - 1));
    return n;
  }
  // reparented is called before o gets another prototype.
  const reparented = (o) => {
    const known = isObject(o) ? weakMapGet(chainDepths, o) : undefined;
    if (known !== undefined && Math.floor(known / generationUnit) === generation) generation++;
  };
  const tooDeep = (what) => new RangeError(`Maximum call stack size exceeded: ${what} would nest more than ${maxChainDepth} deep`);
  function proxyDepth(target, handler) {
    const d = 1 + Math.max(chainDepth(target), chainDepth(handler));
    if (d > maxChainDepth) throw tooDeep('the Proxy');
    return d;
  }
  const ProxyWrapper = {
    Proxy: function (target, handler) {
      if (new.target === undefined) throw new TypeError("Constructor Proxy requires 'new'");
      const d = proxyDepth(target, handler);
      const p = new NativeProxy(target, handler);
      weakMapSet(proxyDepths, p, d);
      return p;
    },
  }.Proxy;
  Object.defineProperty(ProxyWrapper, 'prototype', { value: undefined });
  Object.defineProperty(ProxyWrapper, 'length', { value: 2 });
  Object.defineProperty(ProxyWrapper, 'revocable', {
    value: {
      revocable(target, handler) {
        const d = proxyDepth(target, handler);
        const r = NativeProxy.revocable(target, handler);
        weakMapSet(proxyDepths, r.proxy, d);
        return r;
      },
    }.revocable,
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(globalThis, 'Proxy', { value: ProxyWrapper, writable: true, configurable: true, enumerable: false });
  // checkPrototype is called with the prototype an object is about to get.
  const checkPrototype = (proto) => {
    if (isObject(proto) && chainDepth(proto) >= maxChainDepth) throw tooDeep('the prototype chain');
  };
  const checkReparent = (o, proto) => {
    checkPrototype(proto);
    reparented(o);
  };
  // proto and protoClass check what code gives objects as prototypes
  // natively: an object literal's __proto__, `F.prototype = x` (then
  // `new F`), a class's superclass (source.go).
  const proto = (v) => {
    checkPrototype(v);
    return v;
  };
  const protoClass = (c) => {
    if (typeof c === 'function') {
      checkPrototype(c);
      checkPrototype(c.prototype);
    }
    return c;
  };
  internal.operators['%wasmeval.proto'] = proto;
  internal.operators['%wasmeval.protoClass'] = protoClass;
  const { create, setPrototypeOf } = Object;
  Object.defineProperty(Object, 'create', {
    value: { create(proto, props) { checkPrototype(proto); return props === undefined ? create(proto) : create(proto, props); } }.create,
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(Object, 'setPrototypeOf', {
    value: { setPrototypeOf(o, proto) { checkReparent(o, proto); return setPrototypeOf(o, proto); } }.setPrototypeOf,
    writable: true, configurable: true, enumerable: false,
  });
  const reflectSetPrototypeOf = Reflect.setPrototypeOf;
  Object.defineProperty(Reflect, 'setPrototypeOf', {
    value: { setPrototypeOf(o, proto) { checkReparent(o, proto); return reflectSetPrototypeOf(o, proto); } }.setPrototypeOf,
    writable: true, configurable: true, enumerable: false,
  });
  const protoAccessor = Reflect.getOwnPropertyDescriptor(Object.prototype, '__proto__');
  if (protoAccessor && typeof protoAccessor.set === 'function') {
    const setProto = protoAccessor.set;
    Object.defineProperty(Object.prototype, '__proto__', {
      get: protoAccessor.get,
      // An accessor named __proto__ (only `__proto__: v` sets a prototype).
      set: Reflect.getOwnPropertyDescriptor({
        set __proto__(proto) {
          checkReparent(this, proto);
          apply(setProto, this, [proto]);
        },
      }, '__proto__').set,
      enumerable: false, configurable: true,
    });
  }

  // Code made at run time is guarded as the cells are (source.go): the
  // Function constructors and eval parse it in the host. eval is always
  // an indirect eval: it runs in the global scope, never in the caller's.
  function replaceFunctionConstructor(proto, kind) {
    const original = proto.constructor;
    const wrapper = {
      [kind]: function (...args) {
        const body = args.length > 0 ? String(args[args.length - 1]) : '';
        let params = '';
        for (let i = 0; i < args.length - 1; i++) params += (i === 0 ? '' : ',') + String(args[i]);
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

  // The prelude's primordials take the guarded methods in place of the
  // native ones they wrap, and are final from here on.
  internal.refreshPrimordials();
})
