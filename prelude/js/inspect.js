// inspect.js: a port of the parts of Node's util.inspect and util.format
// that a REPL shows (objects, arrays, Maps, Sets, errors, quoted strings,
// circular references, depth and line breaking), so that values print the
// way Node prints them. Stacks are cleaned of goja's program counters and of
// the prelude's own frames.
(function (host, internal) {
  'use strict';

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  const kMinLineWidth = 16;
  const customInspectSymbol = Symbol.for('nodejs.util.inspect.custom');
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

  const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  const isEnumerable = (o, k) => Object.prototype.propertyIsEnumerable.call(o, k);
  const objectToString = (v) => Object.prototype.toString.call(v);

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
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const mapSize = getter(Map.prototype, 'size');
  const setSize = getter(Set.prototype, 'size');
  const isMap = brand((v) => mapSize.call(v));
  const isSet = brand((v) => setSize.call(v));
  const isWeakMap = brand((v) => WeakMap.prototype.has.call(v, {}));
  const isWeakSet = brand((v) => WeakSet.prototype.has.call(v, {}));
  const isDate = brand((v) => Date.prototype.getTime.call(v));
  const regExpSource = getter(RegExp.prototype, 'source');
  const isRegExp = (v) => v !== RegExp.prototype && brand((x) => regExpSource.call(x))(v);
  const abByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const isArrayBuffer = brand((v) => abByteLength.call(v));
  const dvByteLength = getter(DataView.prototype, 'byteLength');
  const isDataView = brand((v) => dvByteLength.call(v));
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
  const typedArrayTag = getter(TypedArrayPrototype, Symbol.toStringTag);
  const isTypedArray = (v) => typedArrayTag.call(v) !== undefined;
  const isNumberObject = (v) => typeof v === 'object' && brand((x) => Number.prototype.valueOf.call(x))(v);
  const isStringObject = (v) => typeof v === 'object' && brand((x) => String.prototype.valueOf.call(x))(v);
  const isBooleanObject = (v) => typeof v === 'object' && brand((x) => Boolean.prototype.valueOf.call(x))(v);
  const isBigIntObject = (v) => typeof v === 'object' && brand((x) => BigInt.prototype.valueOf.call(x))(v);
  const isSymbolObject = (v) => typeof v === 'object' && brand((x) => Symbol.prototype.valueOf.call(x))(v);
  const isBoxedPrimitive = (v) => isNumberObject(v) || isStringObject(v) || isBooleanObject(v) ||
    isBigIntObject(v) || isSymbolObject(v);
  const isError = (v) => v instanceof Error || objectToString(v) === '[object Error]';
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
    for (let p = Object.getPrototypeOf(v); p !== null; p = Object.getPrototypeOf(p)) {
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
      default: return '\\x' + code.toString(16).toUpperCase().padStart(2, '0');
    }
  }

  function strEscape(str) {
    // Node picks the quote that needs no escaping: ' then " then `.
    let quote = "'";
    if (str.includes("'")) {
      if (!str.includes('"')) quote = '"';
      else if (!str.includes('`') && !str.includes('${')) quote = '`';
    }
    let result = '';
    let last = 0;
    for (let i = 0; i < str.length; i++) {
      const point = str.charCodeAt(i);
      if ((point === 39 && quote === "'") || point === 92 || point < 32 || (point > 126 && point < 160)) {
        result += str.slice(last, i) + escapeChar(point);
        last = i + 1;
      } else if (point >= 0xd800 && point <= 0xdfff) {
        if (point <= 0xdbff && i + 1 < str.length) {
          const next = str.charCodeAt(i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) {
            i++;
            continue;
          }
        }
        result += str.slice(last, i) + '\\u' + point.toString(16).toUpperCase();
        last = i + 1;
      }
    }
    if (last !== str.length) result += str.slice(last);
    return quote + result + quote;
  }

  function formatNumber(n) {
    if (Object.is(n, -0)) return '-0';
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
          value = value.slice(0, ctx.maxStringLength);
          trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
        }
        if (ctx.compact !== true && value.length > kMinLineWidth &&
            value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          const lines = value.split(/(?<=\n)/);
          if (lines.length > 1) {
            return lines.map(strEscape).join(` +\n${' '.repeat(ctx.indentationLvl + 2)}`) + trailer;
          }
        }
        return strEscape(value) + trailer;
      }
      case 'number': return formatNumber(value);
      case 'bigint': return formatBigInt(value);
      case 'boolean': return `${value}`;
      case 'undefined': return 'undefined';
      default: return Symbol.prototype.toString.call(value);
    }
  }

  // ---- objects ----

  function getConstructorName(obj) {
    let firstProto;
    let o = obj;
    while (o !== null && o !== undefined) {
      const descriptor = Object.getOwnPropertyDescriptor(o, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' &&
          descriptor.value.name !== '' && isInstanceof(obj, descriptor.value)) {
        return String(descriptor.value.name);
      }
      o = Object.getPrototypeOf(o);
      if (firstProto === undefined) firstProto = o;
    }
    if (firstProto === null) return null;
    return 'Object';
  }

  function isInstanceof(obj, ctor) {
    try {
      return obj instanceof ctor;
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
    const symbols = Object.getOwnPropertySymbols(value);
    let keys;
    if (showHidden) {
      keys = Object.getOwnPropertyNames(value);
      if (symbols.length !== 0) keys.push(...symbols);
    } else {
      keys = Object.keys(value);
      for (const s of symbols) if (isEnumerable(value, s)) keys.push(s);
    }
    return keys;
  }

  function getOwnNonIndexProperties(value, showHidden) {
    // Very long arrays: listing every index to find the few extra keys costs
    // more than it is worth.
    if (value.length > 100000) return [];
    const keys = showHidden ? Object.getOwnPropertyNames(value) : Object.keys(value);
    const out = [];
    for (const k of keys) {
      if (!numberRegExp.test(k) || +k > 2 ** 32 - 2) {
        if (k !== 'length' || !Array.isArray(value)) out.push(k);
      }
    }
    for (const s of Object.getOwnPropertySymbols(value)) {
      if (showHidden || isEnumerable(value, s)) out.push(s);
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
        const opts = Object.assign({}, ctx, { depth });
        const ret = maybeCustom.call(value, depth, opts, inspect);
        if (ret !== value) {
          if (typeof ret !== 'string') return formatValue(ctx, ret, recurseTimes);
          return ret.replaceAll('\n', `\n${' '.repeat(ctx.indentationLvl)}`);
        }
      }
    }
    if (ctx.seen.includes(value)) {
      let index = 1;
      if (ctx.circular === undefined) {
        ctx.circular = new Map();
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
    let tag = value[Symbol.toStringTag];
    if (typeof tag !== 'string' || (tag !== '' &&
        (ctx.showHidden ? hasOwn : isEnumerable)(value, Symbol.toStringTag))) {
      tag = '';
    }
    let base = '';
    let formatter = () => [];
    let braces;
    let noIterator = true;
    let extrasType = kObjectType;

    if (typeof value[Symbol.iterator] === 'function' || constructor === null) {
      noIterator = false;
      if (Array.isArray(value)) {
        const prefix = (constructor !== 'Array' || tag !== '')
          ? getPrefix(constructor, tag, 'Array', `(${value.length})`) : '';
        keys = getOwnNonIndexProperties(value, ctx.showHidden);
        braces = [`${prefix}[`, ']'];
        if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
        extrasType = kArrayExtrasType;
        formatter = formatArray;
      } else if (isSet(value)) {
        const size = setSize.call(value);
        const prefix = getPrefix(constructor, tag, 'Set', `(${size})`);
        keys = getKeys(value, ctx.showHidden);
        formatter = formatSet;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isMap(value)) {
        const size = mapSize.call(value);
        const prefix = getPrefix(constructor, tag, 'Map', `(${size})`);
        keys = getKeys(value, ctx.showHidden);
        formatter = formatMap;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isTypedArray(value)) {
        keys = getOwnNonIndexProperties(value, ctx.showHidden);
        const fallback = constructor === null ? typedArrayTag.call(value) : '';
        const size = value.length;
        const prefix = getPrefix(constructor, tag, fallback, `(${size})`);
        braces = [`${prefix}[`, ']'];
        if (value.length === 0 && keys.length === 0 && !ctx.showHidden) return `${braces[0]}]`;
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
          keys = getOwnNonIndexProperties(value, ctx.showHidden).filter((k) => k !== 'length');
        } else if (tag !== '') {
          braces[0] = `${getPrefix(constructor, tag, 'Object')}{`;
        }
        if (keys.length === 0 && formatter !== formatArray) return `${braces[0]}}`;
      } else if (isRegExp(value)) {
        base = RegExp.prototype.toString.call(value);
        const prefix = getPrefix(constructor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = `${prefix}${base}`;
        if (keys.length === 0 || (recurseTimes > ctx.depth && ctx.depth !== null)) return base;
      } else if (isDate(value)) {
        base = Number.isNaN(Date.prototype.getTime.call(value))
          ? Date.prototype.toString.call(value)
          : Date.prototype.toISOString.call(value);
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
          return prefix + `{ byteLength: ${formatNumber(value.byteLength)} }`;
        }
        braces[0] = `${prefix}{`;
        keys.unshift('byteLength');
      } else if (isDataView(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'DataView')}{`;
        keys.unshift('byteLength', 'byteOffset', 'buffer');
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
      let constructorName = getPrefix(constructor, tag, 'Object').slice(0, -1);
      if (constructor !== null) constructorName = `[${constructorName}]`;
      return constructorName;
    }
    recurseTimes += 1;
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    let output;
    const indentationLvl = ctx.indentationLvl;
    try {
      output = formatter(ctx, value, recurseTimes);
      for (let i = 0; i < keys.length; i++) {
        output.push(formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
      }
    } catch (err) {
      if (err instanceof RangeError) {
        ctx.seen.pop();
        ctx.indentationLvl = indentationLvl;
        return `[${getPrefix(constructor, tag, 'Object').slice(0, -1)}: Inspection interrupted prematurely. Maximum call stack size exceeded.]`;
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
    ctx.seen.pop();
    if (ctx.sorted) {
      const comparator = ctx.sorted === true ? undefined : ctx.sorted;
      if (extrasType === kObjectType) {
        output.sort(comparator);
      } else if (keys.length > 1) {
        const sorted = output.slice(output.length - keys.length).sort(comparator);
        output.splice(output.length - keys.length, keys.length, ...sorted);
      }
    }
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function getFunctionBase(value, constructor, tag) {
    let stringified = '';
    try {
      stringified = Function.prototype.toString.call(value);
    } catch (e) {
      // not a plain function
    }
    if (stringified.startsWith('class') && stringified.endsWith('}')) {
      const slice = stringified.slice(5, -1);
      const bracketIndex = slice.indexOf('{');
      if (bracketIndex !== -1 && (!slice.slice(0, bracketIndex).includes('(') ||
          /^\s*(?:extends\s+[\w$.]+\s*)?\{/.test(slice.replace(/(\/\/.*?\n)|(\/\*(.|\n)*?\*\/)/g, '')))) {
        return getClassBase(value, constructor, tag);
      }
    }
    let type = 'Function';
    if (protoChainHas(value, GeneratorFunctionPrototype)) type = `Generator${type}`;
    // goja gives async methods Function.prototype: their source tells.
    if (protoChainHas(value, AsyncFunctionPrototype) || /^async[\s*(]/.test(stringified)) type = `Async${type}`;
    if (AsyncGeneratorFunctionPrototype !== null && protoChainHas(value, AsyncGeneratorFunctionPrototype)) {
      type = `AsyncGenerator${type.replace('Generator', '')}`;
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
      const superName = Object.getPrototypeOf(value).name;
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
      primitive = Number.prototype.valueOf.call(value);
    } else if (isStringObject(value)) {
      type = 'String';
      primitive = String.prototype.valueOf.call(value);
      keys.splice(0, primitive.length);
    } else if (isBooleanObject(value)) {
      type = 'Boolean';
      primitive = Boolean.prototype.valueOf.call(value);
    } else if (isBigIntObject(value)) {
      type = 'BigInt';
      primitive = BigInt.prototype.valueOf.call(value);
    } else {
      type = 'Symbol';
      primitive = Symbol.prototype.valueOf.call(value);
    }
    let base = `[${type}`;
    if (type !== constructor) {
      base += constructor === null ? ' (null prototype)' : ` (${constructor})`;
    }
    base += `: ${formatPrimitive(primitive, Object.assign({}, ctx, { compact: true }))}]`;
    if (tag !== '' && tag !== constructor) base += ` [${tag}]`;
    return base;
  }

  // cleanStack turns goja's stack text into Node's: four-space "at" lines,
  // no program counters, and no frames of the prelude.
  function cleanStack(stack) {
    const lines = String(stack).split('\n');
    const out = [];
    for (let line of lines) {
      if (line.startsWith('\tat ')) {
        // The prelude's frames and the host's Go functions are not the
        // guest's business.
        if (line.includes('wasmeval:prelude/') || /^\tat github\.com\/wasmeval\/.* \(native\)$/.test(line)) continue;
        line = '    at ' + line.slice(4).replace(/:(\d+):(\d+)\(\d+\)/g, ':$1:$2');
      }
      out.push(line);
    }
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    return out.join('\n');
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
      return Error.prototype.toString.call(err);
    } catch (e) {
      return '[object Error]';
    }
  }

  function formatError(err, constructor, tag, ctx, keys) {
    let stack = getStackString(err);
    if (!ctx.showHidden && keys.length !== 0) {
      for (const name of ['name', 'message', 'stack']) {
        const index = keys.indexOf(name);
        if (index !== -1 && stack.includes(err[name])) keys.splice(index, 1);
      }
    }
    if ('cause' in err && (keys.length === 0 || !keys.includes('cause'))) keys.push('cause');
    if (Array.isArray(err.errors) && (keys.length === 0 || !keys.includes('errors'))) keys.push('errors');
    let pos = (err.message && stack.indexOf(err.message)) || -1;
    if (pos !== -1) pos += err.message.length;
    const stackStart = stack.indexOf('\n    at', pos);
    if (stackStart === -1) {
      stack = `[${stack}]`;
    }
    if (ctx.indentationLvl !== 0) {
      stack = stack.replaceAll('\n', `\n${' '.repeat(ctx.indentationLvl)}`);
    }
    return stack;
  }

  function formatArray(ctx, value, recurseTimes) {
    const valLen = value.length;
    const len = Math.min(Math.max(0, ctx.maxArrayLength), valLen);
    const remaining = valLen - len;
    const output = [];
    for (let i = 0; i < len; i++) {
      if (!hasOwn(value, i)) return formatSpecialArray(ctx, value, recurseTimes, len, output, i);
      output.push(formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (remaining > 0) output.push(remainingText(remaining));
    return output;
  }

  function remainingText(remaining) {
    return `... ${remaining} more item${remaining > 1 ? 's' : ''}`;
  }

  function formatSpecialArray(ctx, value, recurseTimes, maxLength, output, i) {
    const keys = Object.keys(value);
    let index = i;
    for (; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i];
      const tmp = +key;
      if (tmp > 2 ** 32 - 2) break;
      if (`${index}` !== key) {
        if (!numberRegExp.test(key)) break;
        const emptyItems = tmp - index;
        output.push(`<${emptyItems} empty item${emptyItems > 1 ? 's' : ''}>`);
        index = tmp;
        if (output.length === maxLength) break;
      }
      output.push(formatProperty(ctx, value, recurseTimes, key, kArrayType));
      index++;
    }
    const remaining = value.length - index;
    if (output.length !== maxLength) {
      if (remaining > 0) output.push(`<${remaining} empty item${remaining > 1 ? 's' : ''}>`);
    } else if (remaining > 0) {
      output.push(remainingText(remaining));
    }
    return output;
  }

  function formatTypedArray(ctx, value) {
    const length = value.length;
    const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = new Array(maxLength);
    for (let i = 0; i < maxLength; ++i) {
      output[i] = typeof value[i] === 'bigint' ? formatBigInt(value[i]) : formatNumber(value[i]);
    }
    if (remaining > 0) output[maxLength] = remainingText(remaining);
    return output;
  }

  function formatArrayBuffer(ctx, value) {
    const buffer = new Uint8Array(value);
    const shown = Math.min(ctx.maxArrayLength, buffer.length);
    let str = '';
    for (let i = 0; i < shown; i++) {
      str += (i === 0 ? '' : ' ') + buffer[i].toString(16).padStart(2, '0');
    }
    const remaining = buffer.length - ctx.maxArrayLength;
    if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? 's' : ''}`;
    return [`[Uint8Contents]: <${str}>`];
  }

  function formatSet(ctx, value, recurseTimes) {
    const length = setSize.call(value);
    const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    let i = 0;
    for (const v of Set.prototype.values.call(value)) {
      if (i >= maxLength) break;
      output.push(formatValue(ctx, v, recurseTimes));
      i++;
    }
    if (remaining > 0) output.push(remainingText(remaining));
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatMap(ctx, value, recurseTimes) {
    const length = mapSize.call(value);
    const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    let i = 0;
    for (const [k, v] of Map.prototype.entries.call(value)) {
      if (i >= maxLength) break;
      output.push(`${formatValue(ctx, k, recurseTimes)} => ${formatValue(ctx, v, recurseTimes)}`);
      i++;
    }
    if (remaining > 0) output.push(remainingText(remaining));
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatPromise(ctx, value, recurseTimes) {
    const [state, result] = host.promiseState(value);
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
    const desc = Object.getOwnPropertyDescriptor(value, key) || { value: value[key], enumerable: true };
    if (desc.value !== undefined) {
      const diff = (ctx.compact !== true || type !== kObjectType) ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, desc.value, recurseTimes);
      if (diff === 3 && ctx.breakLength < str.length) {
        extra = `\n${' '.repeat(ctx.indentationLvl)}`;
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
      name = `[${Symbol.prototype.toString.call(key)}]`;
    } else if (key === '__proto__') {
      name = "['__proto__']";
    } else if (desc.enumerable === false) {
      name = `[${key}]`;
    } else if (keyStrRegExp.test(key)) {
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
    return base === '' || !base.includes('\n');
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let i = 0;
    let outputLength = output.length;
    if (ctx.maxArrayLength < output.length) outputLength--;
    const separatorSpace = 2;
    const dataLen = new Array(outputLength);
    for (; i < outputLength; i++) {
      const len = output[i].length;
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
        (totalLength / actualMax > 5 || maxLength <= 6)) {
      const approxCharHeights = 2.5;
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(
        Math.round(Math.sqrt(approxCharHeights * biasedMax * outputLength) / biasedMax),
        Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
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
        maxLineLength.push(lineLength + separatorSpace);
      }
      let order = 'padStart';
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') {
            order = 'padEnd';
            break;
          }
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const padding = maxLineLength[j - i] + output[j].length - dataLen[j];
          str += `${output[j]}, `[order](padding, ' ');
        }
        if (order === 'padStart') {
          const padding = maxLineLength[j - i] + output[j].length - dataLen[j] - separatorSpace;
          str += output[j].padStart(padding, ' ');
        } else {
          str += output[j];
        }
        tmp.push(str);
      }
      if (ctx.maxArrayLength < output.length) tmp.push(output[outputLength]);
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
            const joinedOutput = output.join(', ');
            if (!joinedOutput.includes('\n')) {
              return `${base ? `${base} ` : ''}${braces[0]} ${joinedOutput} ${braces[1]}`;
            }
          }
        }
      }
      const indentation = `\n${' '.repeat(ctx.indentationLvl)}`;
      return `${base ? `${base} ` : ''}${braces[0]}${indentation}  ${output.join(`,${indentation}  `)}${indentation}${braces[1]}`;
    }
    if (isBelowBreakLength(ctx, output, 0, base)) {
      return `${braces[0]}${base ? ` ${base}` : ''} ${output.join(', ')} ${braces[1]}`;
    }
    const indentation = `\n${' '.repeat(ctx.indentationLvl)}`;
    const ln = base === '' && braces[0].length === 1 ? ' ' : `${base ? ` ${base}` : ''}\n${indentation}  `;
    return `${braces[0]}${ln}${output.join(`,\n${indentation}  `)} ${braces[1]}`;
  }

  // primitiveCtx is all that formatPrimitive reads, for the common case of
  // a primitive shown with the default options.
  const primitiveCtx = Object.freeze({
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
      for (const key of Object.keys(opts)) {
        if (hasOwn(defaultOptions, key)) ctx[key] = opts[key];
      }
    }
    if (ctx.depth === Infinity) ctx.depth = null;
    if (ctx.maxArrayLength === null) ctx.maxArrayLength = Infinity;
    if (ctx.maxStringLength === null) ctx.maxStringLength = Infinity;
    return formatValue(ctx, value, 0);
  }
  inspect.custom = customInspectSymbol;
  inspect.defaultOptions = defaultOptions;

  function hasBuiltInToString(value) {
    let proto = value;
    while (proto !== null && proto !== undefined) {
      const desc = Object.getOwnPropertyDescriptor(proto, 'toString');
      if (desc !== undefined) {
        return desc.value === Object.prototype.toString || desc.value === Error.prototype.toString ||
          desc.value === Array.prototype.toString || desc.value === Date.prototype.toString ||
          desc.value === RegExp.prototype.toString || desc.value === Function.prototype.toString ||
          desc.value === Number.prototype.toString || desc.value === String.prototype.toString ||
          desc.value === Boolean.prototype.toString;
      }
      proto = Object.getPrototypeOf(proto);
    }
    return true;
  }

  function tryStringify(arg) {
    try {
      return JSON.stringify(arg);
    } catch (err) {
      if (err instanceof TypeError && /circular/i.test(err.message)) return '[Circular]';
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
        if (first.charCodeAt(i) !== 37) continue; // '%'
        const nextChar = first.charCodeAt(++i);
        if (a + 1 !== args.length) {
          switch (nextChar) {
            case 115: { // 's'
              const arg = args[++a];
              if (typeof arg === 'number') tempStr = formatNumber(arg);
              else if (typeof arg === 'bigint') tempStr = formatBigInt(arg);
              else if (typeof arg !== 'object' || arg === null || !hasBuiltInToString(arg)) tempStr = String(arg);
              else tempStr = inspect(arg, { depth: 0, colors: false, compact: 3 });
              break;
            }
            case 106: tempStr = tryStringify(args[++a]); break; // 'j'
            case 100: { // 'd'
              const n = args[++a];
              if (typeof n === 'bigint') tempStr = formatBigInt(n);
              else if (typeof n === 'symbol') tempStr = 'NaN';
              else tempStr = formatNumber(Number(n));
              break;
            }
            case 79: tempStr = inspect(args[++a]); break; // 'O'
            case 111: tempStr = inspect(args[++a], { showHidden: true, showProxy: true, depth: 4 }); break; // 'o'
            case 105: { // 'i'
              const n = args[++a];
              if (typeof n === 'bigint') tempStr = formatBigInt(n);
              else if (typeof n === 'symbol') tempStr = 'NaN';
              else tempStr = formatNumber(Number.parseInt(n));
              break;
            }
            case 102: { // 'f'
              const n = args[++a];
              tempStr = typeof n === 'symbol' ? 'NaN' : formatNumber(Number.parseFloat(n));
              break;
            }
            case 99: a += 1; tempStr = ''; break; // 'c'
            case 37: str += first.slice(lastPos, i); lastPos = i + 1; continue; // '%'
            default: continue;
          }
          if (lastPos !== i - 1) str += first.slice(lastPos, i - 1);
          str += tempStr;
          lastPos = i + 1;
        } else if (nextChar === 37) {
          str += first.slice(lastPos, i);
          lastPos = i + 1;
        }
      }
      if (lastPos !== 0) {
        a++;
        join = ' ';
        if (lastPos < first.length) str += first.slice(lastPos);
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
