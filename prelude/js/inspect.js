// inspect.js: a port of the parts of Node's util.inspect and util.format
// that a REPL shows (objects, arrays, Maps, Sets, errors, quoted strings,
// circular references, depth and line breaking), so that values print the
// way Node prints them. Stacks are cleaned of goja's program counters and of
// the prelude's own frames.
(function (host, internal) {
  'use strict';

  // ---- primordials ----
  // The built-ins the whole prelude calls, taken here, before any cell runs,
  // as Node's primordials are. A cell may replace Array.prototype.join,
  // Object.keys, JSON.stringify, Map.prototype.get, the array iterator or a
  // global itself; a prelude that called the replacement would print wrong,
  // run the cell's code where it trusts its own (inside a guard, while the
  // host formats a result) or let it past a limit (issue 9).
  //
  // P.ObjectKeys(o) is the original Object.keys; methods are uncurried, so
  // P.ArrayPrototypeJoin(list, ', ') is list.join(', ') with the original
  // join, and getters are P.MapPrototypeGetSize(map). Symbols read
  // P.SymbolIterator. SafeMap, SafeSet, SafeWeakMap and SafeWeakSet keep
  // their own copies of the methods, so `new P.SafeMap()` reads naturally.
  // Files read P only by a name written out (P.ObjectKeys), never P[expr]
  // nor by destructuring: the names the files read are the names P holds.
  //
  // Files read P's properties when they call, not as they load: guards.js
  // puts its guarded versions of the methods it wraps in (so the prelude's
  // own joins and repeats stay within the session's memory limit), then
  // freezes P. for...of, spread and destructuring of an array call the
  // array iterator, which a cell can replace too: the prelude loops by index.
  const P = Object.create(null);
  internal.primordials = P;
  {
    const ReflectApply = Reflect.apply;
    const ownKeys = Reflect.ownKeys;
    const describe = Reflect.getOwnPropertyDescriptor;
    const call = Function.prototype.call;
    const bind = Function.prototype.bind;
    const uncurryThis = (f) => ReflectApply(bind, call, [f]);
    const bindTo = (f, self) => ReflectApply(bind, f, [self]);
    // P holds only the names the prelude's files read: the host reads them
    // from the sources once a process and writes the program that takes
    // them (runtimes/js/primordials.go), which runs before this file. A
    // name is the built-in's, as Node's are: statics bound to their holder
    // (or not, where the holder ignores this: Object, Math, JSON, ...),
    // methods uncurried, getters and setters as prefix + 'Get' + name.
    const take = internal.takePrimordials;
    delete internal.takePrimordials;
    take(P, uncurryThis, bindTo);
    P.uncurryThis = uncurryThis;
    // makeSafe gives a subclass of a collection its own copies of the
    // collection's methods, so replacing Map.prototype.get misses it.
    const makeSafe = (Base, Safe) => {
      const keys = ownKeys(Base.prototype);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key !== 'constructor') Reflect.defineProperty(Safe.prototype, key, describe(Base.prototype, key));
      }
      return Object.freeze(Safe);
    };
    P.SafeMap = makeSafe(Map, class SafeMap extends Map {});
    P.SafeSet = makeSafe(Set, class SafeSet extends Set {});
    P.SafeWeakMap = makeSafe(WeakMap, class SafeWeakMap extends WeakMap {});
    P.SafeWeakSet = makeSafe(WeakSet, class SafeWeakSet extends WeakSet {});
    // refreshPrimordials is for guards.js, once, after it has wrapped the
    // built-ins: it takes again only the names whose built-in changed, and
    // then P is final.
    internal.refreshPrimordials = () => {
      take(P, uncurryThis, bindTo);
      Object.freeze(P);
      delete internal.refreshPrimordials;
    };
  }
  // The helpers below are in P too, for every file: they do without the
  // array iterator and without a cell's RegExp.prototype.exec.
  // P.isInstance(v, C) is `v instanceof C` by the prototype chain, without
  // C[Symbol.hasInstance], which a cell can define on a built-in.
  P.isInstance = (v, C) => P.FunctionPrototypeSymbolHasInstance(C, v);
  // P.regExpReplace(s, re, f) is s.replace(re, f) for a global re, with
  // the original exec: f gets the match array.
  P.regExpReplace = (s, re, f) => {
    let out = '';
    let last = 0;
    re.lastIndex = 0;
    for (let m = P.RegExpPrototypeExec(re, s); m !== null; m = P.RegExpPrototypeExec(re, s)) {
      out += P.StringPrototypeSlice(s, last, m.index) + f(m);
      last = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
    return out + P.StringPrototypeSlice(s, last);
  };
  // P.arraySet(list, i, v) is list[i] = v and P.arrayPush(list, v) is
  // list.push(v), each as an own data property: [[Set]] (list[i] = v, the
  // native push, unshift, fill) of an index the list does not have yet
  // calls a setter a cell put on Array.prototype for that index, handing
  // the cell the prelude's value and leaving a hole. The prelude fills its
  // lists with these only. The descriptor is the prelude's own, reused.
  const element = Object.create(null);
  element.writable = true;
  element.enumerable = true;
  element.configurable = true;
  P.arraySet = (list, i, v) => {
    element.value = v;
    P.ReflectDefineProperty(list, i, element);
    element.value = undefined;
    return v;
  };
  P.arrayPush = (list, v) => {
    P.arraySet(list, list.length, v);
    return list.length;
  };
  // P.arrayAppend(list, ...values) is list.push(...values) without the
  // array iterator (rest parameters do not call it).
  P.arrayAppend = (list, ...values) => {
    for (let i = 0; i < values.length; i++) P.arrayPush(list, values[i]);
    return list.length;
  };
  // P.arrayUnshift(list, ...values) is list.unshift(...values).
  P.arrayUnshift = (list, ...values) => {
    const n = values.length;
    for (let i = list.length - 1; i >= 0; i--) P.arraySet(list, i + n, list[i]);
    for (let i = 0; i < n; i++) P.arraySet(list, i, values[i]);
    return list.length;
  };
  // P.arraySlice, P.arrayMap and P.arrayFilter are list.slice(start, end),
  // list.map(f) and list.filter(f) for the prelude's own lists, and
  // P.arraySplice(list, start, count) removes count items: the natives
  // make their result through list.constructor[Symbol.species], which a
  // cell can point at a constructor of its own (Array[Symbol.species], or
  // Array.prototype.constructor) to be handed the prelude's values.
  P.arraySlice = (list, start = 0, end = list.length) => {
    const n = list.length;
    const from = start < 0 ? P.MathMax(n + start, 0) : P.MathMin(start, n);
    const to = end < 0 ? P.MathMax(n + end, 0) : P.MathMin(end, n);
    const out = [];
    for (let i = from; i < to; i++) P.arrayPush(out, list[i]);
    return out;
  };
  P.arrayMap = (list, f) => {
    const out = [];
    for (let i = 0; i < list.length; i++) P.arrayPush(out, f(list[i], i));
    return out;
  };
  P.arrayFilter = (list, f) => {
    const out = [];
    for (let i = 0; i < list.length; i++) if (f(list[i], i)) P.arrayPush(out, list[i]);
    return out;
  };
  P.arraySplice = (list, start, count) => {
    const n = list.length;
    for (let i = start; i + count < n; i++) list[i] = list[i + count];
    list.length = P.MathMax(start, n - count);
  };
  // P.applyArgs(f, self, args) is f.apply(self, args).
  P.applyArgs = (f, self, args) => P.ReflectApply(f, self, args);
  // P.mapEntries(map) and P.setValues(set) list a collection's entries
  // ([key, value] arrays) and values, with the original iterators.
  P.mapEntries = (map, max = Infinity) => {
    const out = [];
    const it = P.MapPrototypeEntries(map);
    for (let r = P.MapIteratorPrototypeNext(it); !r.done && out.length < max; r = P.MapIteratorPrototypeNext(it)) {
      P.arrayPush(out, r.value);
    }
    return out;
  };
  P.setValues = (set, max = Infinity) => {
    const out = [];
    const it = P.SetPrototypeValues(set);
    for (let r = P.SetIteratorPrototypeNext(it); !r.done && out.length < max; r = P.SetIteratorPrototypeNext(it)) {
      P.arrayPush(out, r.value);
    }
    return out;
  };

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  const kMinLineWidth = 16;
  const customInspectSymbol = P.SymbolFor('nodejs.util.inspect.custom');
  const keyStrRegExp = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  const numberRegExp = /^(0|[1-9][0-9]*)$/;

  const defaultOptions = {
    showHidden: false,
    depth: 2,
    colors: false,
    customInspect: true,
    showProxy: false,
    maxArrayLength: 100,
    maxStringLength: 10000,
    breakLength: 80,
    compact: 3,
    sorted: false,
    getters: false,
    numericSeparator: false,
  };

  const hasOwn = (o, k) => P.ObjectPrototypeHasOwnProperty(o, k);
  const isEnumerable = (o, k) => P.ObjectPrototypePropertyIsEnumerable(o, k);
  const objectToString = (v) => P.ObjectPrototypeToString(v);

  // Brand checks that do not depend on V8 internals: each calls a method
  // that throws a TypeError on anything but its own kind of object.
  function brand(fn) {
    return (v) => {
      try {
        fn(v);
        return true;
      } catch (e) {
        return false;
      }
    };
  }
  const mapSize = P.MapPrototypeGetSize;
  const setSize = P.SetPrototypeGetSize;
  const isMap = brand((v) => mapSize(v));
  const isSet = brand((v) => setSize(v));
  const isWeakMap = brand((v) => P.WeakMapPrototypeHas(v, {}));
  const isWeakSet = brand((v) => P.WeakSetPrototypeHas(v, {}));
  const isDate = brand((v) => P.DatePrototypeGetTime(v));
  const RegExpPrototype = RegExp.prototype;
  const isRegExp = (v) => v !== RegExpPrototype && brand((x) => P.RegExpPrototypeGetSource(x))(v);
  // Not the byteLength getter: goja's error for a value that is no
  // ArrayBuffer turns the value into text, calling its toString.
  const isArrayBuffer = brand((v) => new P.DataView(v, 0, 0));
  const isDataView = brand((v) => P.DataViewPrototypeGetByteLength(v));
  const typedArrayTag = P.TypedArrayPrototypeGetSymbolToStringTag;
  const isTypedArray = (v) => typedArrayTag(v) !== undefined;
  // goja's error for a value that is no Number turns it into text (its
  // toString): only a value that says it is a Number is tried (a Number
  // given a Symbol.toStringTag of its own shows as an object).
  const isNumberObject = (v) => typeof v === 'object' && objectToString(v) === '[object Number]' &&
    brand((x) => P.NumberPrototypeValueOf(x))(v);
  const isStringObject = (v) => typeof v === 'object' && brand((x) => P.StringPrototypeValueOf(x))(v);
  const isBooleanObject = (v) => typeof v === 'object' && brand((x) => P.BooleanPrototypeValueOf(x))(v);
  const isBigIntObject = (v) => typeof v === 'object' && brand((x) => P.BigIntPrototypeValueOf(x))(v);
  const isSymbolObject = (v) => typeof v === 'object' && brand((x) => P.SymbolPrototypeValueOf(x))(v);
  const isBoxedPrimitive = (v) => isNumberObject(v) || isStringObject(v) || isBooleanObject(v) ||
    isBigIntObject(v) || isSymbolObject(v);
  const isError = (v) => P.isInstance(v, P.Error) || objectToString(v) === '[object Error]';
  const isArguments = (v) => objectToString(v) === '[object Arguments]';
  const GeneratorFunctionPrototype = Object.getPrototypeOf(function* () {});
  const AsyncFunctionPrototype = Object.getPrototypeOf(async function () {});
  let AsyncGeneratorFunctionPrototype = null;
  try {
    AsyncGeneratorFunctionPrototype = Object.getPrototypeOf(new Function('return async function* () {}')());
  } catch (e) {
    // goja without async generators
  }

  function protoChainHas(v, proto) {
    for (let p = P.ObjectGetPrototypeOf(v); p !== null; p = P.ObjectGetPrototypeOf(p)) {
      if (p === proto) return true;
    }
    return false;
  }

  // ---- primitives ----

  function escapeChar(code) {
    switch (code) {
      case 8: return '\\b';
      case 9: return '\\t';
      case 10: return '\\n';
      case 12: return '\\f';
      case 13: return '\\r';
      case 39: return "\\'";
      case 92: return '\\\\';
      default: return '\\x' + P.StringPrototypePadStart(P.StringPrototypeToUpperCase(P.NumberPrototypeToString(code, 16)), 2, '0');
    }
  }

  function strEscape(str) {
    // Node picks the quote that needs no escaping: ' then " then `.
    let quote = "'";
    if (P.StringPrototypeIncludes(str, "'")) {
      if (!P.StringPrototypeIncludes(str, '"')) quote = '"';
      else if (!P.StringPrototypeIncludes(str, '`') && !P.StringPrototypeIncludes(str, '${')) quote = '`';
    }
    let result = '';
    let last = 0;
    for (let i = 0; i < str.length; i++) {
      const point = P.StringPrototypeCharCodeAt(str, i);
      if ((point === 39 && quote === "'") || point === 92 || point < 32 || (point > 126 && point < 160)) {
        result += P.StringPrototypeSlice(str, last, i) + escapeChar(point);
        last = i + 1;
      } else if (point >= 0xd800 && point <= 0xdfff) {
        if (point <= 0xdbff && i + 1 < str.length) {
          const next = P.StringPrototypeCharCodeAt(str, i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) {
            i++;
            continue;
          }
        }
        result += P.StringPrototypeSlice(str, last, i) + '\\u' + P.StringPrototypeToUpperCase(P.NumberPrototypeToString(point, 16));
        last = i + 1;
      }
    }
    if (last !== str.length) result += P.StringPrototypeSlice(str, last);
    return quote + result + quote;
  }

  function formatNumber(n) {
    if (P.ObjectIs(n, -0)) return '-0';
    return `${n}`;
  }

  function formatBigInt(n) {
    return `${n}n`;
  }

  function formatPrimitive(value, ctx) {
    switch (typeof value) {
      case 'string': {
        let trailer = '';
        if (value.length > ctx.maxStringLength) {
          const remaining = value.length - ctx.maxStringLength;
          value = P.StringPrototypeSlice(value, 0, ctx.maxStringLength);
          trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
        }
        if (ctx.compact !== true && value.length > kMinLineWidth &&
            value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          const lines = splitAfterNewlines(value);
          if (lines.length > 1) {
            for (let i = 0; i < lines.length; i++) lines[i] = strEscape(lines[i]);
            return P.ArrayPrototypeJoin(lines, ` +\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl + 2)}`) + trailer;
          }
        }
        return strEscape(value) + trailer;
      }
      case 'number': return formatNumber(value);
      case 'bigint': return formatBigInt(value);
      case 'boolean': return `${value}`;
      case 'undefined': return 'undefined';
      default: return P.SymbolPrototypeToString(value);
    }
  }

  // splitAfterNewlines is s.split(/(?<=\n)/): the lines with their ends.
  function splitAfterNewlines(s) {
    const lines = [];
    let from = 0;
    for (let i = P.StringPrototypeIndexOf(s, '\n'); i !== -1; i = P.StringPrototypeIndexOf(s, '\n', from)) {
      P.arrayPush(lines, P.StringPrototypeSlice(s, from, i + 1));
      from = i + 1;
    }
    if (from < s.length || lines.length === 0) P.arrayPush(lines, P.StringPrototypeSlice(s, from));
    return lines;
  }

  // ---- objects ----

  function getConstructorName(obj) {
    let firstProto;
    let o = obj;
    while (o !== null && o !== undefined) {
      const descriptor = P.ObjectGetOwnPropertyDescriptor(o, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' &&
          descriptor.value.name !== '' && isInstanceof(obj, descriptor.value)) {
        return P.String(descriptor.value.name);
      }
      o = P.ObjectGetPrototypeOf(o);
      if (firstProto === undefined) firstProto = o;
    }
    if (firstProto === null) return null;
    return 'Object';
  }

  function isInstanceof(obj, ctor) {
    try {
      return P.isInstance(obj, ctor); // not ctor[Symbol.hasInstance], which a cell can define
    } catch (e) {
      return false;
    }
  }

  function getPrefix(constructor, tag, fallback, size = '') {
    if (constructor === null) {
      if (tag !== '' && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== '' && constructor !== tag) return `${constructor}${size} [${tag}] `;
    return `${constructor}${size} `;
  }

  function getKeys(value, showHidden) {
    const symbols = P.ObjectGetOwnPropertySymbols(value);
    let keys;
    if (showHidden) {
      keys = P.ObjectGetOwnPropertyNames(value);
      for (let i = 0; i < symbols.length; i++) P.arrayPush(keys, symbols[i]);
    } else {
      keys = P.ObjectKeys(value);
      for (let i = 0; i < symbols.length; i++) if (isEnumerable(value, symbols[i])) P.arrayPush(keys, symbols[i]);
    }
    return keys;
  }

  function getOwnNonIndexProperties(value, showHidden) {
    // Very long arrays: listing every index to find the few extra keys costs
    // more than it is worth.
    if (value.length > 100000) return [];
    const keys = showHidden ? P.ObjectGetOwnPropertyNames(value) : P.ObjectKeys(value);
    const out = [];
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (!P.RegExpPrototypeTest(numberRegExp, k) || +k > 2 ** 32 - 2) {
        if (k !== 'length' || !P.ArrayIsArray(value)) P.arrayPush(out, k);
      }
    }
    const symbols = P.ObjectGetOwnPropertySymbols(value);
    for (let i = 0; i < symbols.length; i++) {
      if (showHidden || isEnumerable(value, symbols[i])) P.arrayPush(out, symbols[i]);
    }
    return out;
  }

  function formatValue(ctx, value, recurseTimes, typedArray) {
    if (typeof value !== 'object' && typeof value !== 'function') {
      return formatPrimitive(value, ctx);
    }
    if (value === null) return 'null';
    if (ctx.customInspect) {
      let maybeCustom;
      try {
        maybeCustom = value[customInspectSymbol];
      } catch (e) {
        maybeCustom = undefined;
      }
      if (typeof maybeCustom === 'function' && maybeCustom !== inspect) {
        const depth = ctx.depth === null ? null : ctx.depth - recurseTimes;
        const opts = P.ObjectAssign({}, ctx, { depth });
        const ret = P.ReflectApply(maybeCustom, value, [depth, opts, inspect]);
        if (ret !== value) {
          if (typeof ret !== 'string') return formatValue(ctx, ret, recurseTimes);
          return P.StringPrototypeReplaceAll(ret, '\n', `\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl)}`);
        }
      }
    }
    if (P.ArrayPrototypeIncludes(ctx.seen, value)) {
      let index = 1;
      if (ctx.circular === undefined) {
        ctx.circular = new P.SafeMap();
        ctx.circular.set(value, index);
      } else {
        index = ctx.circular.get(value);
        if (index === undefined) {
          index = ctx.circular.size + 1;
          ctx.circular.set(value, index);
        }
      }
      return `[Circular *${index}]`;
    }
    return formatRaw(ctx, value, recurseTimes, typedArray);
  }

  function formatRaw(ctx, value, recurseTimes, typedArray) {
    let keys;
    const constructor = getConstructorName(value);
    let tag = value[P.SymbolToStringTag];
    if (typeof tag !== 'string' || (tag !== '' &&
        (ctx.showHidden ? hasOwn : isEnumerable)(value, P.SymbolToStringTag))) {
      tag = '';
    }
    let base = '';
    let formatter = () => [];
    let braces;
    let noIterator = true;
    let extrasType = kObjectType;

    if (typeof value[P.SymbolIterator] === 'function' || constructor === null) {
      noIterator = false;
      if (P.ArrayIsArray(value)) {
        const prefix = (constructor !== 'Array' || tag !== '')
          ? getPrefix(constructor, tag, 'Array', `(${value.length})`) : '';
        keys = getOwnNonIndexProperties(value, ctx.showHidden);
        braces = [`${prefix}[`, ']'];
        if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
        extrasType = kArrayExtrasType;
        formatter = formatArray;
      } else if (isSet(value)) {
        const size = setSize(value);
        const prefix = getPrefix(constructor, tag, 'Set', `(${size})`);
        keys = getKeys(value, ctx.showHidden);
        formatter = formatSet;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isMap(value)) {
        const size = mapSize(value);
        const prefix = getPrefix(constructor, tag, 'Map', `(${size})`);
        keys = getKeys(value, ctx.showHidden);
        formatter = formatMap;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isTypedArray(value)) {
        keys = getOwnNonIndexProperties(value, ctx.showHidden);
        const fallback = constructor === null ? typedArrayTag(value) : '';
        const size = P.TypedArrayPrototypeGetLength(value);
        const prefix = getPrefix(constructor, tag, fallback, `(${size})`);
        braces = [`${prefix}[`, ']'];
        if (size === 0 && keys.length === 0 && !ctx.showHidden) return `${braces[0]}]`;
        formatter = formatTypedArray;
        extrasType = kArrayExtrasType;
      } else {
        noIterator = true;
      }
    }
    if (noIterator) {
      keys = getKeys(value, ctx.showHidden);
      braces = ['{', '}'];
      if (typeof value === 'function') {
        base = getFunctionBase(value, constructor, tag);
        if (keys.length === 0) return base;
      } else if (constructor === 'Object') {
        if (isArguments(value)) {
          braces[0] = '[Arguments] [';
          braces[1] = ']';
          extrasType = kArrayExtrasType;
          formatter = formatArray;
          keys = P.arrayFilter(getOwnNonIndexProperties(value, ctx.showHidden), (k) => k !== 'length');
        } else if (tag !== '') {
          braces[0] = `${getPrefix(constructor, tag, 'Object')}{`;
        }
        if (keys.length === 0 && formatter !== formatArray) return `${braces[0]}}`;
      } else if (isRegExp(value)) {
        base = P.RegExpPrototypeToString(value);
        const prefix = getPrefix(constructor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = `${prefix}${base}`;
        if (keys.length === 0 || (recurseTimes > ctx.depth && ctx.depth !== null)) return base;
      } else if (isDate(value)) {
        base = P.NumberIsNaN(P.DatePrototypeGetTime(value))
          ? P.DatePrototypeToString(value)
          : P.DatePrototypeToISOString(value);
        const prefix = getPrefix(constructor, tag, 'Date');
        if (prefix !== 'Date ') base = `${prefix}${base}`;
        if (keys.length === 0) return base;
      } else if (isError(value)) {
        base = formatError(value, constructor, tag, ctx, keys);
        if (keys.length === 0) return base;
      } else if (isArrayBuffer(value)) {
        const prefix = getPrefix(constructor, tag, 'ArrayBuffer');
        if (typedArray === undefined) {
          formatter = formatArrayBuffer;
        } else if (keys.length === 0) {
          return prefix + `{ byteLength: ${formatNumber(P.ArrayBufferPrototypeGetByteLength(value))} }`;
        }
        braces[0] = `${prefix}{`;
        P.arrayUnshift(keys, 'byteLength');
      } else if (isDataView(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'DataView')}{`;
        P.arrayUnshift(keys, 'byteLength', 'byteOffset', 'buffer');
      } else if (host.promiseState(value) !== undefined) {
        braces[0] = `${getPrefix(constructor, tag, 'Promise')}{`;
        formatter = formatPromise;
      } else if (isWeakSet(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'WeakSet')}{`;
        formatter = formatWeakCollection;
      } else if (isWeakMap(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'WeakMap')}{`;
        formatter = formatWeakCollection;
      } else if (isBoxedPrimitive(value)) {
        base = getBoxedBase(value, ctx, keys, constructor, tag);
        if (keys.length === 0) return base;
      } else {
        if (keys.length === 0) return `${getPrefix(constructor, tag, 'Object')}{}`;
        braces[0] = `${getPrefix(constructor, tag, 'Object')}{`;
      }
    }

    if (recurseTimes > ctx.depth && ctx.depth !== null) {
      let constructorName = P.StringPrototypeSlice(getPrefix(constructor, tag, 'Object'), 0, -1);
      if (constructor !== null) constructorName = `[${constructorName}]`;
      return constructorName;
    }
    recurseTimes += 1;
    P.arrayPush(ctx.seen, value);
    ctx.currentDepth = recurseTimes;
    let output;
    const indentationLvl = ctx.indentationLvl;
    try {
      output = formatter(ctx, value, recurseTimes);
      for (let i = 0; i < keys.length; i++) {
        P.arrayPush(output, formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
      }
    } catch (err) {
      if (P.isInstance(err, P.RangeError)) {
        P.ArrayPrototypePop(ctx.seen);
        ctx.indentationLvl = indentationLvl;
        return `[${P.StringPrototypeSlice(getPrefix(constructor, tag, 'Object'), 0, -1)}: Inspection interrupted prematurely. Maximum call stack size exceeded.]`;
      }
      throw err;
    }
    if (ctx.circular !== undefined) {
      const index = ctx.circular.get(value);
      if (index !== undefined) {
        const reference = `<ref *${index}>`;
        if (ctx.compact !== true) {
          base = base === '' ? reference : `${reference} ${base}`;
        } else {
          braces[0] = `${reference} ${braces[0]}`;
        }
      }
    }
    P.ArrayPrototypePop(ctx.seen);
    if (ctx.sorted) {
      const comparator = ctx.sorted === true ? undefined : ctx.sorted;
      if (extrasType === kObjectType) {
        P.ArrayPrototypeSort(output, comparator);
      } else if (keys.length > 1) {
        const sorted = P.ArrayPrototypeSort(P.arraySlice(output, output.length - keys.length), comparator);
        for (let i = 0; i < sorted.length; i++) output[output.length - keys.length + i] = sorted[i];
      }
    }
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function getFunctionBase(value, constructor, tag) {
    let stringified = '';
    try {
      stringified = P.FunctionPrototypeToString(value);
    } catch (e) {
      // not a plain function
    }
    if (P.StringPrototypeStartsWith(stringified, 'class') && P.StringPrototypeEndsWith(stringified, '}')) {
      const slice = P.StringPrototypeSlice(stringified, 5, -1);
      const bracketIndex = P.StringPrototypeIndexOf(slice, '{');
      if (bracketIndex !== -1 && (!P.StringPrototypeIncludes(P.StringPrototypeSlice(slice, 0, bracketIndex), '(') ||
          P.RegExpPrototypeTest(/^\s*(?:extends\s+[\w$.]+\s*)?\{/, P.regExpReplace(slice, /(\/\/.*?\n)|(\/\*(.|\n)*?\*\/)/g, () => '')))) {
        return getClassBase(value, constructor, tag);
      }
    }
    let type = 'Function';
    if (protoChainHas(value, GeneratorFunctionPrototype)) type = `Generator${type}`;
    // goja gives async methods Function.prototype: their source tells.
    if (protoChainHas(value, AsyncFunctionPrototype) || P.RegExpPrototypeTest(/^async[\s*(]/, stringified)) type = `Async${type}`;
    if (AsyncGeneratorFunctionPrototype !== null && protoChainHas(value, AsyncGeneratorFunctionPrototype)) {
      type = `AsyncGenerator${P.StringPrototypeReplace(type, 'Generator', '')}`;
    }
    let base = `[${type}`;
    if (constructor === null) base += ' (null prototype)';
    if (value.name === '' || typeof value.name !== 'string') base += ' (anonymous)';
    else base += `: ${value.name}`;
    base += ']';
    if (constructor !== type && constructor !== null && constructor !== 'Function') base += ` ${constructor}`;
    if (tag !== '' && constructor !== tag) base += ` [${tag}]`;
    return base;
  }

  function getClassBase(value, constructor, tag) {
    const name = (hasOwn(value, 'name') && value.name) || '(anonymous)';
    let base = `class ${name}`;
    if (constructor !== 'Function' && constructor !== null) base += ` [${constructor}]`;
    if (tag !== '' && constructor !== tag) base += ` [${tag}]`;
    if (constructor !== null) {
      const superName = P.ObjectGetPrototypeOf(value).name;
      if (superName) base += ` extends ${superName}`;
    } else {
      base += ' extends [null prototype]';
    }
    return `[${base}]`;
  }

  function getBoxedBase(value, ctx, keys, constructor, tag) {
    let type;
    let primitive;
    if (isNumberObject(value)) {
      type = 'Number';
      primitive = P.NumberPrototypeValueOf(value);
    } else if (isStringObject(value)) {
      type = 'String';
      primitive = P.StringPrototypeValueOf(value);
      P.arraySplice(keys, 0, primitive.length);
    } else if (isBooleanObject(value)) {
      type = 'Boolean';
      primitive = P.BooleanPrototypeValueOf(value);
    } else if (isBigIntObject(value)) {
      type = 'BigInt';
      primitive = P.BigIntPrototypeValueOf(value);
    } else {
      type = 'Symbol';
      primitive = P.SymbolPrototypeValueOf(value);
    }
    let base = `[${type}`;
    if (type !== constructor) {
      base += constructor === null ? ' (null prototype)' : ` (${constructor})`;
    }
    base += `: ${formatPrimitive(primitive, P.ObjectAssign({}, ctx, { compact: true }))}]`;
    if (tag !== '' && tag !== constructor) base += ` [${tag}]`;
    return base;
  }

  // cleanStack turns goja's stack text into Node's: four-space "at" lines,
  // no program counters, and no frames of the prelude.
  function cleanStack(stack) {
    const lines = P.StringPrototypeSplit(P.String(stack), '\n');
    const out = [];
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i];
      if (P.StringPrototypeStartsWith(line, '\tat ')) {
        // The prelude's frames and the host's Go functions are not the
        // guest's business.
        if (P.StringPrototypeIncludes(line, 'wasmeval:prelude/') ||
            P.RegExpPrototypeTest(/^\tat github\.com\/wasmeval\/.* \(native\)$/, line)) continue;
        line = '    at ' + P.regExpReplace(P.StringPrototypeSlice(line, 4), /:(\d+):(\d+)\(\d+\)/g, (m) => `:${m[1]}:${m[2]}`);
      }
      P.arrayPush(out, line);
    }
    while (out.length > 0 && out[out.length - 1] === '') P.ArrayPrototypePop(out);
    return P.ArrayPrototypeJoin(out, '\n');
  }

  function getStackString(err) {
    let stack;
    try {
      stack = err.stack;
    } catch (e) {
      stack = undefined;
    }
    if (stack) return cleanStack(stack);
    try {
      return P.ErrorPrototypeToString(err);
    } catch (e) {
      return '[object Error]';
    }
  }

  function formatError(err, constructor, tag, ctx, keys) {
    let stack = getStackString(err);
    if (!ctx.showHidden && keys.length !== 0) {
      const names = ['name', 'message', 'stack'];
      for (let i = 0; i < names.length; i++) {
        const index = P.ArrayPrototypeIndexOf(keys, names[i]);
        if (index !== -1 && P.StringPrototypeIncludes(stack, err[names[i]])) P.arraySplice(keys, index, 1);
      }
    }
    if ('cause' in err && (keys.length === 0 || !P.ArrayPrototypeIncludes(keys, 'cause'))) P.arrayPush(keys, 'cause');
    if (P.ArrayIsArray(err.errors) && (keys.length === 0 || !P.ArrayPrototypeIncludes(keys, 'errors'))) P.arrayPush(keys, 'errors');
    let pos = (err.message && P.StringPrototypeIndexOf(stack, err.message)) || -1;
    if (pos !== -1) pos += err.message.length;
    const stackStart = P.StringPrototypeIndexOf(stack, '\n    at', pos);
    if (stackStart === -1) {
      stack = `[${stack}]`;
    }
    if (ctx.indentationLvl !== 0) {
      stack = P.StringPrototypeReplaceAll(stack, '\n', `\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl)}`);
    }
    return stack;
  }

  function formatArray(ctx, value, recurseTimes) {
    const valLen = value.length;
    const len = P.MathMin(P.MathMax(0, ctx.maxArrayLength), valLen);
    const remaining = valLen - len;
    const output = [];
    for (let i = 0; i < len; i++) {
      if (!hasOwn(value, i)) return formatSpecialArray(ctx, value, recurseTimes, len, output, i);
      P.arrayPush(output, formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (remaining > 0) P.arrayPush(output, remainingText(remaining));
    return output;
  }

  function remainingText(remaining) {
    return `... ${remaining} more item${remaining > 1 ? 's' : ''}`;
  }

  function formatSpecialArray(ctx, value, recurseTimes, maxLength, output, i) {
    const keys = P.ObjectKeys(value);
    let index = i;
    for (; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i];
      const tmp = +key;
      if (tmp > 2 ** 32 - 2) break;
      if (`${index}` !== key) {
        if (!P.RegExpPrototypeTest(numberRegExp, key)) break;
        const emptyItems = tmp - index;
        P.arrayPush(output, `<${emptyItems} empty item${emptyItems > 1 ? 's' : ''}>`);
        index = tmp;
        if (output.length === maxLength) break;
      }
      P.arrayPush(output, formatProperty(ctx, value, recurseTimes, key, kArrayType));
      index++;
    }
    const remaining = value.length - index;
    if (output.length !== maxLength) {
      if (remaining > 0) P.arrayPush(output, `<${remaining} empty item${remaining > 1 ? 's' : ''}>`);
    } else if (remaining > 0) {
      P.arrayPush(output, remainingText(remaining));
    }
    return output;
  }

  function formatTypedArray(ctx, value) {
    const length = P.TypedArrayPrototypeGetLength(value);
    const maxLength = P.MathMin(P.MathMax(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = [];
    for (let i = 0; i < maxLength; ++i) {
      P.arraySet(output, i, typeof value[i] === 'bigint' ? formatBigInt(value[i]) : formatNumber(value[i]));
    }
    if (remaining > 0) P.arraySet(output, maxLength, remainingText(remaining));
    return output;
  }

  function formatArrayBuffer(ctx, value) {
    const buffer = new P.Uint8Array(value);
    const bufferLength = P.TypedArrayPrototypeGetLength(buffer);
    const shown = P.MathMin(ctx.maxArrayLength, bufferLength);
    let str = '';
    for (let i = 0; i < shown; i++) {
      str += (i === 0 ? '' : ' ') + P.StringPrototypePadStart(P.NumberPrototypeToString(buffer[i], 16), 2, '0');
    }
    const remaining = bufferLength - ctx.maxArrayLength;
    if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? 's' : ''}`;
    return [`[Uint8Contents]: <${str}>`];
  }

  function formatSet(ctx, value, recurseTimes) {
    const length = setSize(value);
    const maxLength = P.MathMin(P.MathMax(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    let i = 0;
    const values = P.setValues(value, maxLength);
    for (; i < values.length; i++) {
      P.arrayPush(output, formatValue(ctx, values[i], recurseTimes));
    }
    if (remaining > 0) P.arrayPush(output, remainingText(remaining));
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatMap(ctx, value, recurseTimes) {
    const length = mapSize(value);
    const maxLength = P.MathMin(P.MathMax(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    let i = 0;
    const entries = P.mapEntries(value, maxLength);
    for (; i < entries.length; i++) {
      const k = entries[i][0];
      const v = entries[i][1];
      P.arrayPush(output, `${formatValue(ctx, k, recurseTimes)} => ${formatValue(ctx, v, recurseTimes)}`);
    }
    if (remaining > 0) P.arrayPush(output, remainingText(remaining));
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatPromise(ctx, value, recurseTimes) {
    const promise = host.promiseState(value);
    const state = promise[0];
    const result = promise[1];
    if (state === 'pending') return ['<pending>'];
    ctx.indentationLvl += 2;
    const str = formatValue(ctx, result, recurseTimes);
    ctx.indentationLvl -= 2;
    return [state === 'rejected' ? `<rejected> ${str}` : str];
  }

  function formatWeakCollection() {
    return ['<items unknown>'];
  }

  function formatProperty(ctx, value, recurseTimes, key, type) {
    let name;
    let str;
    let extra = ' ';
    const desc = P.ObjectGetOwnPropertyDescriptor(value, key) || { value: value[key], enumerable: true };
    if (desc.value !== undefined) {
      const diff = (ctx.compact !== true || type !== kObjectType) ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, desc.value, recurseTimes);
      if (diff === 3 && ctx.breakLength < str.length) {
        extra = `\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl)}`;
      }
      ctx.indentationLvl -= diff;
    } else if (desc.get !== undefined) {
      str = desc.set !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else if (desc.set !== undefined) {
      str = '[Setter]';
    } else {
      str = 'undefined';
    }
    if (type === kArrayType) return str;
    if (typeof key === 'symbol') {
      name = `[${P.SymbolPrototypeToString(key)}]`;
    } else if (key === '__proto__') {
      name = "['__proto__']";
    } else if (desc.enumerable === false) {
      name = `[${key}]`;
    } else if (P.RegExpPrototypeTest(keyStrRegExp, key)) {
      name = key;
    } else {
      name = strEscape(key);
    }
    return `${name}:${extra}${str}`;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let totalLength = output.length + start;
    if (totalLength + output.length > ctx.breakLength) return false;
    for (let i = 0; i < output.length; i++) {
      totalLength += output[i].length;
      if (totalLength > ctx.breakLength) return false;
    }
    return base === '' || !P.StringPrototypeIncludes(base, '\n');
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let i = 0;
    let outputLength = output.length;
    if (ctx.maxArrayLength < output.length) outputLength--;
    const separatorSpace = 2;
    const dataLen = [];
    for (; i < outputLength; i++) {
      const len = output[i].length;
      P.arraySet(dataLen, i, len);
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
        (totalLength / actualMax > 5 || maxLength <= 6)) {
      const approxCharHeights = 2.5;
      const averageBias = P.MathSqrt(actualMax - totalLength / output.length);
      const biasedMax = P.MathMax(actualMax - 3 - averageBias, 1);
      const columns = P.MathMin(
        P.MathRound(P.MathSqrt(approxCharHeights * biasedMax * outputLength) / biasedMax),
        P.MathFloor((ctx.breakLength - ctx.indentationLvl) / actualMax),
        ctx.compact * 4,
        15,
      );
      if (columns <= 1) return output;
      const tmp = [];
      const maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineLength = 0;
        for (let j = i; j < output.length; j += columns) {
          if (dataLen[j] > lineLength) lineLength = dataLen[j];
        }
        P.arrayPush(maxLineLength, lineLength + separatorSpace);
      }
      let order = P.StringPrototypePadStart;
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') {
            order = P.StringPrototypePadEnd;
            break;
          }
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = P.MathMin(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const padding = maxLineLength[j - i] + output[j].length - dataLen[j];
          str += order(`${output[j]}, `, padding, ' ');
        }
        if (order === P.StringPrototypePadStart) {
          const padding = maxLineLength[j - i] + output[j].length - dataLen[j] - separatorSpace;
          str += P.StringPrototypePadStart(output[j], padding, ' ');
        } else {
          str += output[j];
        }
        P.arrayPush(tmp, str);
      }
      if (ctx.maxArrayLength < output.length) P.arrayPush(tmp, output[outputLength]);
      output = tmp;
    }
    return output;
  }

  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    if (ctx.compact !== true) {
      if (typeof ctx.compact === 'number' && ctx.compact >= 1) {
        const entries = output.length;
        if (extrasType === kArrayExtrasType && entries > 6) {
          output = groupArrayElements(ctx, output, value);
        }
        if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
          const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
          if (isBelowBreakLength(ctx, output, start, base)) {
            const joinedOutput = P.ArrayPrototypeJoin(output, ', ');
            if (!P.StringPrototypeIncludes(joinedOutput, '\n')) {
              return `${base ? `${base} ` : ''}${braces[0]} ${joinedOutput} ${braces[1]}`;
            }
          }
        }
      }
      const indentation = `\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl)}`;
      return `${base ? `${base} ` : ''}${braces[0]}${indentation}  ${P.ArrayPrototypeJoin(output, `,${indentation}  `)}${indentation}${braces[1]}`;
    }
    if (isBelowBreakLength(ctx, output, 0, base)) {
      return `${braces[0]}${base ? ` ${base}` : ''} ${P.ArrayPrototypeJoin(output, ', ')} ${braces[1]}`;
    }
    const indentation = `\n${P.StringPrototypeRepeat(' ', ctx.indentationLvl)}`;
    const ln = base === '' && braces[0].length === 1 ? ' ' : `${base ? ` ${base}` : ''}\n${indentation}  `;
    return `${braces[0]}${ln}${P.ArrayPrototypeJoin(output, `,\n${indentation}  `)} ${braces[1]}`;
  }

  // primitiveCtx is all that formatPrimitive reads, for the common case of
  // a primitive shown with the default options.
  const primitiveCtx = P.ObjectFreeze({
    compact: defaultOptions.compact,
    breakLength: defaultOptions.breakLength,
    maxStringLength: defaultOptions.maxStringLength,
    indentationLvl: 0,
  });

  function inspect(value, opts) {
    if (opts === undefined && typeof value !== 'object' && typeof value !== 'function') {
      return formatPrimitive(value, primitiveCtx);
    }
    const ctx = {
      showHidden: defaultOptions.showHidden,
      depth: defaultOptions.depth,
      colors: defaultOptions.colors,
      customInspect: defaultOptions.customInspect,
      showProxy: defaultOptions.showProxy,
      maxArrayLength: defaultOptions.maxArrayLength,
      maxStringLength: defaultOptions.maxStringLength,
      breakLength: defaultOptions.breakLength,
      compact: defaultOptions.compact,
      sorted: defaultOptions.sorted,
      getters: defaultOptions.getters,
      numericSeparator: defaultOptions.numericSeparator,
      seen: [],
      indentationLvl: 0,
      currentDepth: 0,
      circular: undefined,
    };
    if (typeof opts === 'object' && opts !== null) {
      const keys = P.ObjectKeys(opts);
      for (let i = 0; i < keys.length; i++) {
        if (hasOwn(defaultOptions, keys[i])) ctx[keys[i]] = opts[keys[i]];
      }
    }
    if (ctx.depth === Infinity) ctx.depth = null;
    if (ctx.maxArrayLength === null) ctx.maxArrayLength = Infinity;
    if (ctx.maxStringLength === null) ctx.maxStringLength = Infinity;
    return formatValue(ctx, value, 0);
  }
  inspect.custom = customInspectSymbol;
  inspect.defaultOptions = defaultOptions;

  // builtInToStrings are the built-in toString methods as the VM started.
  const builtInToStrings = [Object.prototype.toString, Error.prototype.toString, Array.prototype.toString,
    Date.prototype.toString, RegExp.prototype.toString, Function.prototype.toString, Number.prototype.toString,
    String.prototype.toString, Boolean.prototype.toString];

  function hasBuiltInToString(value) {
    let proto = value;
    while (proto !== null && proto !== undefined) {
      const desc = P.ObjectGetOwnPropertyDescriptor(proto, 'toString');
      if (desc !== undefined) return P.ArrayPrototypeIncludes(builtInToStrings, desc.value);
      proto = P.ObjectGetPrototypeOf(proto);
    }
    return true;
  }

  function tryStringify(arg) {
    try {
      return P.JSONStringify(arg);
    } catch (err) {
      if (P.isInstance(err, P.TypeError) && P.RegExpPrototypeTest(/circular/i, err.message)) return '[Circular]';
      throw err;
    }
  }

  // format is util.format: printf-like %s %d %i %f %j %o %O %c %%, then the
  // remaining arguments inspected and joined with spaces.
  function format(...args) {
    const first = args[0];
    let a = 0;
    let str = '';
    let join = '';
    if (typeof first === 'string') {
      if (args.length === 1) return first;
      let tempStr;
      let lastPos = 0;
      for (let i = 0; i < first.length - 1; i++) {
        if (P.StringPrototypeCharCodeAt(first, i) !== 37) continue; // '%'
        const nextChar = P.StringPrototypeCharCodeAt(first, ++i);
        if (a + 1 !== args.length) {
          switch (nextChar) {
            case 115: { // 's'
              const arg = args[++a];
              if (typeof arg === 'number') tempStr = formatNumber(arg);
              else if (typeof arg === 'bigint') tempStr = formatBigInt(arg);
              else if (typeof arg !== 'object' || arg === null || !hasBuiltInToString(arg)) tempStr = P.String(arg);
              else tempStr = inspect(arg, { depth: 0, colors: false, compact: 3 });
              break;
            }
            case 106: tempStr = tryStringify(args[++a]); break; // 'j'
            case 100: { // 'd'
              const n = args[++a];
              if (typeof n === 'bigint') tempStr = formatBigInt(n);
              else if (typeof n === 'symbol') tempStr = 'NaN';
              else tempStr = formatNumber(P.Number(n));
              break;
            }
            case 79: tempStr = inspect(args[++a]); break; // 'O'
            case 111: tempStr = inspect(args[++a], { showHidden: true, showProxy: true, depth: 4 }); break; // 'o'
            case 105: { // 'i'
              const n = args[++a];
              if (typeof n === 'bigint') tempStr = formatBigInt(n);
              else if (typeof n === 'symbol') tempStr = 'NaN';
              else tempStr = formatNumber(P.NumberParseInt(n));
              break;
            }
            case 102: { // 'f'
              const n = args[++a];
              tempStr = typeof n === 'symbol' ? 'NaN' : formatNumber(P.NumberParseFloat(n));
              break;
            }
            case 99: a += 1; tempStr = ''; break; // 'c'
            case 37: str += P.StringPrototypeSlice(first, lastPos, i); lastPos = i + 1; continue; // '%'
            default: continue;
          }
          if (lastPos !== i - 1) str += P.StringPrototypeSlice(first, lastPos, i - 1);
          str += tempStr;
          lastPos = i + 1;
        } else if (nextChar === 37) {
          str += P.StringPrototypeSlice(first, lastPos, i);
          lastPos = i + 1;
        }
      }
      if (lastPos !== 0) {
        a++;
        join = ' ';
        if (lastPos < first.length) str += P.StringPrototypeSlice(first, lastPos);
      }
    }
    while (a < args.length) {
      const value = args[a];
      str += join;
      str += typeof value !== 'string' ? inspect(value) : value;
      join = ' ';
      a++;
    }
    return str;
  }

  // formatUncaught renders a value that escaped the cell, the way Node's
  // REPL reports it: "Uncaught " and the error's stack.
  function formatUncaught(value) {
    return 'Uncaught ' + inspect(value);
  }

  internal.inspect = inspect;
  internal.format = format;
  internal.cleanStack = cleanStack;
  internal.formatUncaught = formatUncaught;
})
